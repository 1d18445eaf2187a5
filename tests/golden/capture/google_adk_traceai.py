"""Capture Google ADK traced by Future AGI's traceAI (``traceai-google-adk``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-google-adk-traceai
    /tmp/cap-google-adk-traceai/bin/pip install traceai-google-adk google-adk \
        fi-instrumentation-otel opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-google-adk-traceai/bin/python \
        tests/golden/capture/google_adk_traceai.py [scenario ...]'

Captured with traceAI-google-adk 0.1.5, fi-instrumentation-otel 1.1.0, google-adk 2.1.0,
google-genai 1.75.0 (traceAI-google-adk requires google-genai < 2, so pip resolves
google-adk 2.1.0, not the 2.13.0 of ``adk.py``), opentelemetry-sdk / -api /
-exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto 1.41.1,
opentelemetry-instrumentation 0.62b1, protobuf 6.33.6, Python 3.12.1, in a network namespace
with only loopback up. Writes ``tests/golden/traces/google-adk-traceai/``.

The agent is ``adk.py``'s: real ``LlmAgent`` + ``Runner`` + ``InMemorySessionService`` +
``FunctionTool``s (plain functions); only the model is scripted (a ``BaseLlm`` subclass
answering from the scenario script, as ADK takes a model object). A refused refund is
returned the ADK way, as ``{"status": "error", "error_message": ...}``.

Instrumentation, as traceAI's README shows (and as ``openai_agents_traceai.py``):
``fi_instrumentation.register(project_type=ProjectType.OBSERVE, project_name=...)``
(traceAI's own ``TracerProvider``, its default ``BatchSpanProcessor`` and
``HTTPSpanExporter``) and ``GoogleADKInstrumentor().instrument(tracer_provider=...,
config=TraceConfig(...))`` with every content switch on (the defaults). ADK's own tracer is
left at its defaults (no ``ADK_*`` / ``OTEL_INSTRUMENTATION_GENAI_*`` variable); ``register``
does not set the global provider, so ADK's native spans are only those the instrumentor
re-routes. No key: ``FI_API_KEY`` / ``FI_SECRET_KEY`` are unset and ``FI_BASE_URL`` points
at a loopback server in this process, whose ``received_otlp.receiver`` route answers
traceAI's fixed path ``/tracer/v1/traces`` (OTLP/HTTP protobuf, as sent). ``force_flush``
on the provider after every user turn; the ``.jsonl`` keeps its export requests as received.
Session id: ``Runner.run_async(session_id=...)`` (the instrumentation's own reading) and
``fi_instrumentation.using_session(session id)`` around each turn of ``multi_turn``;
one-shot scenarios use a random ``adk-<scenario>-<hex>`` ADK session, labelled ``null``.
Every ``OTEL_*`` / ``FI_*`` / ``GOOGLE_*`` variable is removed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "FI_", "GOOGLE_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "google-adk-traceai"
PROJECT = "music-store-support-google-adk-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceAI-google-adk",
    "fi-instrumentation-otel",
    "google-adk",
    "google-genai",
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


SERVER = scripted_model.LoopbackServer({TRACEAI_PATH: received_otlp.receiver(_keep_export)})
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from fi_instrumentation import TraceConfig, register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from traceai_google_adk import GoogleADKInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
GoogleADKInstrumentor().instrument(
    tracer_provider=PROVIDER,
    config=TraceConfig(
        hide_inputs=False,
        hide_outputs=False,
        hide_input_messages=False,
        hide_output_messages=False,
        hide_input_text=False,
        hide_output_text=False,
    ),
)

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

_script = common.active_script


class ScriptedModel(BaseLlm):
    """Answers each request with the scenario script's next response."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        calls, final = _script().next_response()
        if final is not None:
            parts = [types.Part(text=final)]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
                for call_id, name, args in calls
            ]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=50 + 10 * len(llm_request.contents),
                candidates_token_count=12,
                total_token_count=62 + 10 * len(llm_request.contents),
            ),
            finish_reason=types.FinishReason.STOP,
        )


def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    try:
        return dict(
            _script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)
        )
    except common.StoreError as exc:  # ADK's idiom: report the failure in the result
        return {"status": "error", "error_message": str(exc)}


NOTES = (
    "Google ADK LlmAgent + scripted BaseLlm traced by Future AGI's traceAI: "
    "fi_instrumentation.register(project_type=OBSERVE) (its own TracerProvider, "
    "BatchSpanProcessor and HTTPSpanExporter) and traceai_google_adk.GoogleADKInstrumentor, "
    "every TraceConfig content switch on; exported over OTLP/HTTP protobuf to a loopback "
    "receiver at FI_BASE_URL + /tracer/v1/traces, no key; force_flush after every turn. "
    "ADK session id passed to run_async; multi_turn also in "
    "fi_instrumentation.using_session(session id); see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "adk")
    agent = LlmAgent(
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        model=ScriptedModel(model=common.MODEL_NAME),
        instruction=common.SYSTEM_PROMPT,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name="music_store", agent=agent, session_service=sessions)
    session_id = scenario.session_id or f"adk-{name}-{uuid.uuid4().hex[:8]}"
    await sessions.create_session(
        app_name="music_store", user_id="customer-17", session_id=session_id
    )
    assert PROVIDER.force_flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        final: str | None = None
        scope = (
            using_session(scenario.session_id) if scenario.session_id else contextlib.nullcontext()
        )
        with scope:
            async for event in runner.run_async(
                user_id="customer-17",
                session_id=session_id,
                new_message=types.Content(role="user", parts=[types.Part(text=text)]),
            ):
                if event.is_final_response() and event.content and event.content.parts:
                    final = "".join(part.text or "" for part in event.content.parts) or final
        finals.append(final)
        assert PROVIDER.force_flush(), "traceAI's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
        extra={"adk_session_id": session_id},
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
