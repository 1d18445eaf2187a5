"""Capture pydantic-ai with its own OpenTelemetry instrumentation, data format version 6.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-pydantic-ai-otel-v6
    /tmp/cap-pydantic-ai-otel-v6/bin/pip install 'pydantic-ai-slim[openai]' opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-pydantic-ai-otel-v6/bin/python \
        tests/golden/capture/pydantic_ai_otel_v6.py [scenario ...]'

Captured with pydantic-ai-slim 2.68.0 (the newest on PyPI; pydantic-graph 2.68.0,
genai-prices 0.2.3, logfire-api 5.6.0: the no-op shim, no Logfire), openai 3.57.0 (on
httpx2 2.16.2), pydantic 2.14.4, opentelemetry-sdk / -api / -exporter-otlp-proto-common /
-proto 1.45.2, protobuf 7.36.2, Python 3.12.1, under ``unshare -rn`` (only loopback up).
Writes ``tests/golden/traces/pydantic-ai-otel-v6/``.

Meant as "pydantic-ai's instrumentation with ``event_mode='logs'``" (the messages as OTLP
log records): pydantic-ai 2.68 has no log/event mode any more. ``InstrumentationSettings``
takes no ``event_mode`` and no ``logger_provider`` (``TypeError: ... unexpected keyword
argument 'event_mode'``) and nothing in the package emits a log record; every data format
it still has (versions 2-6) writes the messages as span attributes. So this captures its
newest data format instead, ``version=6`` (not the default, 5: tool results in a message
with ``role: "tool"`` instead of ``"user"``, retry feedback that answers no call as
``"system"``). A global SDK ``LoggerProvider`` exporting to ``common_logs.LogBatchRecorder``
is still installed, to show that no log record is emitted (``log_records`` in
``expected.json``: 0; no ``*.logs.*`` files are written).

The agent is the one of ``pydantic_ai_openinference.py``: a real ``pydantic_ai.Agent``
(name ``music_store_support``, ``common.SYSTEM_PROMPT`` as ``instructions``) with the five
store tools as ``@agent.tool_plain`` (Google-style docstrings give the parameter
descriptions) and ``OpenAIChatModel`` over ``OpenAIProvider(base_url=loopback,
api_key=dummy)`` (the real ``openai.AsyncOpenAI`` client) against a loopback Chat
Completions server in this process that scripts the answers
(``scripted_model.ChatCompletions``). The refused refund raises pydantic-ai's
``ToolFailed`` (its documented "terminal tool failure, tell the model" idiom), with the
store's message. ``multi_turn`` passes ``conversation_id=<session>`` on the first run and
``message_history=result.all_messages()`` afterwards (the conversation id is inherited from
the history): pydantic-ai records it as ``gen_ai.conversation.id``.

Instrumentation is pydantic-ai's own, configured as its docs show for the plain OTel SDK
(no Logfire): ``Agent.instrument_all(InstrumentationSettings(tracer_provider=PROVIDER,
include_content=True, version=6))``, the SDK TracerProvider passed in (and set globally).
Export: a ``BatchSpanProcessor`` to ``common.BatchRecorder``, flushed after each user
turn; ``common.write_scenario`` writes the files.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry._logs import set_logger_provider  # noqa: E402

SERVICE = "music-store-support-pydantic-ai"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
set_logger_provider(LOG_PROVIDER)  # any log record pydantic-ai emitted would land here

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.exceptions import ToolFailed  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

INSTRUMENTATION_VERSION: Final = 6
Agent.instrument_all(
    InstrumentationSettings(
        tracer_provider=PROVIDER, include_content=True, version=INSTRUMENTATION_VERSION
    )
)

FOLDER = common.TRACES / "pydantic-ai-otel-v6"
PACKAGES = (
    "pydantic-ai-slim",
    "pydantic-graph",
    "pydantic",
    "genai-prices",
    "logfire-api",
    "openai",
    "httpx2",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


def _call(tool: str, **args: Any) -> dict[str, Any]:
    try:
        return dict(_script().call(tool, **args))
    except common.StoreError as exc:
        raise ToolFailed(str(exc)) from exc


def make_agent() -> Agent[None, str]:
    provider = OpenAIProvider(base_url=BASE_URL, api_key="sk-offline")
    model = OpenAIChatModel(common.MODEL_NAME, provider=provider)
    agent: Agent[None, str] = Agent(
        model, name=common.AGENT_NAME, instructions=common.SYSTEM_PROMPT
    )

    @agent.tool_plain
    def lookup_track(track_name: str) -> dict[str, Any]:
        """Look up a track in the catalogue by its exact name.

        Args:
            track_name: The exact track name.
        """
        return _call("lookup_track", track_name=track_name)

    @agent.tool_plain
    def lookup_album(album_title: str) -> dict[str, Any]:
        """Look up an album by its title.

        Args:
            album_title: The album title.
        """
        return _call("lookup_album", album_title=album_title)

    @agent.tool_plain
    def lookup_artist(artist_name: str) -> dict[str, Any]:
        """Look up an artist and the albums the store sells by them.

        Args:
            artist_name: The artist's name.
        """
        return _call("lookup_artist", artist_name=artist_name)

    @agent.tool_plain
    def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
        """Fetch an invoice of a customer (lines reference track ids).

        Args:
            customer_id: The customer's id.
            invoice_id: The invoice id.
        """
        return _call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id)

    @agent.tool_plain
    def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
        """Refund one purchased track of an invoice.

        Args:
            invoice_id: The invoice id.
            track_id: The track to refund.
            reason: Why the customer wants the refund.
        """
        return _call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)

    return agent


NOTES = (
    "pydantic-ai's own instrumentation, Agent.instrument_all(InstrumentationSettings("
    "tracer_provider=..., include_content=True, version=6)); pydantic-ai 2.68 has no "
    "event_mode='logs' (no log records: log_records 0); see NOTES.md."
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    history: list[Any] | None = None
    session = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        try:
            if history is None:
                result = await agent.run(text, conversation_id=session)
            else:
                result = await agent.run(text, message_history=history)
        except Exception as exc:
            run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
            finals.append(None)
        else:
            finals.append(result.output)
            if session:
                history = result.all_messages()
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    last = MODEL.requests[-1].get("messages") if MODEL.requests else []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        run_errors=run_errors,
        extra={
            "instrumentation_version": INSTRUMENTATION_VERSION,
            "log_records": len(LOG_RECORDER.records),
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
        },
    )
    common.check_labels(capture)
    if LOG_RECORDER.records:
        raise SystemExit(f"{name}: {len(LOG_RECORDER.records)} log records; write them too")
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
