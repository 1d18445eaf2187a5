"""Capture a smolagents ``ToolCallingAgent`` traced by ``mlflow.smolagents.autolog()`` over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-smolagents-mlflow
    /tmp/cap-smolagents-mlflow/bin/pip install mlflow==3.17.2 smolagents==1.26.0 openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-smolagents-mlflow/bin/python \
        tests/golden/capture/smolagents_mlflow.py [scenario ...]'

Captured with mlflow / mlflow-skinny / mlflow-tracing 3.17.2, smolagents 1.26.0 (inside the
range MLflow 3.17.2 declares for its smolagents autolog, 1.23.0-1.26.0), openai 3.57.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -exporter-otlp-proto-http / -proto
1.45.2, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/smolagents-mlflow/``.

The agent is the one of ``smolagents_toolcalling.py``: a real ``ToolCallingAgent`` named
``music_store_support`` (``instructions`` = the store's system prompt, ``max_steps=8``) with the
five store tools as ``@tool`` functions, and smolagents' ``OpenAIServerModel`` (the real
``openai`` client) pointed at the scripted Chat Completions route of a loopback server in this
process (``scripted_model.ChatCompletions``); nothing else is faked. smolagents sends
``tool_choice="required"`` and ends a run only through its ``final_answer`` tool, so the scripted
final text is sent as a ``final_answer`` tool call ``{"answer": <text>}`` (as in
``smolagents-openinference``). The refused refund raises inside the tool; smolagents wraps it in
``AgentToolExecutionError``, records it on the step, and the next model request carries it.
Multi-turn memory: ``agent.run(text, reset=False)`` after the first turn; ``multi_turn`` runs
inside ``mlflow.tracing.context(session_id=...)`` (MLflow's documented way to give the traces of
a scope a session); the one-shot scenarios run without session id.

Instrumentation as MLflow's smolagents page shows: ``mlflow.smolagents.autolog()`` with its
defaults and no other autolog (MLflow always records span inputs and outputs: there is no
content switch to turn on). It patches ``MultiStepAgent.run``, ``ToolCallingAgent.step``,
``Tool.__call__`` and each model class's ``__call__``; smolagents 1.26's loop calls neither
``step`` nor the model's ``__call__`` (it calls ``_step_stream`` and ``model.generate``), so no
model call is recorded (see NOTES.md). Export exactly as ``llamaindex_mlflow.py``: MLflow's own
tracer provider, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the ``received_otlp.receiver`` route of
the loopback server and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so MLflow installs
only its ``OtelSpanProcessor`` (no tracking-store processor, no MLflow server;
``MLFLOW_TRACKING_URI`` is a SQLite file under /tmp that tracing never writes). MLflow's provider
is force-flushed after every user turn, so each turn arrives as its own export.
``MLFLOW_DISABLE_TELEMETRY`` / ``DO_NOT_TRACK`` keep usage telemetry off; every other
``OTEL_*`` / ``MLFLOW_*`` / ... variable is removed first.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "LANGSMITH_", "LANGCHAIN_", "DATABRICKS_", "OPENAI_", "HF_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-smolagents-mlflow"
FOLDER = common.TRACES / "smolagents-mlflow"
PACKAGES = (
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "smolagents",
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


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions answer: the script's tool calls, else final_answer(answer=text)."""
    script = common.active_script()
    calls, final = script.next_response()
    if final is not None:
        calls = [
            (
                f"call_{script.scenario.name[:6]}_{script.turn}{script.step}0",
                "final_answer",
                {"answer": final},
            )
        ]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for cid, name, args in calls
        ],
    }
    return scripted_model.completion(
        body,
        message,
        response_id=f"chatcmpl_{script.scenario.name}_{script.turn}{script.step}",
        finish_reason="tool_calls",
    )


MODEL = scripted_model.ChatCompletions(answer)  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-smolagents-capture-"))
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
import mlflow.smolagents  # noqa: E402
import mlflow.tracing.provider  # noqa: E402
from smolagents import OpenAIServerModel, ToolCallingAgent, tool  # noqa: E402

mlflow.smolagents.autolog()

_script = common.active_script


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


@tool
def lookup_track(track_name: str) -> dict:
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name: The exact track name.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict:
    """Look up an album by its title.

    Args:
        album_title: The album title.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict:
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name: The artist's name.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict:
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id: The customer's id.
        invoice_id: The invoice id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict:
    """Refund one purchased track of an invoice.

    Args:
        invoice_id: The invoice id.
        track_id: The track to refund.
        reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]


def make_agent() -> ToolCallingAgent:
    model = OpenAIServerModel(
        model_id=common.MODEL_NAME,
        api_base=BASE_URL,
        api_key="sk-offline",
        client_kwargs={"max_retries": 0},
    )
    return ToolCallingAgent(
        tools=TOOLS,
        model=model,
        name=common.AGENT_NAME,
        instructions=common.SYSTEM_PROMPT,
        max_steps=8,
        verbosity_level=0,
    )


def run(name: str) -> None:
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
            result = agent.run(text, reset=(turn == 0))
        finals.append(str(result) if result is not None else None)
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
    "smolagents ToolCallingAgent (OpenAIServerModel over a scripted loopback Chat Completions "
    "server; final text delivered as a final_answer tool call, smolagents' idiom with "
    "tool_choice=required) traced by MLflow Tracing (mlflow.smolagents.autolog) on MLflow's own "
    "tracer provider, exported by MLflow's OtelSpanProcessor over OTLP/HTTP protobuf "
    "(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to a loopback receiver (the .jsonl holds each received "
    "request); refund raises -> AgentToolExecutionError recorded on the step; multi-turn via "
    "agent.run(reset=False) inside mlflow.tracing.context(session_id=...); see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
