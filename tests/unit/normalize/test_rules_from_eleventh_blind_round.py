"""Rules from the eleventh round of blind captures (ADR 0017, session 22): minimal traces
of the shapes the captures showed, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import run, span

from collector.core.records import Span
from evaluators.trajectory import StepKind

# LangSmith's OTel mode over the OpenAI Agents SDK: runs are `langsmith.span.kind`
# chain/llm/tool, a model call's request and reply are the Responses API's items.


def ls_span(n: int, name: str, kind: str, parent: int, **attributes: Any) -> Span:
    recorded = {"langsmith.span.kind": kind, **attributes}
    return span(n, name, recorded, parent=parent, start=n * 10, end=n * 10 + 5)


def reply(*items: dict[str, Any]) -> str:
    return json.dumps({"output": list(items)})


CALL = {"type": "function_call", "call_id": "call_1", "name": "lookup_invoice",
        "arguments": json.dumps({"invoice_id": 1042}), "id": "fc_1"}  # fmt: skip
ANSWER = {"type": "message", "role": "assistant",
          "content": [{"type": "output_text", "text": "Refunded.", "annotations": []}]}  # fmt: skip
QUESTION = json.dumps({"input": [{"role": "user", "content": "Refund invoice 1042"}]})
TOOLS = json.dumps(["lookup_invoice", "refund"])


def langsmith_run(agent_attributes: dict[str, Any]) -> list[Span]:
    return [
        ls_span(1, "support turn", "chain", 0),
        ls_span(2, "music_store_support", "chain", 1, **agent_attributes),
        ls_span(3, "Response", "llm", 2, **{"gen_ai.operation.name": "chat",
                "gen_ai.prompt": QUESTION, "gen_ai.completion": reply(CALL)}),
        ls_span(4, "lookup_invoice", "tool", 2, **{"gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup_invoice",
                "gen_ai.prompt": json.dumps({"invoice_id": 1042}),
                "gen_ai.completion": json.dumps({"total": 2.97})}),
        ls_span(5, "Response", "llm", 2, **{"gen_ai.operation.name": "chat",
                "gen_ai.prompt": QUESTION, "gen_ai.completion": reply(ANSWER)}),
    ]  # fmt: skip


def test_responses_api_items_under_output_are_the_reply() -> None:
    """The reply's ``function_call`` items are the requests (the id-less tool span takes
    the id of the request it ran); the last assistant message's ``output_text`` is the
    answer."""
    trajectory = run(*langsmith_run({"gen_ai.tool.definitions": TOOLS}))
    tools = [step for step in trajectory.steps if step.kind is StepKind.TOOL]
    assert [(step.name, step.call_id, step.args) for step in tools] == [
        ("lookup_invoice", "call_1", {"invoice_id": 1042})
    ]
    assert (trajectory.input, trajectory.output) == ("Refund invoice 1042", "Refunded.")


def test_a_wrapper_declaring_the_tools_is_the_agent_invocation() -> None:
    """The GenAI conventions record ``gen_ai.tool.definitions`` on model calls and agent
    invocations: a wrapper that records them is the agent, named by its span."""
    assert run(*langsmith_run({"gen_ai.tool.definitions": TOOLS})).agent == "music_store_support"


def test_a_wrapper_without_tool_definitions_stays_a_wrapper() -> None:
    assert run(*langsmith_run({})).agent == "support turn"
    empty = run(*langsmith_run({"gen_ai.tool.definitions": ""}))
    assert empty.agent == "support turn"
