"""Capture a LangChain ``create_agent`` (LangGraph) agent traced by Laminar's Python SDK (``lmnr``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-lmnr2
    /tmp/cap-lmnr2/bin/pip install 'lmnr[langchain]' langchain langgraph langchain-openai
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-lmnr2/bin/python \
        tests/golden/capture/langgraph_laminar.py [scenario ...]'

Captured with lmnr 0.8.1 (its ``[langchain]`` extra: OpenLLMetry's
opentelemetry-instrumentation-langchain 0.62.4), langchain 1.5.2, langchain-core 1.8.3,
langchain-openai 1.7.4, langgraph 1.2.24, langgraph-prebuilt 1.1.3, openai 3.57.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto
1.45.1, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/langgraph-laminar/``.

The agent is that of ``langchain_azure_ai_otel.py``: the real ``langchain.agents.create_agent``
graph (LangGraph) named ``music_store_support``, real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an error
``ToolMessage``, LangChain's idiom), and the real ``ChatOpenAI`` (Chat Completions, real
``openai`` client) pointed at a loopback HTTP server in this process that scripts the model's
answers (``scripted_model.ChatCompletions``); nothing else is faked. One ``graph.invoke`` per
user turn. ``multi_turn`` keeps the conversation in a LangGraph checkpointer thread
(``InMemorySaver``, ``configurable.thread_id`` = the session id); the one-shot scenarios run
without checkpointer or thread id.

Instrumentation: ``Laminar.initialize()`` with its defaults (every instrument it finds; here
OpenLLMetry's ``LangchainInstrumentor`` (a LangChain callback handler it injects), Laminar's
own ``LanggraphInstrumentor`` (graph topology on the context) and Laminar's own fork of the
OpenAI instrumentation, which wraps the ``openai`` client ``ChatOpenAI`` uses). No project
key: Laminar then exports with its own ``LaminarSpanExporter`` to the endpoint of
``OTEL_EXPORTER_OTLP_ENDPOINT`` (documented by Laminar for any OTel backend), here the
``received_otlp.receiver`` route of the same loopback server, OTLP/HTTP protobuf (gzip);
``Laminar.flush()`` after every user turn. Each turn runs inside a function decorated with
Laminar's ``@observe(name="music store support turn")`` (Laminar's documented entry point),
which in ``multi_turn`` calls ``Laminar.set_trace_session_id(session id)`` (Laminar's
documented session idiom) before ``graph.invoke``. Every ``OTEL_*`` / ``LMNR_*`` /
``OPENAI_*`` / ``LANGSMITH_*`` / ``LANGCHAIN_*`` / ``TRACELOOP_*`` variable is removed first.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [
    n
    for n in os.environ
    if n.startswith(("OTEL_", "LMNR_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_", "TRACELOOP_"))
]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "langgraph-laminar"
WORKFLOW = "music store support turn"
PACKAGES = (
    "lmnr",
    "opentelemetry-instrumentation-langchain",
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-prebuilt",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
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
    {MODEL.PATH: MODEL, received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export)}
)
BASE_URL = f"{SERVER.url}/v1"
os.environ.update(
    {
        "OTEL_EXPORTER_OTLP_ENDPOINT": SERVER.url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "NO_PROXY": "127.0.0.1,localhost",
    }
)

from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from lmnr import Laminar, observe  # noqa: E402
from pydantic import SecretStr  # noqa: E402

# service.name is Laminar's own (sys.argv[0]): initialize() has no parameter for it.
Laminar.initialize(project_api_key=None)

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
    return create_agent(
        model,
        TOOLS,
        system_prompt=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        checkpointer=checkpointer,
    )


@observe(name=WORKFLOW)
def handle_turn(graph: Any, text: str, session_id: str | None) -> str | None:
    """One user turn: the graph run, inside Laminar's span (and its session, if any)."""
    config: dict[str, Any] = {}
    if session_id:
        Laminar.set_trace_session_id(session_id)
        config["configurable"] = {"thread_id": session_id}
    state = graph.invoke({"messages": [{"role": "user", "content": text}]}, config=config)
    last = state["messages"][-1]
    return last.content if isinstance(last.content, str) and last.content else None


NOTES = (
    "LangChain create_agent (LangGraph) + ChatOpenAI over a scripted loopback Chat Completions "
    "server, traced by Laminar's Python SDK (lmnr 0.8.1, [langchain] extra): "
    "Laminar.initialize() with its defaults and no project key, exported by Laminar's own "
    "LaminarSpanExporter over OTLP/HTTP protobuf to a loopback receiver "
    "(OTEL_EXPORTER_OTLP_ENDPOINT); Laminar.flush() after every turn. Each turn runs in "
    "@observe(name='music store support turn'); multi_turn: InMemorySaver thread_id = session "
    "id and Laminar.set_trace_session_id(session id) inside the observed function; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    graph = make_graph(InMemorySaver() if session_id else None)
    assert Laminar.flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        finals.append(handle_turn(graph, text, session_id))
        assert Laminar.flush(), "Laminar's export did not flush"
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
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        Laminar.shutdown()  # type: ignore[no-untyped-call]
        SERVER.shutdown()


if __name__ == "__main__":
    main()
