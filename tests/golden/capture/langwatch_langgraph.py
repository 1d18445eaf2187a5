"""Capture LangWatch's Python SDK tracing a LangGraph agent (``create_agent``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-langwatch
    /tmp/cap-langwatch/bin/pip install langwatch langchain langgraph langchain-openai
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-langwatch/bin/python tests/golden/capture/langwatch_langgraph.py [scenario ...]'

Captured with langwatch 1.4.0, langchain 1.5.2, langchain-core 1.8.3, langchain-openai 1.7.4,
langgraph 1.2.24, langgraph-prebuilt 1.1.3, langgraph-checkpoint 4.3.2, openai 3.57.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto
1.45.2, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/langgraph-langwatch/``.

Real ``langchain.agents.create_agent`` graph (LangGraph) named ``music_store_support`` with
real ``StructuredTool``s (``handle_tool_error=True``: the refused refund raises
``ToolException`` and becomes an error ``ToolMessage``, LangChain's idiom) and the real
``ChatOpenAI`` (Chat Completions, real ``openai`` client) pointed at a loopback HTTP server in
this process that scripts the model's answers (``scripted_model.ChatCompletions``); nothing
else is faked. ``multi_turn`` keeps the conversation in a LangGraph checkpointer thread
(``InMemorySaver``, ``configurable.thread_id`` = the session id); the one-shot scenarios run
without checkpointer or thread id.

Instrumentation: LangWatch's Python SDK as its LangChain/LangGraph guide has it:
``langwatch.setup()``, then each user turn is a function decorated with
``@langwatch.trace(name=...)`` (its root span records the function's arguments and return
value) that passes ``langwatch.get_current_trace().get_langchain_callback()`` (LangWatch's own
``langwatch.langchain.LangChainTracer``, a LangChain callback handler, not OpenInference) in
``config["callbacks"]``; the conversation id the documented way,
``get_current_trace().update(metadata={"thread_id": session id})``. ``setup(api_key=dummy,
endpoint_url=<loopback server>, base_attributes={"service.name": ...})``: LangWatch builds its
own ``TracerProvider`` (set as the global one), with its own ``FilterableBatchSpanProcessor``
+ OTLP/HTTP protobuf exporter to
``<endpoint>/api/otel/v1/traces``, here the ``received_otlp.receiver`` route of the loopback
server, so the files keep LangWatch's export requests exactly as sent.
``OTEL_BSP_SCHEDULE_DELAY=60000`` (read by LangWatch for its processor) keeps the timer from
splitting a turn; the provider is flushed after every turn. ``OTEL_*``, ``LANGWATCH_*``,
``LANGSMITH_*``, ``LANGCHAIN_*`` and ``OPENAI_*`` variables are removed first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "LANGWATCH_", "LANGSMITH_", "LANGCHAIN_", "OPENAI_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver
os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "60000"
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = Path(os.environ.get("CAPTURE_OUT") or common.TRACES) / "langgraph-langwatch"
LANGWATCH_TRACES_PATH = "/api/otel/v1/traces"  # where LangWatch's exporter posts
PACKAGES = (
    "langwatch",
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint",
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
    {
        scripted_model.ChatCompletions.PATH: MODEL,
        LANGWATCH_TRACES_PATH: received_otlp.receiver(_keep_export),
    }
)
BASE_URL = f"{SERVER.url}/v1"

import langwatch  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langwatch.attributes import AttributeKey  # noqa: E402
from pydantic import SecretStr  # noqa: E402

SERVICE = "music-store-support-langgraph-langwatch"
CLIENT = langwatch.setup(
    api_key="lw-offline",
    endpoint_url=SERVER.url,
    base_attributes={AttributeKey.ServiceName: SERVICE},  # the resource of LangWatch's provider
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


class Turn:
    """The graph and session of the scenario being captured (the traced function's state)."""

    graph: Any = None
    session: str | None = None


@langwatch.trace(name="music store support turn")
def support_turn(message: str) -> str | None:
    """One user turn, as LangWatch's LangGraph guide writes it."""
    current = langwatch.get_current_trace()
    if Turn.session:
        current.update(metadata={"thread_id": Turn.session})
    handler = current.get_langchain_callback()  # type: ignore[no-untyped-call]
    config: dict[str, Any] = {"callbacks": [handler]}
    if Turn.session:
        config["configurable"] = {"thread_id": Turn.session}
    state = Turn.graph.invoke({"messages": [{"role": "user", "content": message}]}, config)
    last = state["messages"][-1]
    return last.content if isinstance(last.content, str) and last.content else None


def _flush() -> None:
    provider = CLIENT.tracer_provider or langwatch.client.Client._tracer_provider
    assert provider is not None and provider.force_flush(), "LangWatch's export did not flush"


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    Turn.graph = make_graph(InMemorySaver() if session else None)
    Turn.session = session
    _flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        finals.append(support_turn(text))
        _flush()
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
        session_id=session,
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


NOTES = (
    "LangChain create_agent (LangGraph) + ChatOpenAI over a scripted loopback Chat Completions "
    "server, traced by LangWatch's Python SDK: @langwatch.trace per user turn, LangWatch's own "
    "LangChain callback (get_langchain_callback), its own TracerProvider and OTLP/HTTP protobuf "
    "exporter pointed at a loopback receiver; multi_turn: InMemorySaver thread + trace metadata "
    "thread_id. See NOTES.md"
)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        provider = CLIENT.tracer_provider or langwatch.client.Client._tracer_provider
        if provider is not None:
            provider.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
