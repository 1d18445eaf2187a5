"""Capture a Strands Agents ``Agent`` traced by ``mlflow.strands.autolog()`` over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-strands-mlflow
    /tmp/cap-strands-mlflow/bin/pip install strands-agents 'strands-agents[openai]' mlflow \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-strands-mlflow/bin/python \
        tests/golden/capture/strands_mlflow.py [scenario ...]'

Captured with strands-agents 1.62.0, mlflow / mlflow-skinny / mlflow-tracing 3.17.2, openai
2.54.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common / -exporter-otlp-proto-http /
-proto 1.45.1, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/strands-mlflow/``.

The agent: a real Strands ``Agent(name="music_store_support")`` with the store's system prompt
and the five store tools as ``@tool`` functions (Strands' default concurrent tool executor),
and Strands' ``OpenAIModel`` (the real ``openai`` client, ``client_args={"base_url": ...}``)
pointed at the scripted Chat Completions route of a loopback server in this process
(``scripted_model.ChatCompletions``); ``stream=False`` (OpenAIModel's documented config switch)
because the scripted server answers only non-streaming requests. Nothing else is faked. The
refused refund raises inside the tool; Strands turns it into an error ``ToolResult`` and the
model sees ``Error: ...``. Multi-turn memory: the same ``Agent`` is invoked once per user turn;
``multi_turn`` runs inside ``mlflow.tracing.context(session_id=...)`` (MLflow's documented way to
give the traces of a scope a session); the one-shot scenarios run without session id.

Instrumentation as MLflow's Strands page shows: ``mlflow.strands.autolog()`` with its defaults
and no other autolog, no ``StrandsTelemetry`` setup. MLflow's Strands autolog is a wrapper over
Strands' own OpenTelemetry tracer: it installs an SDK ``TracerProvider`` as the global provider
with its ``StrandsSpanProcessor``, which hands every span Strands itself creates
(``invoke_agent``, ``execute_event_loop_cycle``, ``chat``, ``execute_tool``) to MLflow's own
tracer's span processor, adding ``mlflow.spanType`` / ``mlflow.spanInputs`` /
``mlflow.spanOutputs`` / ``mlflow.chat.tokenUsage`` built from Strands' ``gen_ai.*`` events on
the way. So the spans are Strands' spans (Strands' default conventions; content always on:
Strands records messages in span events, there is no switch), plus MLflow's attributes. Export
as ``smolagents_mlflow.py``: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the
``received_otlp.receiver`` route of the loopback server and
``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so MLflow's tracer exports through its
``OtelSpanProcessor`` (no tracking-store processor, no MLflow server; ``MLFLOW_TRACKING_URI`` is
a SQLite file under /tmp that tracing never writes). MLflow's provider is force-flushed after
every user turn, so each turn arrives as its own export. ``MLFLOW_DISABLE_TELEMETRY`` /
``DO_NOT_TRACK`` keep usage telemetry off; every other ``OTEL_*`` / ``MLFLOW_*`` / ... variable
is removed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "STRANDS_", "DATABRICKS_", "OPENAI_", "AWS_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-strands-mlflow"
FOLDER = common.TRACES / "strands-mlflow"
PACKAGES = (
    "strands-agents",
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
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
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-strands-capture-"))
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
    }
)

import mlflow  # noqa: E402
import mlflow.strands  # noqa: E402
import mlflow.tracing.provider  # noqa: E402
from strands import Agent, tool  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402

mlflow.strands.autolog()

_script = common.active_script


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


@tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name: The exact track name.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title.

    Args:
        album_title: The album title.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name: The artist's name.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id: The customer's id.
        invoice_id: The invoice id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice.

    Args:
        invoice_id: The invoice id.
        track_id: The track to refund.
        reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]


def make_agent() -> Agent:
    model = OpenAIModel(
        client_args={"base_url": BASE_URL, "api_key": "sk-offline", "max_retries": 0},
        model_id=common.MODEL_NAME,
        stream=False,
    )
    return Agent(
        model=model,
        name=common.AGENT_NAME,
        system_prompt=common.SYSTEM_PROMPT,
        tools=TOOLS,
        callback_handler=None,
    )


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    agent = make_agent()
    MODEL.requests.clear()
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        scope = mlflow.tracing.context(session_id=session) if session else contextlib.nullcontext()
        with scope:
            result = await agent.invoke_async(text)
        content = result.message.get("content", [])
        finals.append("".join(block.get("text", "") for block in content) or None)
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    tool_messages_sent = [
        message["content"]
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        extra={
            "tool_messages_in_last_request": tool_messages_sent,
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
    "Strands Agents Agent (OpenAIModel, stream=False, over a scripted loopback Chat Completions "
    "server) traced by MLflow Tracing (mlflow.strands.autolog: a span processor on a global SDK "
    "tracer provider that forwards Strands' own spans to MLflow's tracer, adding mlflow.span* "
    "attributes), exported by MLflow's OtelSpanProcessor over OTLP/HTTP protobuf "
    "(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to a loopback receiver (the .jsonl holds each received "
    "request); no StrandsTelemetry; refund raises -> error ToolResult; multi-turn via the same "
    "Agent inside mlflow.tracing.context(session_id=...); see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
