"""Capture MLflow Tracing (LangChain + OpenAI autolog) on a LangGraph agent, exported over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mlflow
    /tmp/cap-mlflow/bin/pip install mlflow langgraph langchain langchain-openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-mlflow/bin/python tests/golden/capture/mlflow_langgraph.py [scenario ...]'

Captured with mlflow / mlflow-skinny / mlflow-tracing 3.17.2, langchain 1.5.2, langchain-core
1.8.3, langchain-openai 1.7.4, langgraph 1.2.24, langgraph-prebuilt 1.1.3, langgraph-checkpoint
4.3.2, openai 3.57.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common /
-exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1, in a network
namespace with only loopback up. Writes ``tests/golden/traces/langgraph-mlflow/``.

Real ``langchain.agents.create_agent`` graph (LangGraph) with real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an error
``ToolMessage``, LangChain's idiom) and the real ``ChatOpenAI`` (Chat Completions, real
``openai`` client) pointed at a loopback HTTP server in this process that scripts the model's
answers (``scripted_model.ChatCompletions``); nothing else is faked. One ``graph.invoke`` per
user turn. ``multi_turn`` keeps the conversation in a LangGraph checkpointer thread
(``InMemorySaver``, ``configurable.thread_id`` = the session id) inside
``mlflow.tracing.context(session_id=...)`` (MLflow's documented way to give the traces of a
scope a session; MLflow's LangChain tracer also copies LangGraph's ``thread_id`` into the same
trace metadata key, ``mlflow.trace.session``, by itself); the one-shot scenarios run without
checkpointer, thread id or session id.

Instrumentation: ``mlflow.langchain.autolog()`` and ``mlflow.openai.autolog()`` with their
defaults, MLflow's own tracer provider (``MLFLOW_USE_DEFAULT_TRACER_PROVIDER`` default), and
MLflow's documented OTLP export: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set (and
``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``; MLflow's default would be gRPC), so
MLflow installs its ``OtelSpanProcessor`` (a ``BatchSpanProcessor``) with the SDK's
``OTLPSpanExporter`` *instead of* its tracking-store processor (no dual export, no MLflow
server; ``MLFLOW_TRACKING_URI`` is a SQLite file under /tmp that tracing never writes). The
endpoint is the ``received_otlp.receiver`` route of the loopback server in this process: each
received export request is kept as it came. The resource comes from ``OTEL_SERVICE_NAME`` /
``OTEL_RESOURCE_ATTRIBUTES`` (MLflow adds ``telemetry.sdk.*``). MLflow's provider is flushed
after every user turn (``force_flush`` of the provider MLflow set up), so each turn arrives
as its own export. ``MLFLOW_DISABLE_TELEMETRY`` and ``DO_NOT_TRACK`` keep MLflow's usage
telemetry off; every other ``OTEL_EXPORTER_OTLP*`` / ``MLFLOW_*`` / ``LANGSMITH_*`` variable
is removed first.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "LANGSMITH_", "LANGCHAIN_", "DATABRICKS_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-langgraph-mlflow"
# --genai-semconv: MLflow's opt-in translation of its spans to OTel GenAI attributes at
# export (MLFLOW_ENABLE_OTEL_GENAI_SEMCONV); not committed, for a comparison only.
GENAI_SEMCONV = "--genai-semconv" in sys.argv
FOLDER = common.TRACES / ("langgraph-mlflow-genai-semconv" if GENAI_SEMCONV else "langgraph-mlflow")
PACKAGES = (
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint",
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

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-capture-"))
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
        **({"MLFLOW_ENABLE_OTEL_GENAI_SEMCONV": "true"} if GENAI_SEMCONV else {}),
    }
)

import mlflow  # noqa: E402
import mlflow.tracing.provider  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from pydantic import SecretStr  # noqa: E402

mlflow.langchain.autolog()
mlflow.openai.autolog()

_script = common.active_script


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


def _tool(name: str, func: Any) -> StructuredTool:
    return StructuredTool.from_function(
        func=func, name=name, description=common.TOOL_DESCRIPTIONS[name], handle_tool_error=True
    )


def lookup_track(track_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    try:
        return dict(
            _script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)
        )
    except common.StoreError as exc:  # LangChain's idiom: handled as an error ToolMessage
        raise ToolException(str(exc)) from exc


TOOLS = [
    _tool("lookup_track", lookup_track),
    _tool("lookup_album", lookup_album),
    _tool("lookup_artist", lookup_artist),
    _tool("lookup_invoice", lookup_invoice),
    _tool("refund", refund),
]


def make_graph(checkpointer: InMemorySaver | None) -> Any:
    model = ChatOpenAI(
        model=common.MODEL_NAME,
        api_key=SecretStr("sk-offline"),
        base_url=BASE_URL,
        max_retries=0,
    )
    return create_agent(
        model,
        TOOLS,
        system_prompt=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        checkpointer=checkpointer,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    MODEL.requests.clear()
    graph = make_graph(InMemorySaver() if session else None)
    config: dict[str, Any] = {"configurable": {"thread_id": session}} if session else {}
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        with mlflow.tracing.context(session_id=session) if session else _Nothing():
            state = graph.invoke({"messages": [{"role": "user", "content": text}]}, config=config)
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
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


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


NOTES = (
    "LangChain create_agent (LangGraph) + ChatOpenAI over a scripted loopback Chat Completions "
    "server, traced by MLflow Tracing (mlflow.langchain.autolog + mlflow.openai.autolog) on "
    "MLflow's own tracer provider, exported by MLflow's OtelSpanProcessor over OTLP/HTTP "
    "protobuf (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to a loopback receiver (the .jsonl holds "
    "each received request); multi_turn inside mlflow.tracing.context(session_id=...) on a "
    "checkpointer thread; see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
