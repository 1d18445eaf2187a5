"""Capture a LlamaIndex ``FunctionAgent`` traced by ``mlflow.llama_index.autolog()`` over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mlflow-li
    /tmp/cap-mlflow-li/bin/pip install mlflow==3.17.2 llama-index-core==0.14.25 \
        llama-index-llms-openai llama-index-llms-openai-like \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-mlflow-li/bin/python tests/golden/capture/llamaindex_mlflow.py [scenario ...]'

Captured with mlflow / mlflow-skinny / mlflow-tracing 3.17.2, llama-index-core 0.14.25,
llama-index-workflows 2.26.1, llama-index-instrumentation 0.6.0, llama-index-llms-openai 0.8.3,
llama-index-llms-openai-like 0.8.1, openai 2.54.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/llamaindex-mlflow/``.

The agent is the one of ``llamaindex_function_agent.py``: a real ``FunctionAgent``
(``streaming=False``: the scripted server refuses streams) with the store functions as
``FunctionTool.from_defaults`` tools and llama-index's ``OpenAILike`` (the real ``openai``
client) pointed at the scripted Chat Completions route of a loopback server in this process
(``scripted_model.ChatCompletions``); nothing else is faked. The refused refund raises; the
agent turns it into a ``ToolOutput(is_error=True)`` whose content (the exception text) goes
to the model. One ``agent.run`` per user turn, with one ``Context(agent)`` reused across the
turns and the conversation in one ``ChatMemoryBuffer`` passed as ``agent.run(memory=...)``
(llama-index-workflows 2.26 drops the agent's memory from a reused ``Context``: it is
"known unserializable", so with the context alone a turn's request holds only that turn,
as in ``llamaindex-openinference``); ``multi_turn`` runs inside
``mlflow.tracing.context(session_id=...)`` (MLflow's documented way to give the traces of a
scope a session); the one-shot scenarios run without session id.

Instrumentation and export exactly as ``mlflow_langgraph.py``: ``mlflow.llama_index.autolog()``
with its defaults (no other autolog), MLflow's own tracer provider,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the ``received_otlp.receiver`` route of the loopback
server and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so MLflow installs only its
``OtelSpanProcessor`` (no tracking-store processor, no MLflow server; ``MLFLOW_TRACKING_URI``
is a SQLite file under /tmp that tracing never writes). MLflow's provider is force-flushed
after every user turn, so each turn arrives as its own export. ``MLFLOW_DISABLE_TELEMETRY`` /
``DO_NOT_TRACK`` keep usage telemetry off; every other ``OTEL_*`` / ``MLFLOW_*`` / ... variable
is removed first.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "LANGSMITH_", "LANGCHAIN_", "DATABRICKS_", "OPENAI_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-llamaindex-mlflow"
FOLDER = common.TRACES / "llamaindex-mlflow"
PACKAGES = (
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
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

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-llamaindex-capture-"))
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
import mlflow.llama_index  # noqa: E402
import mlflow.tracing.provider  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.memory import ChatMemoryBuffer  # noqa: E402
from llama_index.core.tools import BaseTool, FunctionTool  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

mlflow.llama_index.autolog()

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


TOOLS: list[BaseTool | Callable[..., Any]] = [
    FunctionTool.from_defaults(
        fn, name=fn.__name__, description=common.TOOL_DESCRIPTIONS[fn.__name__]
    )
    for fn in (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund)
]


def make_agent() -> FunctionAgent:
    llm = OpenAILike(
        model=common.MODEL_NAME,
        api_base=BASE_URL,
        api_key="sk-offline",
        max_retries=0,
        is_chat_model=True,
        is_function_calling_model=True,
        context_window=32000,
        timeout=30,
    )
    return FunctionAgent(
        name=common.AGENT_NAME,
        description="Customer support of Tunes & Co",
        tools=TOOLS,
        llm=llm,
        system_prompt=common.SYSTEM_PROMPT,
        streaming=False,
    )


async def run_turns(
    agent: FunctionAgent,
    scenario: common.Scenario,
    script: common.Script,
    finals: list[str | None],
    turn_traces: list[str],
) -> None:
    ctx = Context(agent)
    memory = ChatMemoryBuffer.from_defaults(llm=agent.llm)  # the conversation, across turns
    session = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        with mlflow.tracing.context(session_id=session) if session else _Nothing():
            result: Any = await agent.run(user_msg=text, ctx=ctx, memory=memory)
        finals.append(result.response.content or None)
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))


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
    asyncio.run(run_turns(agent, scenario, script, finals, turn_traces))
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
    "LlamaIndex FunctionAgent (AgentWorkflow agent, streaming=False) with OpenAILike over a "
    "scripted loopback Chat Completions server, traced by MLflow Tracing "
    "(mlflow.llama_index.autolog) on MLflow's own tracer provider, exported by MLflow's "
    "OtelSpanProcessor over OTLP/HTTP protobuf (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to a "
    "loopback receiver (the .jsonl holds each received request); refund raises -> "
    "ToolOutput(is_error=True); multi-turn via one Context reused and one ChatMemoryBuffer "
    "passed as agent.run(memory=...), inside "
    "mlflow.tracing.context(session_id=...); see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
