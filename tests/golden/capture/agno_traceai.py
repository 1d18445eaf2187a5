"""Capture Agno traced by Future AGI's traceAI (``traceai-agno``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agno-traceai
    /tmp/cap-agno-traceai/bin/pip install agno openai "traceai-agno[agno]" \
        fi-instrumentation-otel opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-agno-traceai/bin/python \
        tests/golden/capture/agno_traceai.py [scenario ...]'

Captured with traceai-agno 0.1.0, fi-instrumentation-otel 1.1.0, agno 3.1.10, openai 3.57.0,
openinference-instrumentation-agno 1.0.15 (pulled in by the ``agno`` extra of traceai-agno),
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto
1.45.2, opentelemetry-instrumentation 0.66b2, protobuf 7.36.2, Python 3.12.1, in a network
namespace with only loopback up. Writes ``tests/golden/traces/agno-traceai/``.

traceai-agno 0.1.0 has no instrumentor of its own and no ``AgnoInstrumentor`` class: its
documented entry point, ``configure_agno_tracing(tracer_provider=...)`` (an
``AgnoInstrumentorWrapper``), sets the given provider as the global OTel provider and calls
``openinference.instrumentation.agno.AgnoInstrumentor().instrument()`` (no arguments, so
OpenInference's default ``TraceConfig``: every content switch on). Its ``_attributes``
helpers (``agent.name``, ``gen_ai.tool.*``, ``agno.*``) are applied to no span. So the spans
are OpenInference's Agno spans, exported through traceAI's own provider.

The agent and tools are those of ``agno_openinference.py``: a real ``agno.agent.Agent``
(name ``music_store_support``, the system prompt as ``instructions``) with plain Python
functions as tools and Agno's ``OpenAIChat`` (real ``openai.AsyncOpenAI`` client) against the
scripted Chat Completions loopback server; one ``await agent.arun(text)`` per turn (the calls
of one response run concurrently). The refused refund raises inside the tool; Agno catches it
and sends the exception text to the model. ``multi_turn``: one Agent with an ``InMemoryDb``
and ``add_history_to_context=True`` (Agno's chat memory) and ``arun(text,
session_id=<session id>)`` every turn; the instrumentation writes ``session.id`` itself.

Instrumentation, as traceAI's README shows: ``fi_instrumentation.register(project_type=
ProjectType.OBSERVE, project_name=...)`` (traceAI's own ``TracerProvider``, its default
``BatchSpanProcessor`` and ``HTTPSpanExporter``) then ``configure_agno_tracing(
tracer_provider=provider)`` before Agno is imported. No key: ``FI_API_KEY`` /
``FI_SECRET_KEY`` are unset and ``FI_BASE_URL`` points at the loopback server, whose
``received_otlp.receiver`` route answers traceAI's fixed path ``/tracer/v1/traces``
(OTLP/HTTP protobuf, kept as sent). ``force_flush`` after every user turn. Every ``OTEL_*``
/ ``FI_*`` / ``OPENAI_*`` variable is removed first; Agno's telemetry is off
(``AGNO_TELEMETRY=false``, ``telemetry=False``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "FI_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver
AGNO_ENV = {"AGNO_TELEMETRY": "false"}  # Agno's anonymous run telemetry (os-api.agno.com)
os.environ.update(AGNO_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "agno-traceai"
PROJECT = "music-store-support-agno-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceai-agno",
    "fi-instrumentation-otel",
    "agno",
    "openai",
    "openinference-instrumentation-agno",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
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


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: MODEL,
        TRACEAI_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})
BASE_URL = f"{SERVER.url}/v1"

from fi_instrumentation import register  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from traceai_agno import configure_agno_tracing  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
configure_agno_tracing(tracer_provider=PROVIDER)

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402

_script = common.active_script


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
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_agent(session_id: str | None) -> Agent:
    model = OpenAIChat(id=common.MODEL_NAME, api_key="sk-offline", base_url=BASE_URL, max_retries=0)
    memory: dict[str, Any] = {}
    if session_id is not None:  # Agno's chat memory: a db, history on (the id goes on arun)
        db = InMemoryDb()  # type: ignore[no-untyped-call]
        memory = {"db": db, "add_history_to_context": True}
    return Agent(
        name=common.AGENT_NAME,
        model=model,
        instructions=common.SYSTEM_PROMPT,
        description="Customer support of the Tunes & Co music store.",
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        telemetry=False,
        **memory,
    )


NOTES = (
    "Agno Agent + OpenAIChat (scripted Chat Completions server) traced by Future AGI's "
    "traceAI: fi_instrumentation.register(project_type=OBSERVE) (its own TracerProvider, "
    "BatchSpanProcessor and HTTPSpanExporter) and traceai_agno.configure_agno_tracing("
    "tracer_provider=...), which runs openinference-instrumentation-agno's AgnoInstrumentor "
    "(default TraceConfig, content on); exported over OTLP/HTTP protobuf to a loopback "
    "receiver at FI_BASE_URL + /tracer/v1/traces, no key; force_flush after every turn. "
    "multi_turn: InMemoryDb + add_history_to_context, arun(session_id=...); see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent(scenario.session_id)
    assert PROVIDER.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    session = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        if session is None:
            output = await agent.arun(text)
        else:
            output = await agent.arun(text, session_id=session)
        if output.status is not None and str(output.status.value) != "COMPLETED":
            run_errors.append(f"turn {turn}: run status {output.status}")
        finals.append(output.content if isinstance(output.content, str) else None)
        assert PROVIDER.force_flush(), "traceAI's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    model = agent.model
    if isinstance(model, OpenAIChat) and model.async_client is not None:
        await model.async_client.close()  # inside this event loop, not at garbage collection
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
            "telemetry_env": AGNO_ENV,
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
