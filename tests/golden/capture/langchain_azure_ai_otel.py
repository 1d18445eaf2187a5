"""Capture langchain-azure-ai's ``AzureAIOpenTelemetryTracer`` on a LangGraph agent.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-azure
    /tmp/cap-azure/bin/pip install 'langchain-azure-ai[opentelemetry]' langchain langgraph \
        langchain-openai opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    # the [opentelemetry] extra (azure-monitor-opentelemetry) pins the SDK to 1.45.1:
    /tmp/cap-azure/bin/pip install opentelemetry-exporter-otlp-proto-common==1.45.1 \
        opentelemetry-proto==1.45.1
    /tmp/cap-azure/bin/python tests/golden/capture/langchain_azure_ai_otel.py [scenario ...]

Captured with langchain-azure-ai 1.2.12 (its tracer module imports azure-monitor-opentelemetry
1.8.11 and opentelemetry-semantic-conventions-ai 0.5.1, the ``[opentelemetry]`` extra, but
configures none of it here), langchain 1.5.2, langchain-core 1.8.3, langchain-openai 1.7.4,
langgraph 1.2.24, langgraph-prebuilt 1.1.3, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.1, protobuf 7.36.2, Python 3.12.1. Writes
``tests/golden/traces/langgraph-azure-ai-otel/``.

Real ``langchain.agents.create_agent`` graph (LangGraph) with real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an error
``ToolMessage``, LangChain's idiom) and the real ``ChatOpenAI`` (Chat Completions, real
``openai`` client) pointed at a loopback HTTP server in this process that scripts the model's
answers (``scripted_model.ChatCompletions``); nothing else is faked. One ``graph.invoke`` per
user turn. ``multi_turn`` keeps the conversation in a LangGraph checkpointer thread
(``InMemorySaver``, ``configurable.thread_id`` = the session id); the one-shot scenarios run
without checkpointer or thread id.

Instrumentation: the package's own ``AzureAIOpenTelemetryTracer`` (a LangChain callback
handler, documented usage: ``config={"callbacks": [tracer]}`` on each invoke), constructed
with ``enable_content_recording=True`` (its default), ``name`` = the service's tracer name and
``auto_configure_azure_monitor=False``: it then configures no Azure Monitor exporter and takes
its tracer from the global OpenTelemetry ``TracerProvider`` (``trace.get_tracer`` in its
``__init__``), which is ours, set before. Its meters go to the global no-op meter provider.
No Azure endpoint, credential or connection string is given or contacted; the package is not
modified. ``OTEL_*``, ``AZURE_*`` and ``APPLICATION_INSIGHTS_CONNECTION_STRING`` are removed
first: nothing is sent anywhere. The tracer's LangGraph options are its defaults
(``trace_all_langgraph_nodes=False``, ``compat_create_agent_filtering=True``,
``trace_state=False``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "AZURE_", "APPLICATION"))]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-langgraph-azure-ai"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)

from langchain.agents import create_agent  # noqa: E402
from langchain_azure_ai.callbacks.tracers import AzureAIOpenTelemetryTracer  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from pydantic import SecretStr  # noqa: E402

FOLDER = common.TRACES / "langgraph-azure-ai-otel"
PACKAGES = (
    "langchain-azure-ai",
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-prebuilt",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


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


def make_tracer() -> AzureAIOpenTelemetryTracer:
    tracer = AzureAIOpenTelemetryTracer(
        enable_content_recording=True,
        name=SERVICE,
        auto_configure_azure_monitor=False,
    )
    assert trace.get_tracer_provider() is PROVIDER, "the tracer replaced the tracer provider"
    return tracer


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    MODEL.requests.clear()
    graph = make_graph(InMemorySaver() if session else None)
    tracer = make_tracer()  # one per scenario, as an application would hold one
    config: dict[str, Any] = {"callbacks": [tracer]}
    if session:
        config["configurable"] = {"thread_id": session}
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        state = graph.invoke({"messages": [{"role": "user", "content": text}]}, config=config)
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    tool_messages_sent = [
        message["content"]
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "LangChain create_agent (LangGraph) + ChatOpenAI over a scripted loopback Chat Completions "
    "server, traced by langchain-azure-ai's AzureAIOpenTelemetryTracer (a LangChain callback in "
    "config callbacks; auto_configure_azure_monitor=False, global SDK provider). Per turn one "
    "trace: invoke_agent <agent name> (root, CLIENT; gen_ai.agent.name = create_agent's name; "
    "gen_ai.input.messages = the LAST model request's input (the whole thread, earlier turns "
    "too, system prompt apart in gen_ai.system_instructions); gen_ai.output.messages = every "
    "assistant text of the thread state (earlier turns' answers first); usage summed) with "
    "children, in order, chat <model> (CLIENT; input history with tool_call / "
    "tool_call_response parts and ids, output tool_call parts or the final text) and "
    "execute_tool <tool> (INTERNAL, siblings of the chat spans: gen_ai.tool.call.id, "
    "gen_ai.tool.call.arguments JSON, gen_ai.tool.call.result = JSON {name, tool_call_id, "
    "content}). No span for LangGraph's model/tools nodes. The refused refund raises "
    "ToolException (handle_tool_error=True): span status OK, no error.type, and the "
    "ToolMessage's status='error' is dropped everywhere: the error is only the message text. "
    "multi_turn: thread_id recorded as gen_ai.conversation.id on every span; one-shot "
    "scenarios run without thread id (no conversation id)"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
