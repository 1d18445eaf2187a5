"""Capture a LangGraph agent (LangChain ``create_agent``) traced by Future AGI's traceAI.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-langgraph-traceai
    /tmp/cap-langgraph-traceai/bin/pip install traceai-langchain langchain langgraph \
        langchain-openai opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-langgraph-traceai/bin/python \
        tests/golden/capture/langgraph_traceai.py [scenario ...]'

Captured with traceAI-langchain 0.2.0, fi-instrumentation-otel 1.1.0, langchain 1.5.2,
langchain-core 1.8.3, langchain-openai 1.7.4, langgraph 1.2.24, langgraph-prebuilt 1.1.3,
langgraph-checkpoint 4.3.2, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto 1.45.2,
opentelemetry-instrumentation 0.66b2, protobuf 7.36.2, Python 3.12.1, in a network namespace
with only loopback up. Writes ``tests/golden/traces/langgraph-traceai/``.

The agent is that of ``langwatch_langgraph.py``: a real ``langchain.agents.create_agent``
graph (LangGraph) named ``music_store_support`` with real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an error
``ToolMessage``, LangChain's idiom) and the real ``ChatOpenAI`` (Chat Completions, real
``openai`` client) pointed at a loopback HTTP server in this process that scripts the model's
answers (``scripted_model.ChatCompletions``); nothing else is faked. One ``graph.invoke`` per
user turn. ``multi_turn`` keeps the conversation in a LangGraph checkpointer thread
(``InMemorySaver``, ``configurable.thread_id`` = the session id) and, as traceAI's LangGraph
quickstart shows, wraps each turn in ``fi_instrumentation.using_session(session id)``; the
one-shot scenarios run without checkpointer, thread id or session.

Instrumentation, as traceAI-langchain's README shows: ``fi_instrumentation.register(
project_type=ProjectType.OBSERVE, project_name=...)`` (traceAI's own ``TracerProvider``, its
default ``BatchSpanProcessor`` and ``HTTPSpanExporter``, the default FI semantic convention)
and ``LangChainInstrumentor().instrument(tracer_provider=..., config=TraceConfig(...))`` with
every content switch on (``hide_inputs`` / ``hide_outputs`` / ``hide_input_messages`` /
``hide_output_messages`` / ``hide_input_text`` / ``hide_output_text`` False, the defaults);
LangGraph is traced through LangChain's callbacks (``LangGraphInstrumentor`` is a deprecated
no-op, not called). No key: ``FI_API_KEY`` / ``FI_SECRET_KEY`` are unset and ``FI_BASE_URL``
(traceAI's documented collector setting) points at the loopback server, whose
``received_otlp.receiver`` route answers traceAI's fixed path ``/tracer/v1/traces``
(OTLP/HTTP protobuf, as sent). ``force_flush`` on the provider after every user turn; the
``.jsonl`` keeps its export requests as received. Every ``OTEL_*`` / ``FI_*`` / ``OPENAI_*`` /
``LANGSMITH_*`` / ``LANGCHAIN_*`` variable is removed first.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "FI_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "langgraph-traceai"
PROJECT = "music-store-support-langgraph-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceAI-langchain",
    "fi-instrumentation-otel",
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint",
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


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: MODEL,
        TRACEAI_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from fi_instrumentation import TraceConfig, register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from pydantic import SecretStr  # noqa: E402
from traceai_langchain import LangChainInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
LangChainInstrumentor().instrument(
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

_script = common.active_script


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
        base_url=f"{SERVER.url}/v1",
        max_retries=0,
    )
    return create_agent(
        model,
        TOOLS,
        system_prompt=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        checkpointer=checkpointer,
    )


NOTES = (
    "LangChain create_agent (LangGraph) + ChatOpenAI over a scripted loopback Chat Completions "
    "server, traced by Future AGI's traceAI: fi_instrumentation.register(project_type=OBSERVE) "
    "(its own TracerProvider, BatchSpanProcessor and HTTPSpanExporter, FI semantic convention) "
    "and traceai_langchain.LangChainInstrumentor (LangChain callbacks), every TraceConfig "
    "content switch on; exported over OTLP/HTTP protobuf to a loopback receiver at FI_BASE_URL "
    "+ /tracer/v1/traces, no key; force_flush after every turn. multi_turn: InMemorySaver "
    "thread (configurable.thread_id = session id) and fi_instrumentation.using_session(session "
    "id) around each turn; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    graph = make_graph(InMemorySaver() if session_id else None)
    assert PROVIDER.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        config: dict[str, Any] = {}
        if session_id:
            config["configurable"] = {"thread_id": session_id}
        scope = using_session(session_id) if session_id else contextlib.nullcontext()
        with scope:
            state = graph.invoke({"messages": [{"role": "user", "content": text}]}, config)
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
        assert PROVIDER.force_flush(), "traceAI's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
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
        session_id=session_id,
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
