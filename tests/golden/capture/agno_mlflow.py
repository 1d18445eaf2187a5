"""Capture an Agno ``Agent`` traced by ``mlflow.agno.autolog()`` over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agno-mlflow
    /tmp/cap-agno-mlflow/bin/pip install agno mlflow openai opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-http
    /tmp/cap-agno-mlflow/bin/pip install opentelemetry-exporter-otlp \
        openinference-instrumentation-agno
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-agno-mlflow/bin/python \
        tests/golden/capture/agno_mlflow.py [scenario ...]'

Captured with agno 3.1.10, mlflow / mlflow-skinny / mlflow-tracing 3.17.2,
openinference-instrumentation-agno 1.0.15, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp / -exporter-otlp-proto-common / -exporter-otlp-proto-http / -proto 1.45.2,
protobuf 7.36.2 (exact list in each ``*.expected.json``), Python 3.12.1, in a network namespace
with only loopback up. Writes ``tests/golden/traces/agno-mlflow/``.

The agent and tools are those of ``agno_openlit.py``: a real ``agno.agent.Agent`` (name
``music_store_support``, the system prompt as ``instructions``) with plain Python functions as
tools and Agno's ``OpenAIChat`` (the real ``openai.AsyncOpenAI`` client) against the scripted
Chat Completions route of a loopback server in this process (``scripted_model.ChatCompletions``);
one ``await agent.arun(text)`` per turn (the calls of one response run concurrently). The
refused refund raises inside the tool; Agno catches it and sends the exception text to the
model. Session: Agno's own, ``arun(text, session_id=<the scenario's>)`` with ``db=InMemoryDb()``
and ``add_history_to_context=True`` (Agno's chat memory) in ``multi_turn``; the one-shot
scenarios pass none (Agno makes one up).

Instrumentation as MLflow's Agno page shows: ``mlflow.agno.autolog()`` with its defaults and no
other autolog (MLflow always records span inputs and outputs: there is no content switch to turn
on). For Agno >= 2 the autolog is OpenInference's ``AgnoInstrumentor`` run on MLflow's own tracers
(``mlflow/agno/autolog_v2.py``); it raises until ``openinference-instrumentation-agno`` and
``opentelemetry-exporter-otlp`` are installed, as its error message says (second pip line).
Export exactly as ``smolagents_mlflow.py``: MLflow's own tracer provider,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the ``received_otlp.receiver`` route of the loopback
server and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so MLflow installs only its
``OtelSpanProcessor`` (no tracking-store processor, no MLflow server; ``MLFLOW_TRACKING_URI`` is a
SQLite file under /tmp that tracing never writes). MLflow's provider is force-flushed after every
user turn, so each turn arrives as its own export. ``MLFLOW_DISABLE_TELEMETRY`` / ``DO_NOT_TRACK``
/ ``AGNO_TELEMETRY=false`` (and ``telemetry=False``) keep usage telemetry off; every other
``OTEL_*`` / ``MLFLOW_*`` / ``OPENAI_*`` ... variable is removed first.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "LANGSMITH_", "LANGCHAIN_", "DATABRICKS_", "OPENAI_", "AGNO_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-agno-mlflow"
FOLDER = common.TRACES / "agno-mlflow"
PACKAGES = (
    "agno",
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "openai",
    "openinference-instrumentation-agno",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp",
    "opentelemetry-proto",
    "protobuf",
)
AGNO_ENV = {"AGNO_TELEMETRY": "false"}  # Agno's anonymous run telemetry (os-api.agno.com)


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
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-agno-capture-"))
os.environ.update(
    {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{SERVER.url}{received_otlp.TRACES_PATH}",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_SERVICE_NAME": SERVICE,
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=acceptance-test",
        "MLFLOW_TRACKING_URI": f"sqlite:///{_STORE / 'mlflow.db'}",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
        "NO_PROXY": "127.0.0.1,localhost",
        **AGNO_ENV,
    }
)

import mlflow  # noqa: E402
import mlflow.agno  # noqa: E402
import mlflow.tracing.provider  # noqa: E402
from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402

mlflow.agno.autolog()

_script = common.active_script


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


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


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    agent = make_agent(session)
    MODEL.requests.clear()
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
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
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    model = agent.model
    if isinstance(model, OpenAIChat) and model.async_client is not None:
        await model.async_client.close()  # inside this event loop, not at garbage collection
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
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(Received.content_types))
            + ") from MLflow's OtelSpanProcessor with opentelemetry-exporter-otlp-proto-http",
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "Agno Agent + OpenAIChat (real AsyncOpenAI client over a scripted loopback Chat Completions "
    "server) traced by MLflow Tracing (mlflow.agno.autolog) on MLflow's own tracer provider, "
    "exported by MLflow's OtelSpanProcessor over OTLP/HTTP protobuf "
    "(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to a loopback receiver (the .jsonl holds each received "
    "request); refund raises -> Agno sends the exception text to the model; multi-turn via "
    "arun(session_id=...) with InMemoryDb + add_history_to_context; see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
