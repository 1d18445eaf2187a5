"""Capture a hand-written agent loop traced manually with MLflow Tracing, exported over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mlflow-manual
    /tmp/cap-mlflow-manual/bin/pip install mlflow==3.17.2 openai==3.57.0 \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-mlflow-manual/bin/python tests/golden/capture/mlflow_manual.py [scenario ...]'

Captured with mlflow / mlflow-skinny / mlflow-tracing 3.17.2, openai 3.57.0, opentelemetry-sdk /
-api / -exporter-otlp-proto-common / -exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/mlflow-manual/``.

No agent framework: a plain Python loop (``run_turn``) sends the chat history to the real
``openai.OpenAI`` client (Chat Completions, against a loopback server in this process that
scripts the answers), executes every tool call of the response in order, appends the ``tool``
messages and asks again until the model answers in text. It is traced the way MLflow's docs
show for custom agents: ``@mlflow.trace(name=<agent>, span_type=SpanType.AGENT)`` on the
per-turn run, ``@mlflow.trace(span_type=SpanType.TOOL)`` on each tool function, and
``mlflow.openai.autolog()`` for the model calls. The refused refund raises through the traced
tool; the loop catches it and sends ``<type>: <message>`` to the model as the tool message.
``multi_turn`` keeps one history across three turns and calls
``mlflow.update_current_trace(metadata={"mlflow.trace.session": ...})`` inside the agent run
(MLflow's documented session key); the one-shot scenarios set no session.

Export: MLflow's documented OTLP path, as in ``mlflow_langgraph.py``:
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (the ``received_otlp.receiver`` route of the loopback
server) and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``; MLflow then installs its
``OtelSpanProcessor`` instead of the tracking-store processor (``MLFLOW_TRACKING_URI`` is a
SQLite file under /tmp that tracing never writes). MLflow's provider is flushed after every
user turn. ``MLFLOW_DISABLE_TELEMETRY`` and ``DO_NOT_TRACK`` keep usage telemetry off; every
other ``OTEL_*`` / ``MLFLOW_*`` variable is removed first.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "DATABRICKS_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-mlflow-manual"
FOLDER = common.TRACES / "mlflow-manual"
PACKAGES = (
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


MODEL = scripted_model.ChatCompletions()
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-manual-capture-"))
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
import mlflow.tracing.provider  # noqa: E402
import openai  # noqa: E402
from mlflow.entities import SpanType  # noqa: E402

mlflow.openai.autolog()
CLIENT = openai.OpenAI(api_key="sk-offline", base_url=f"{SERVER.url}/v1", max_retries=0)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": common.TOOL_DESCRIPTIONS[name],
            "parameters": {
                "type": "object",
                "properties": common.TOOL_PARAMETERS[name],
                "required": list(common.TOOL_PARAMETERS[name]),
            },
        },
    }
    for name in common.TOOL_PARAMETERS
]


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


@mlflow.trace(span_type=SpanType.TOOL)
def lookup_track(track_name: str) -> dict[str, Any]:
    return dict(common.active_script().call("lookup_track", track_name=track_name))


@mlflow.trace(span_type=SpanType.TOOL)
def lookup_album(album_title: str) -> dict[str, Any]:
    return dict(common.active_script().call("lookup_album", album_title=album_title))


@mlflow.trace(span_type=SpanType.TOOL)
def lookup_artist(artist_name: str) -> dict[str, Any]:
    return dict(common.active_script().call("lookup_artist", artist_name=artist_name))


@mlflow.trace(span_type=SpanType.TOOL)
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    return dict(
        common.active_script().call(
            "lookup_invoice", customer_id=customer_id, invoice_id=invoice_id
        )
    )


@mlflow.trace(span_type=SpanType.TOOL)
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    return dict(
        common.active_script().call(
            "refund", invoice_id=invoice_id, track_id=track_id, reason=reason
        )
    )


FUNCTIONS = {
    "lookup_track": lookup_track,
    "lookup_album": lookup_album,
    "lookup_artist": lookup_artist,
    "lookup_invoice": lookup_invoice,
    "refund": refund,
}


def call_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    response = CLIENT.chat.completions.create(
        model=common.MODEL_NAME,
        messages=messages,  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
    )
    message = response.choices[0].message
    entry: dict[str, Any] = {"role": "assistant", "content": message.content}
    calls = [c for c in message.tool_calls or [] if c.type == "function"]
    if calls:
        entry["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in calls
        ]
    return entry


@mlflow.trace(name=common.AGENT_NAME, span_type=SpanType.AGENT)
def run_turn(history: list[dict[str, Any]], user_input: str) -> str | None:
    # The session id is not an argument: as one it would land in the span's inputs, which
    # is not MLflow's session mechanism.
    session_id = common.active_script().scenario.session_id
    if session_id is not None:
        mlflow.update_current_trace(metadata={"mlflow.trace.session": session_id})
    history.append({"role": "user", "content": user_input})
    while True:
        reply = call_model([{"role": "system", "content": common.SYSTEM_PROMPT}, *history])
        history.append(reply)
        if not reply.get("tool_calls"):
            content = reply.get("content")
            return content if isinstance(content, str) else None
        for call in reply["tool_calls"]:
            function = call["function"]
            try:
                content = json.dumps(
                    FUNCTIONS[function["name"]](**json.loads(function["arguments"]))
                )
            except common.StoreError as exc:
                content = f"{type(exc).__name__}: {exc}"
            history.append({"role": "tool", "tool_call_id": call["id"], "content": content})


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    MODEL.requests.clear()
    _flush()
    Received.requests = []
    history: list[dict[str, Any]] = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        finals.append(run_turn(history, text))
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    tool_messages_sent = [
        message.get("content")
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
        session_id=scenario.session_id,
        extra={
            "tool_messages_in_last_request": tool_messages_sent,
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(Received.content_types))
            + ") from MLflow's OtelSpanProcessor with opentelemetry-exporter-otlp-proto-http",
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


NOTES = (
    "Hand-written loop (openai.OpenAI Chat Completions over a scripted loopback server) traced "
    "manually with MLflow Tracing: @mlflow.trace(span_type=AGENT) on the turn "
    "(music_store_support), @mlflow.trace(span_type=TOOL) per tool, mlflow.openai.autolog for "
    "the chat calls (Completions spans); exported by MLflow's OtelSpanProcessor over OTLP/HTTP "
    "protobuf to a loopback receiver; multi_turn sets mlflow.update_current_trace(metadata="
    "{'mlflow.trace.session': ...}), which does not reach the exported spans; see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
