"""Capture a LangGraph ReAct agent traced by AgentOps' (``agentops``) LangChain callback handler.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-langgraph-agentops
    /tmp/cap-langgraph-agentops/bin/pip install langgraph langchain-openai agentops \
        opentelemetry-sdk
    # agentops 0.4.21's exporter subclasses OTLPSpanExporter and reads its private
    # ``_headers`` / ``_session``, gone in opentelemetry-exporter-otlp-proto-http 1.45:
    # pin the last OpenTelemetry release that has them (as agno_agentops.py does).
    /tmp/cap-langgraph-agentops/bin/pip install opentelemetry-api==1.44.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0 \
        opentelemetry-exporter-otlp-proto-common==1.44.0 opentelemetry-proto==1.44.0 \
        opentelemetry-instrumentation==0.65b0 opentelemetry-semantic-conventions==0.65b0
    /tmp/cap-langgraph-agentops/bin/pip uninstall -y opentelemetry-exporter-otlp-common \
        opentelemetry-exporter-http-transport  # 1.45-only helpers, left behind by the pin
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-langgraph-agentops/bin/python \
        tests/golden/capture/langgraph_agentops.py [scenario ...]'

Captured with agentops 0.4.21, langgraph 1.2.24, langgraph-prebuilt 1.1.3, langchain-core
1.8.3, langchain-openai 1.7.4, openai 3.57.0, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-http / -exporter-otlp-proto-common 1.44.0, opentelemetry-instrumentation
/ -semantic-conventions 0.65b0, protobuf 7.36.2, wrapt 1.17.3, Python 3.12.1, in a network
namespace with only loopback up. Writes ``tests/golden/traces/langgraph-agentops/``.

The agent is that of ``langtrace_langgraph.py``: a real
``langgraph.prebuilt.create_react_agent`` graph named ``music_store_support`` (the system
prompt as ``prompt``) with the store's five tools as real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an error
``ToolMessage``) and the real ``ChatOpenAI`` (Chat Completions, real ``openai`` client)
pointed at the scripted Chat Completions endpoint of a loopback server in this process. One
``graph.invoke`` per user turn; LangGraph's ``ToolNode`` runs the calls of one response
concurrently (a thread pool), so ``parallel_calls`` is real. ``multi_turn`` keeps the
conversation in a checkpointer thread (``InMemorySaver``, ``thread_id`` = the session id).

Instrumentation: AgentOps documents two ways for this stack. Its LangGraph page: ``import
agentops``, ``agentops.init(...)``, and init instruments ``langgraph`` with its
``LanggraphInstrumentor`` (it wraps ``StateGraph.__init__`` / ``compile`` / ``add_node`` and
``Pregel.invoke`` / ``stream``). With agentops 0.4.21 and langgraph 1.2.24 that breaks the
graph itself: the ``add_node`` wrapper puts a ``functools.wraps`` function around
LangGraph's ``RunnableCallable`` node and ``create_react_agent`` raises ``ValueError:
callable call_model(...) is not supported by signature`` (tried first; nothing can be
captured that way). So this capture uses its LangChain page: AgentOps'
``LangchainCallbackHandler(api_key=..., tags=[...])`` passed in the run's ``callbacks``
(LangGraph hands it to every node, model and tool run), with ``agentops.init(...,
instrument_llm_calls=False)`` first (the documented switch of its auto-instrumentation,
which would install the broken LangGraph wrapper; the handler's own init is skipped when
AgentOps is already initialised, and it is what points the exporter at the loopback
server). AgentOps has no content switch: what it records it always records.
``auto_start_session=False`` and one ``agentops.start_trace(...)`` /
``agentops.end_trace(..., "Success")`` per user turn (AgentOps' documented manual trace
control), so that each turn is an OTel trace of its own; a new handler per turn inside it
(its ``session.session`` span is started when the handler is made and ended when it is
deleted: ``del`` + ``gc.collect()`` before ``end_trace``); in ``multi_turn`` the documented
``agentops.update_trace_metadata({"session_id": ...})`` inside each turn's trace, with the
thread id.

Where it goes: AgentOps exports OTLP/HTTP protobuf to ``exporter_endpoint`` with a bearer JWT
it fetches from ``endpoint`` + ``/v3/auth/token`` with the API key; both point at the same
loopback server as the model: ``/v1/traces`` is ``received_otlp.receiver``,
``/v3/auth/token`` a stub answering a fake token (a dummy UUID API key). ``end_trace``
flushes the batch processor; the ``.jsonl`` keeps the export requests as received. The
metrics exporter's endpoint is fixed (``https://otlp.agentops.ai/v1/metrics``): run in
``unshare -rn`` with only loopback up, it cannot leave the machine. Every ``OTEL_*`` /
``AGENTOPS_*`` / ``OPENAI_*`` / ``LANGCHAIN_*`` / ``LANGSMITH_*`` variable is removed first;
``AGENTOPS_LOGGING_TO_FILE=false`` (else ``./agentops.log``).
"""

from __future__ import annotations

import gc
import os
import sys
import uuid
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [
    n
    for n in os.environ
    if n.startswith(("OTEL_", "AGENTOPS_", "OPENAI_", "LANGCHAIN_", "LANGSMITH_"))
]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
AGENTOPS_ENV = {"AGENTOPS_LOGGING_TO_FILE": "false"}  # else it writes ./agentops.log
os.environ.update(AGENTOPS_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "langgraph-agentops"
TRACE_NAME = "music_store_support_turn"
PACKAGES = (
    "agentops",
    "langgraph",
    "langgraph-prebuilt",
    "langchain-core",
    "langchain-openai",
    "openai",
    "opentelemetry-instrumentation",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-semantic-conventions",
    "protobuf",
    "wrapt",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()
    auth: ClassVar[list[Any]] = []


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


def _auth(request: scripted_model.Request) -> scripted_model.Reply:
    Received.auth.append(request.json())
    return scripted_model.Reply.json(
        {"token": "offline-jwt-token", "project_id": "offline-project"}
    )


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        MODEL.PATH: MODEL,
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        r"/v3/auth/token": _auth,
    }
)
BASE_URL = f"{SERVER.url}/v1"
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

import agentops  # noqa: E402
from agentops.integration.callbacks.langchain import LangchainCallbackHandler  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402
from pydantic import SecretStr  # noqa: E402

AGENTOPS_INIT = {
    "api_key": str(uuid.UUID(int=0x0FF11E)),  # a dummy key of the documented UUID shape
    "endpoint": SERVER.url,
    "exporter_endpoint": f"{SERVER.url}{received_otlp.TRACES_PATH}",
    "auto_start_session": False,  # one trace per user turn, started below
    # AgentOps' LangGraph auto-instrumentation (installed by init when instrument_llm_calls
    # is on) breaks create_react_agent: its add_node wrapper hides LangGraph's
    # RunnableCallable behind functools.wraps and StateGraph.add_node fails with
    # "ValueError: callable call_model(...) is not supported by signature"; so only the
    # documented LangChain callback handler traces the run.
    "instrument_llm_calls": False,
    "export_flush_interval": 60_000,  # export when a trace ends (end_trace flushes)
    "log_level": "WARNING",
}
agentops.init(**AGENTOPS_INIT)

from agentops.sdk.core import tracer as agentops_tracer  # noqa: E402

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
        base_url=BASE_URL,
        max_retries=0,
    )
    return create_react_agent(
        model,
        TOOLS,
        prompt=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        checkpointer=checkpointer,
    )


NOTES = (
    "LangGraph create_react_agent + ChatOpenAI (real openai client) over a scripted loopback "
    "Chat Completions server, traced by the AgentOps SDK: agentops.init(auto_start_session="
    "False, instrument_llm_calls=False (its LangGraph auto-instrumentation breaks "
    "create_react_agent), endpoint and exporter_endpoint on the same loopback server with a "
    "stub /v3/auth/token), AgentOps' LangchainCallbackHandler in the run's callbacks; one "
    "agentops.start_trace / end_trace per user turn; "
    "OTLP/HTTP protobuf to a loopback receiver. multi_turn: InMemorySaver + thread_id and "
    "agentops.update_trace_metadata({'session_id': ...}) in each turn; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    assert agentops_tracer.provider is not None
    agentops_tracer.provider.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    graph = make_graph(InMemorySaver() if session_id else None)
    config: dict[str, Any] = {"configurable": {"thread_id": session_id}} if session_id else {}
    agentops_tracer.provider.force_flush()  # graph construction: a batch of its own
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        trace = agentops.start_trace(TRACE_NAME)
        if session_id is not None:
            agentops.update_trace_metadata({"session_id": session_id})
        handler = LangchainCallbackHandler(
            api_key=AGENTOPS_INIT["api_key"], tags=["music-store"]
        )  # its session span: started here, ended when the handler is deleted
        state = graph.invoke(
            {"messages": [{"role": "user", "content": text}]},
            config={**config, "callbacks": [handler]},
        )
        del handler
        gc.collect()
        agentops.end_trace(trace, "Success")  # flushes the batch processor
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
        agentops_tracer.provider.force_flush()  # nothing may lag behind the trace's end
        turn_traces.extend(
            t for t in received_otlp.ids_of(Received.requests[before:]) if t not in turn_traces
        )
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
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
        session_id=session_id,
        extra={
            "agentops_env": AGENTOPS_ENV,
            "agentops_init": {k: v for k, v in AGENTOPS_INIT.items() if k != "api_key"},
            "auth_requests": len(Received.auth),
            "tool_messages_in_last_request": tool_messages_sent,
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        SERVER.shutdown()


if __name__ == "__main__":
    main()
