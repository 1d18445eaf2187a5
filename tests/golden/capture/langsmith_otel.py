"""Capture LangSmith's OpenTelemetry mode on a LangGraph agent (``LANGSMITH_TRACING_MODE=otel``).

Not run in CI. Run it in a venv of its own (never evald's)::

    python3.12 -m venv /tmp/cap-langsmith
    /tmp/cap-langsmith/bin/pip install langchain langgraph langsmith opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-langsmith/bin/python tests/golden/capture/langsmith_otel.py [scenario ...]

Writes ``tests/golden/traces/langchain-langsmith-otel/``. Real ``langchain.agents.create_agent``
graph (LangGraph, ``InMemorySaver`` memory per thread), real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an
error ``ToolMessage``) and LangSmith's own tracer, which in otel mode writes OTel spans
to the global ``TracerProvider`` (no LangSmith API is contacted: the endpoint points to
a closed local port). Only the chat model is scripted (a ``BaseChatModel`` subclass).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.update(
    {
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_TRACING_MODE": "otel",
        "LANGSMITH_API_KEY": "offline",
        "LANGSMITH_ENDPOINT": "http://127.0.0.1:9",
        "LANGSMITH_PROJECT": "music-store-golden",
    }
)

import common
from opentelemetry import trace

PROVIDER, RECORDER = common.make_provider("music-store-support-langsmith")
trace.set_tracer_provider(PROVIDER)

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_core.tracers.langchain import wait_for_all_tracers  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

FOLDER = common.TRACES / "langchain-langsmith-otel"


_script = common.active_script


class ScriptedChatModel(BaseChatModel):
    """Answers each call with the scenario script's next response."""

    model_name: str = common.MODEL_NAME  # becomes ls_model_name, as for real chat models

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": common.MODEL_NAME}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        calls, final = _script().next_response()
        prompt_tokens = 50 + 10 * len(messages)
        usage = {
            "input_tokens": prompt_tokens,
            "output_tokens": 12,
            "total_tokens": prompt_tokens + 12,
        }
        message = AIMessage(
            content=final or "",
            tool_calls=[{"id": i, "name": n, "args": a, "type": "tool_call"} for i, n, a in calls],
            usage_metadata=usage,  # type: ignore[arg-type]
            response_metadata={"model_name": common.MODEL_NAME},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


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


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    graph = create_agent(
        ScriptedChatModel(),
        TOOLS,
        system_prompt=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        checkpointer=InMemorySaver(),
    )
    thread = scenario.session_id or f"thread-{name}"
    metadata = {"user_id": "customer-17"}
    if scenario.session_id:
        metadata["session_id"] = scenario.session_id
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        state = graph.invoke(
            {"messages": [{"role": "user", "content": text}]},
            config={"configurable": {"thread_id": thread}, "metadata": metadata},
        )
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
        wait_for_all_tracers()
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(
            "langsmith", "langchain", "langchain-core", "langgraph", "opentelemetry-sdk"
        ),
        notes=(
            "session via run metadata session_id (langsmith.metadata.session_id); every run "
            "also carries langsmith.metadata.thread_id ('thread-<scenario>' for one-shot "
            "scenarios) and langsmith.trace.session_name = the LangSmith project, not a "
            "session. The refused refund raises ToolException (handle_tool_error=True): "
            "status OK, the error only as status 'error' in the ToolMessage"
        ),
        session_id=scenario.session_id,
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
