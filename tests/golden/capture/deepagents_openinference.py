"""Capture a LangChain Deep Agents agent (``deepagents``) through OpenInference.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-deepagents-openinference
    /tmp/cap-deepagents-openinference/bin/pip install deepagents langchain-openai \
        openinference-instrumentation-langchain opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-deepagents-openinference/bin/python \
        tests/golden/capture/deepagents_openinference.py'

Captured with deepagents 0.7.32, langchain 1.5.2, langchain-core 1.8.3, langchain-openai
1.7.4, langgraph 1.2.24, langgraph-checkpoint 4.3.2, langgraph-prebuilt 1.1.3,
openinference-instrumentation-langchain 0.1.80, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk / -api 1.45.2, Python 3.12.1
(the exact versions of each run are in ``framework_versions`` of every expected.json).
Writes ``tests/golden/traces/deepagents-openinference/``.

One deep agent: ``deepagents.create_deep_agent(model, TOOLS, system_prompt=SYSTEM_PROMPT,
name="music_store_support")``, defaults otherwise: the framework adds its own middleware and
built-in tools (``write_todos``, the file-system tools ``ls`` / ``read_file`` / ``write_file``
/ ``edit_file`` / ``glob`` / ``grep`` / ``execute`` over its default in-state backend, and
``task`` for its ``general-purpose`` sub-agent); they are offered to the model on every
request and kept, and the scripted model only ever calls the five store tools (real
``StructuredTool``s, ``handle_tool_error=True``: the refused refund raises ``ToolException``
and becomes an error ``ToolMessage``). The model is the real ``ChatOpenAI`` (Chat Completions,
real ``openai`` client) pointed at a loopback HTTP server in this process
(``scripted_model.ChatCompletions``) answering the scenario script's next response. One
``agent.invoke`` per user turn.

Instrumentation: ``LangChainInstrumentor().instrument(tracer_provider=PROVIDER)``, default
``TraceConfig`` (inputs and outputs recorded: OpenInference's content capture is on by
default); spans go to ``common.make_provider``'s in-memory exporter, flushed after each turn
(one export batch per turn) and written by ``common.write_scenario``.

``multi_turn``: LangGraph's memory (``InMemorySaver`` passed as ``checkpointer=``,
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

PROVIDER, RECORDER = common.make_provider("music-store-support-deepagents")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402

LangChainInstrumentor().instrument(tracer_provider=PROVIDER)

from deepagents import create_deep_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from pydantic import SecretStr  # noqa: E402

FOLDER = common.TRACES / "deepagents-openinference"
PACKAGES = (
    "deepagents",
    "langgraph",
    "langgraph-checkpoint",
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


def chat_model() -> ChatOpenAI:
    return ChatOpenAI(
        model=common.MODEL_NAME,
        api_key=SecretStr("sk-offline"),
        base_url=BASE_URL,
        max_retries=0,
    )


def make_agent(checkpointer: InMemorySaver | None) -> Any:
    return create_deep_agent(
        chat_model(),
        TOOLS,
        system_prompt=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        checkpointer=checkpointer,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    MODEL.requests.clear()
    agent = make_agent(InMemorySaver() if session else None)
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
                state = agent.invoke(request, config=config)
        else:
            state = agent.invoke(request, config=config)
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    offered = sorted(
        t["function"]["name"] for t in (MODEL.requests[0].get("tools") if MODEL.requests else [])
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        extra={"tools_offered_to_model": offered, "model_requests": len(MODEL.requests)},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:4000], file=sys.stderr)


NOTES = (
    "LangChain Deep Agents create_deep_agent named music_store_support with the five store "
    "tools (StructuredTool, handle_tool_error=True) plus the framework's own built-in tools "
    "(todo list, file system, task sub-agent: offered, never called), ChatOpenAI over a "
    "scripted loopback Chat Completions server; traced by openinference-instrumentation-"
    "langchain (LangChainInstrumentor, OpenInference's tracer over LangChain callbacks). "
    "See NOTES.md for where each part is recorded."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
