"""Capture a LangGraph multi-agent supervisor (``langgraph-supervisor``) through OpenInference.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-lgsup
    /tmp/cap-lgsup/bin/pip install langgraph-supervisor langgraph langchain langchain-openai \
        openinference-instrumentation-langchain opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-lgsup/bin/python tests/golden/capture/langgraph_supervisor_openinference.py'

Captured with langgraph-supervisor 0.0.31, langgraph 1.2.24, langgraph-prebuilt 1.1.3,
langchain 1.5.2, langchain-core 1.8.3, langchain-openai 1.7.4, openai 3.57.0,
openinference-instrumentation-langchain 0.1.80, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1.
Writes ``tests/golden/traces/langgraph-supervisor-openinference/``.

Two agents: ``langgraph_supervisor.create_supervisor`` builds the root agent
(``music_store_support``, a prebuilt ReAct agent whose only tool is the package's own
handoff tool ``transfer_to_store``) and the ``store`` sub-agent is a real
``langchain.agents.create_agent`` graph holding the five store tools as real
``StructuredTool``s (``handle_tool_error=True``: the refused refund raises ``ToolException``
and becomes an error ``ToolMessage``, LangChain's idiom). Both use the real ``ChatOpenAI``
(Chat Completions, real ``openai`` client) pointed at a loopback HTTP server in this process
(``scripted_model.ChatCompletions``) whose answers this script routes: a request offering
``transfer_to_store`` is the supervisor's (first in a turn: the handoff call; after the store
agent handed back: the final answer), a request offering the store tools is the store agent's
and gets the scenario script's next response (its tool rounds, then the final text). The
handoff and the hand-back are langgraph-supervisor's own (``Command(goto=..., graph=PARENT)``
and its ``transfer_back_to_<supervisor>`` message pair); nothing else is faked. One
``app.invoke`` per user turn.

``multi_turn``: LangGraph's memory (``InMemorySaver`` on the compiled supervisor workflow,
``configurable.thread_id`` = the session id) and OpenInference's documented
``using_session(session_id)`` around each turn. The one-shot scenarios run with neither.
``OTEL_EXPORTER_OTLP_*`` and LangSmith's tracing variables are removed: nothing is sent
anywhere (and the run is meant for a network namespace with only loopback up).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [
    n
    for n in os.environ
    if n.startswith(("OTEL_EXPORTER_OTLP", "LANGSMITH_", "LANGCHAIN_", "OPENAI_"))
]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-langgraph-supervisor")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402

LangChainInstrumentor().instrument(tracer_provider=PROVIDER)

from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph_supervisor import create_supervisor  # noqa: E402
from pydantic import SecretStr  # noqa: E402

FOLDER = common.TRACES / "langgraph-supervisor-openinference"
PACKAGES = (
    "langgraph-supervisor",
    "langgraph",
    "langgraph-prebuilt",
    "langchain",
    "langchain-core",
    "langchain-openai",
    "openai",
    "openinference-instrumentation-langchain",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)
SUPERVISOR = common.AGENT_NAME
STORE = "store"
HANDOFF_TOOL = f"transfer_to_{STORE}"
SUPERVISOR_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. Hand every question about "
    f"tracks, albums, artists, invoices or refunds to the {STORE} agent, then give the "
    "customer its answer."
)

_script = common.active_script


class Router:
    """The scripted model of both agents, told apart by the tools each request offers."""

    def __init__(self) -> None:
        self.supervisor_requests: dict[int, int] = {}  # per turn
        self.store_finals: dict[int, str | None] = {}  # the store agent's answer, per turn
        self.log: list[str] = []  # which agent asked, in order

    def reset(self) -> None:
        self.supervisor_requests.clear()
        self.store_finals.clear()
        self.log.clear()

    def __call__(self, body: scripted_model.Body) -> scripted_model.Body:
        script = _script()
        tools = {t["function"]["name"] for t in body.get("tools") or []}
        if HANDOFF_TOOL not in tools:
            self.log.append(f"{script.turn}:{STORE}")
            answer = scripted_model.chat_completion(body)
            self.store_finals[script.turn] = answer["choices"][0]["message"]["content"]
            return answer
        # The supervisor: not a step of the scenario's script, but a model call of the turn.
        self.log.append(f"{script.turn}:{SUPERVISOR}")
        script.llm_calls[script.turn] += 1
        count = self.supervisor_requests.get(script.turn, 0)
        self.supervisor_requests[script.turn] = count + 1
        tag = script.scenario.name[:6]
        response_id = f"chatcmpl_{script.scenario.name}_{script.turn}sup{count}"
        if count == 0:  # hand the request over to the store agent
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_handoff_{tag}_{script.turn}",
                        "type": "function",
                        "function": {"name": HANDOFF_TOOL, "arguments": "{}"},
                    }
                ],
            }
            return scripted_model.completion(
                body, message, response_id=response_id, finish_reason="tool_calls"
            )
        if script.turn not in self.store_finals:
            raise scripted_model.NotScripted(500, "supervisor asked again before the handoff ran")
        final = script.scenario.turns[script.turn].final  # relays the store agent's answer
        return scripted_model.completion(
            body,
            {"role": "assistant", "content": final},
            response_id=response_id,
            finish_reason="stop",
        )


ROUTER = Router()
MODEL = scripted_model.ChatCompletions(ROUTER)  # MODEL.requests: every request body it received
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


def chat_model() -> ChatOpenAI:
    return ChatOpenAI(
        model=common.MODEL_NAME,
        api_key=SecretStr("sk-offline"),
        base_url=BASE_URL,
        max_retries=0,
    )


def make_app(checkpointer: InMemorySaver | None) -> Any:
    store_agent = create_agent(chat_model(), TOOLS, system_prompt=common.SYSTEM_PROMPT, name=STORE)
    workflow = create_supervisor(
        [store_agent],
        model=chat_model(),
        prompt=SUPERVISOR_PROMPT,
        supervisor_name=SUPERVISOR,
    )
    return workflow.compile(checkpointer=checkpointer)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    MODEL.requests.clear()
    ROUTER.reset()
    app = make_app(InMemorySaver() if session else None)
    config: dict[str, Any] = {"configurable": {"thread_id": session}} if session else {}
    PROVIDER.force_flush()
    assert not RECORDER.spans, "graph construction made spans"
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        request = {"messages": [{"role": "user", "content": text}]}
        if session:
            with using_session(session):
                state = app.invoke(request, config=config)
        else:
            state = app.invoke(request, config=config)
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
        extra={
            "agents": {"root": SUPERVISOR, "sub_agents": [STORE], "handoff_tool": HANDOFF_TOOL},
            "model_requests_by_agent": list(ROUTER.log),
            "store_agent_finals": [ROUTER.store_finals.get(t) for t in range(len(finals))],
            "tool_messages_in_last_request": tool_messages_sent,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:4000], file=sys.stderr)


NOTES = (
    "langgraph-supervisor create_supervisor: root agent music_store_support (prebuilt ReAct "
    "agent, one tool: the package's handoff tool transfer_to_store) and sub-agent store "
    "(langchain create_agent with the five store tools), both ChatOpenAI over a scripted "
    "loopback Chat Completions server; traced by openinference-instrumentation-langchain "
    "(LangChainInstrumentor, OpenInference's tracer over LangChain callbacks). Per turn the "
    "supervisor's model call requests transfer_to_store, the handoff tool returns a LangGraph "
    "Command to the parent graph, the store agent runs its tool rounds and answers, the "
    "package appends its transfer_back_to_music_store_support message pair (no tool ran), and "
    "the supervisor's second model call gives the final answer (the store agent's text, "
    "relayed). See NOTES.md for where each part is recorded."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
