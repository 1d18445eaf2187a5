"""Capture a LangGraph swarm (``langgraph-swarm``) traced by Langfuse's LangChain callback.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-lgswarm
    /tmp/cap-lgswarm/bin/pip install langgraph-swarm==0.1.0 langfuse==5.0.4 langchain==1.5.2 \
        langchain-core==1.8.3 langchain-openai==1.7.4 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 openai==3.57.0 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-common==1.45.2
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-lgswarm/bin/python tests/golden/capture/langgraph_swarm_langfuse.py [scenario ...]'

Captured with langgraph-swarm 0.1.0, langfuse 5.0.4, langchain 1.5.2, langchain-core 1.8.3,
langchain-openai 1.7.4, langgraph 1.2.24, langgraph-prebuilt 1.1.3, langgraph-checkpoint 4.3.2,
openai 3.57.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common / -exporter-otlp-proto-http
/ -proto 1.45.2, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up.
Writes ``tests/golden/traces/langgraph-swarm-langfuse/``.

Two agents in a ``langgraph_swarm.create_swarm`` (``default_active_agent="front_desk"``), both
real ``langchain.agents.create_agent`` graphs: ``front_desk`` whose only tool is the package's
``create_handoff_tool(agent_name="store")`` (``transfer_to_store``), and ``store`` holding the
five store tools as real ``StructuredTool``s (``handle_tool_error=True``: the refused refund
raises ``ToolException`` and becomes an error ``ToolMessage``) plus
``create_handoff_tool(agent_name="front_desk")`` (never called). Both use the real
``ChatOpenAI`` (Chat Completions, real ``openai`` client) pointed at a loopback HTTP server in
this process (``scripted_model.ChatCompletions``) whose answers this script routes: a request
offering ``transfer_to_store`` is the front desk's and gets the handoff call; a request
offering the store tools is the store agent's and gets the scenario script's next response
(its tool rounds, then the final text). In a swarm the agent handed to answers the user
itself: there is no hand-back. The handoff is langgraph-swarm's own (the tool returns
``Command(goto="store", graph=PARENT, update={"active_agent": "store", ...})``); nothing else
is faked. One ``app.invoke`` per user turn with Langfuse's ``langfuse.langchain.CallbackHandler``
in ``config["callbacks"]``.

``multi_turn``: LangGraph's memory (``InMemorySaver`` on the compiled swarm,
``configurable.thread_id`` = the session id; the swarm keeps ``active_agent`` there, so turns
2 and 3 start at the store agent) and Langfuse's documented
``metadata={"langfuse_session_id": ...}`` in the run config. One-shot scenarios run without
checkpointer, thread id or session id.

Instrumentation as in ``langfuse_langgraph.py``: ``Langfuse(public_key=dummy, secret_key=dummy,
base_url=http://127.0.0.1:9, tracer_provider=<common.make_provider>, span_exporter=<a second
in-memory BatchRecorder>, flush_at=2048, flush_interval=60)``; the files are written from the
provider's own ``BatchRecorder``; each scenario checks that Langfuse's exporter got exactly
the same spans (``langfuse_export_identical``). ``OTEL_EXPORTER_OTLP_*``, ``LANGFUSE_*``,
``LANGSMITH_*`` and ``LANGCHAIN_*`` variables are removed first.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_EXPORTER_OTLP", "LANGFUSE_", "LANGSMITH_", "LANGCHAIN_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
LANGFUSE_HOST = "http://127.0.0.1:9"  # closed port: the Langfuse API is never reachable
os.environ["LANGFUSE_HOST"] = LANGFUSE_HOST

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-langgraph-swarm-langfuse"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
LANGFUSE_EXPORT = common.BatchRecorder()  # what Langfuse's own processor would have sent

from langfuse import Langfuse  # noqa: E402

LANGFUSE = Langfuse(
    public_key="pk-lf-offline",
    secret_key="sk-lf-offline",
    base_url=LANGFUSE_HOST,
    tracer_provider=PROVIDER,
    span_exporter=LANGFUSE_EXPORT,
    flush_at=2048,
    flush_interval=60,
)

from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langfuse.langchain import CallbackHandler  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph_swarm import create_handoff_tool, create_swarm  # noqa: E402
from pydantic import SecretStr  # noqa: E402

FOLDER = Path(os.environ.get("CAPTURE_OUT") or common.TRACES) / "langgraph-swarm-langfuse"
PACKAGES = (
    "langgraph-swarm",
    "langfuse",
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
    "protobuf",
)

FRONT_DESK = "front_desk"
STORE = "store"
HANDOFF_TOOL = f"transfer_to_{STORE}"
FRONT_DESK_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. Hand every question about "
    f"tracks, albums, artists, invoices or refunds to the {STORE} agent."
)

_script = common.active_script


class Router:
    """The scripted model of both agents, told apart by the tools each request offers."""

    def __init__(self) -> None:
        self.front_desk_requests: dict[int, int] = {}  # per turn
        self.log: list[str] = []  # which agent asked, in order

    def reset(self) -> None:
        self.front_desk_requests.clear()
        self.log.clear()

    def __call__(self, body: scripted_model.Body) -> scripted_model.Body:
        script = _script()
        tools = {t["function"]["name"] for t in body.get("tools") or []}
        if HANDOFF_TOOL not in tools:
            if "lookup_invoice" not in tools:
                raise scripted_model.NotScripted(500, f"request from an unknown agent: {tools}")
            self.log.append(f"{script.turn}:{STORE}")
            return scripted_model.chat_completion(body)
        # The front desk: not a step of the scenario's script, but a model call of the turn.
        self.log.append(f"{script.turn}:{FRONT_DESK}")
        script.llm_calls[script.turn] += 1
        count = self.front_desk_requests.get(script.turn, 0)
        self.front_desk_requests[script.turn] = count + 1
        if count:
            raise scripted_model.NotScripted(500, "front desk asked twice in one turn")
        tag = script.scenario.name[:6]
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
            body,
            message,
            response_id=f"chatcmpl_{script.scenario.name}_{script.turn}fd",
            finish_reason="tool_calls",
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


def make_graph(checkpointer: InMemorySaver | None) -> Any:
    front_desk = create_agent(
        chat_model(),
        [create_handoff_tool(agent_name=STORE)],
        system_prompt=FRONT_DESK_PROMPT,
        name=FRONT_DESK,
    )
    store = create_agent(
        chat_model(),
        [*TOOLS, create_handoff_tool(agent_name=FRONT_DESK)],
        system_prompt=common.SYSTEM_PROMPT,
        name=STORE,
    )
    workflow = create_swarm([front_desk, store], default_active_agent=FRONT_DESK)
    return workflow.compile(checkpointer=checkpointer)


def _span_record(span: Any) -> tuple[Any, ...]:
    return (
        span.context.trace_id,
        span.context.span_id,
        span.name,
        json.dumps(dict(span.attributes or {}), sort_keys=True, default=str),
        span.status.status_code.name,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    LANGFUSE_EXPORT.batches.clear()
    MODEL.requests.clear()
    ROUTER.reset()
    graph = make_graph(InMemorySaver() if session else None)
    handler = CallbackHandler()
    config: dict[str, Any] = {"callbacks": [handler]}
    if session:
        config["configurable"] = {"thread_id": session}
        config["metadata"] = {"langfuse_session_id": session}
    PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        state = graph.invoke({"messages": [{"role": "user", "content": text}]}, config=config)
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
        LANGFUSE.flush()  # = PROVIDER.force_flush(): both processors export
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    ours = sorted(_span_record(s) for s in RECORDER.spans)
    langfuse_sent = sorted(_span_record(s) for s in LANGFUSE_EXPORT.spans)
    identical = ours == langfuse_sent
    if not identical:
        print(f"{name}: Langfuse's exporter got other spans than the provider", file=sys.stderr)
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
            "agents": {"root": FRONT_DESK, "sub_agents": [STORE], "handoff_tool": HANDOFF_TOOL},
            "model_requests_by_agent": list(ROUTER.log),
            "tool_messages_in_last_request": tool_messages_sent,
            "langfuse_export_identical": identical,
            "langfuse_export_batches": len([b for b in LANGFUSE_EXPORT.batches if b]),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "langgraph-swarm create_swarm of two create_agent graphs: front_desk (one tool: the "
    "package's handoff tool transfer_to_store) and store (the five store tools plus "
    "transfer_to_front_desk, never called), both ChatOpenAI over a scripted loopback Chat "
    "Completions server; traced by Langfuse's LangChain CallbackHandler (Langfuse Python SDK, "
    "OTel spans with langfuse.observation.* attributes) on our TracerProvider. Per turn the "
    "active agent (front_desk unless the checkpointed thread says store) runs; the front "
    "desk's model call requests transfer_to_store, the handoff tool returns a LangGraph "
    "Command to the parent graph, and the store agent runs its tool rounds and answers the "
    "user itself (no hand-back). See NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    LANGFUSE.shutdown()
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
