"""Capture the pydantic-ai agent traced by Future AGI's traceAI (``traceai-pydantic-ai``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-pydantic-ai-traceai
    /tmp/cap-pydantic-ai-traceai/bin/pip install 'pydantic-ai-slim[openai]' \
        traceai-pydantic-ai fi-instrumentation-otel opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-pydantic-ai-traceai/bin/python \
        tests/golden/capture/pydantic_ai_traceai.py [scenario ...]'

Captured with traceai-pydantic-ai 0.1.0, fi-instrumentation-otel 1.1.0, pydantic-ai-slim
2.68.0, openai 3.57.0, opentelemetry-sdk / -api / -exporter-otlp-proto-http /
-exporter-otlp-proto-common / -proto 1.45.2, opentelemetry-instrumentation 0.66b2, protobuf
7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/pydantic-ai-traceai/``.

The agent is that of ``pydantic_ai_openinference.py``: a real ``pydantic_ai.Agent`` named
``music_store_support`` (the system prompt as ``instructions``) with the store's five
``@agent.tool_plain`` tools and ``OpenAIChatModel`` over ``OpenAIProvider(base_url=loopback,
api_key=dummy)`` (real ``openai.AsyncOpenAI`` client) against the scripted Chat Completions
loopback server (``scripted_model.ChatCompletions``). The refused refund raises pydantic-ai's
``ToolFailed`` with the store's message (reported to the model, the run goes on).
``multi_turn`` passes ``message_history=result.all_messages()`` and pydantic-ai's
``conversation_id`` on the first run. pydantic-ai's own instrumentation is NOT switched on
(no ``Instrumentation()`` capability): traceAI's README instruments with
``PydanticAIInstrumentor().instrument()`` alone (its ``use_builtin=True`` option would swap in
pydantic-ai's own spans instead of traceAI's, which is the ``pydantic-ai`` folder).

Instrumentation, as traceAI's README shows and as ``smolagents_traceai.py`` sets traceAI up:
``fi_instrumentation.register(project_type=ProjectType.OBSERVE, project_name=...)`` (traceAI's
own ``TracerProvider``, its default ``BatchSpanProcessor`` and ``HTTPSpanExporter``) and
``PydanticAIInstrumentor().instrument(tracer_provider=..., skip_dep_check=True)`` (OTel's
``BaseInstrumentor`` switch: its check asks for the ``pydantic-ai`` distribution, of which PyPI
has no 2.68.0, and otherwise instruments nothing with only ``pydantic-ai-slim``).
traceai-pydantic-ai 0.1.0 has no content switches (no ``TraceConfig`` parameter): the prompt and
the output are always recorded. It wraps ``Agent.run`` / ``run_sync`` / ``run_stream`` only. No
key: ``FI_API_KEY`` / ``FI_SECRET_KEY`` are unset and ``FI_BASE_URL`` points at the same
loopback server, whose ``received_otlp.receiver`` route answers traceAI's fixed path
``/tracer/v1/traces`` (OTLP/HTTP protobuf, as sent). ``force_flush`` after every user turn; the
``.jsonl`` keeps its export requests as received. Session id:
``fi_instrumentation.using_session(session id)`` around each turn of ``multi_turn`` (traceAI's
documented context attribute). Every ``OTEL_*`` / ``FI_*`` / ``OPENAI_*`` variable is removed
first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "FI_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "pydantic-ai-traceai"
PROJECT = "music-store-support-pydantic-ai-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceai-pydantic-ai",
    "fi-instrumentation-otel",
    "pydantic-ai-slim",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


MODEL = scripted_model.ChatCompletions()
SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: MODEL,
        TRACEAI_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from fi_instrumentation import register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from traceai_pydantic_ai import PydanticAIInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
# skip_dep_check: its dependency check asks for the ``pydantic-ai`` distribution, but only
# ``pydantic-ai-slim`` is installed (the ``pydantic-ai`` meta package has no 2.68.0 release)
PydanticAIInstrumentor().instrument(tracer_provider=PROVIDER, skip_dep_check=True)

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.exceptions import ToolFailed  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

_script = common.active_script


def _call(tool: str, **args: Any) -> dict[str, Any]:
    try:
        return dict(_script().call(tool, **args))
    except common.StoreError as exc:
        raise ToolFailed(str(exc)) from exc


def make_agent() -> Agent[None, str]:
    provider = OpenAIProvider(base_url=f"{SERVER.url}/v1", api_key="sk-offline")
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
    "pydantic-ai Agent (OpenAIChatModel over the scripted Chat Completions server, no "
    "pydantic-ai Instrumentation capability) traced by Future AGI's traceAI: "
    "fi_instrumentation.register(project_type=OBSERVE) (its own TracerProvider, "
    "BatchSpanProcessor and HTTPSpanExporter) and traceai_pydantic_ai.PydanticAIInstrumentor "
    "(wraps Agent.run only; no content switches, prompt and output always recorded); exported "
    "over OTLP/HTTP protobuf to a loopback receiver at FI_BASE_URL + /tracer/v1/traces, no key; "
    "force_flush after every turn. Refund raises ToolFailed (reported to the model). "
    "multi_turn: message_history + conversation_id and fi_instrumentation.using_session(session "
    "id) around each turn; see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    session = scenario.session_id
    assert PROVIDER.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    history: list[Any] | None = None
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        scope = using_session(session) if session else contextlib.nullcontext()
        with scope:
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
        assert PROVIDER.force_flush(), "traceAI's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    last = MODEL.requests[-1].get("messages") if MODEL.requests else []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        run_errors=run_errors,
        extra={
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
