"""Rules from the fifth round of blind captures (ADR 0017, addendum of 2026-11-27,
rules 50-52): minimal traces of the shapes LiteLLM's and AG2's tracing showed, in the
GenAI conventions, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import genai_chat, run, span

from collector.core.records import Span
from evaluators.trajectory import Trajectory

USER = {"role": "user", "parts": [{"type": "text", "content": "refund invoice 877"}]}
CALL = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
ASKED = {"role": "assistant", "parts": [{"type": "text", "content": ""}], "tool_calls": [CALL]}


def answered(text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": "c1", "parts": [{"type": "text", "content": text}]}


def chat(n: int, sent: list[dict[str, Any]], reply_parts: list[dict[str, Any]]) -> Span:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.input.messages": json.dumps(sent),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": reply_parts}]),
    }
    return span(n, "chat m", attributes, parent=1)


def gateway_run(first_reply: list[dict[str, Any]]) -> Trajectory:
    """A turn seen only through an LLM gateway's spans: the first reply as recorded."""
    turn = span(1, "agent turn", {}, start=0, end=10**7)
    later = chat(3, [USER, ASKED, answered('{"total": 7}')], [{"type": "text", "content": "7"}])
    return run(turn, chat(2, [USER], first_reply), later)


# Rule 50: a model call whose recorded reply lost its calls takes them from the next
# call's history, where the conversation continues.


def test_calls_dropped_from_a_recorded_reply_are_read_from_the_next_history() -> None:
    trajectory = gateway_run([])  # (the gateway records the reply without its calls)
    [step] = trajectory.tool_calls
    assert (step.name, step.call_id, step.result, step.source) == (
        "lookup",
        "c1",
        {"total": 7},
        "messages",
    )


def test_a_reply_recorded_as_text_asked_for_nothing() -> None:
    trajectory = gateway_run([{"type": "text", "content": "let me look"}])
    assert trajectory.tool_calls == ()


# Rule 51: a failed call whose span names only the error's type takes the message the
# model was shown for it.


def test_a_bare_error_type_takes_the_error_the_model_was_shown() -> None:
    shown = "Error: RefundWindowExpired: invoice 877 is outside the 30-day window"
    failed = span(
        3,
        "execute_tool lookup",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": "{}",
            "error.type": "ExecutionError",
        },
        parent=1,
    )
    named = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shop"}
    agent = span(1, "invoke_agent shop", named, start=0, end=10**7)
    trajectory = run(
        agent,
        genai_chat(2, [{"id": "c1", "name": "lookup", "arguments": {}}]),
        failed,
        chat(4, [USER, ASKED, answered(shown)], [{"type": "text", "content": "sorry"}]),
    )
    [step] = trajectory.tool_calls
    assert step.error == shown
    plain = run(agent, genai_chat(2, [{"id": "c1", "name": "lookup", "arguments": {}}]), failed)
    assert plain.tool_calls[0].error == "ExecutionError"  # nothing shown: the type stays


# Rule 52: a run span whose recorded answer is its own request (a transcript written
# from the requester's side) gives no answer; the model's last reply does.


def test_a_run_answer_that_is_its_own_request_is_not_the_answer() -> None:
    def root(*recorded: tuple[str, str]) -> Span:
        request = [{"role": "user", "parts": [{"type": "text", "content": "refund 877"}]}]
        output = [
            {"role": role, "parts": [{"type": "text", "content": content}]}
            for role, content in recorded
        ]
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "customer",
            "gen_ai.input.messages": json.dumps(request),
            "gen_ai.output.messages": json.dumps(output),
        }
        return span(1, "conversation customer", attributes, start=0, end=10**7)

    model = genai_chat(2, [], text="Refunded: RF-877.")
    # the requester's side: its request as "assistant", the answer as "user" after it
    swapped = root(("assistant", "refund 877"), ("user", "Refunded: RF-877."))
    assert run(swapped, model).output == "Refunded: RF-877."
    # an answer that equals the request (a proofreader's), or a real one, stays
    assert run(root(("assistant", "refund 877")), model).output == "refund 877"
    assert run(root(("assistant", "All done.")), model).output == "All done."
