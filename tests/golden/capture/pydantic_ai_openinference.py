"""Capture pydantic-ai through openinference-instrumentation-pydantic-ai.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-pai-oi
    /tmp/cap-pai-oi/bin/pip install 'pydantic-ai-slim[openai]' \
        openinference-instrumentation-pydantic-ai opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-pai-oi/bin/python tests/golden/capture/pydantic_ai_openinference.py [scenario ...]

Captured with pydantic-ai-slim 2.68.0, openai 3.57.0,
openinference-instrumentation-pydantic-ai 0.1.30, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2.
Writes ``tests/golden/traces/pydantic-ai-openinference/``.

Real ``pydantic_ai.Agent`` (name ``music_store_support``, the system prompt as
``instructions``, ``capabilities=[Instrumentation()]``: pydantic-ai's own OTel spans; the
README's ``Agent(..., instrument=...)`` argument no longer exists in 2.68) with
``@agent.tool_plain`` tools and ``OpenAIChatModel`` over ``OpenAIProvider(base_url=loopback,
api_key=dummy)`` (real ``openai.AsyncOpenAI`` client) against a loopback Chat Completions
server in this process that scripts the model's answers. The instrumentation is the
documented one: ``OpenInferenceSpanProcessor()`` added to our TracerProvider before the
exporting processor; it rewrites pydantic-ai's spans at ``on_end`` (adds OpenInference
attributes) before our exporter sees them. The refused refund raises pydantic-ai's
``ToolFailed`` (its documented idiom for "report a terminal tool failure to the model";
``ModelRetry`` would make the model retry), with the store's message. ``multi_turn`` passes
``message_history=result.all_messages()``; its session id is pydantic-ai's
``conversation_id`` (given on the first run, inherited from the history afterwards), which
pydantic-ai records as ``gen_ai.conversation.id`` and the processor maps to ``session.id``;
the turns also run inside OpenInference's ``using_session()``, which does not reach these
spans (the processor reads no context).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import scripted_model  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

RESOURCE = Resource.create(
    {
        "service.name": "music-store-support-pydantic-ai",
        "deployment.environment.name": "acceptance-test",
    }
)
PROVIDER = TracerProvider(resource=RESOURCE)
RECORDER = common.BatchRecorder()
PROVIDER.add_span_processor(OpenInferenceSpanProcessor())  # first: rewrites spans at on_end
PROVIDER.add_span_processor(
    BatchSpanProcessor(
        RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
    )
)
trace.set_tracer_provider(PROVIDER)

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import Instrumentation  # noqa: E402
from pydantic_ai.exceptions import ToolFailed  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

FOLDER = common.TRACES / "pydantic-ai-openinference"
PACKAGES = (
    "pydantic-ai-slim",
    "openai",
    "openinference-instrumentation-pydantic-ai",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
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
        model,
        name=common.AGENT_NAME,
        instructions=common.SYSTEM_PROMPT,
        capabilities=[Instrumentation()],
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


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    history: list[Any] | None = None
    session = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
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
        PROVIDER.force_flush()
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
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = "pydantic-ai Agent(instrument=True) + OpenInferenceSpanProcessor; see NOTES.md."


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
