"""Rules from the sixth round of blind captures (ADR 0017, addendum of 2026-11-28):
minimal traces of the shapes the captures showed, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import genai_tool, run, sid, span

from collector.core.records import Span, StatusCode
from collector.normalize.detect import classify
from collector.normalize.tree import SpanTree
from collector.normalize.wrappers import no_agent_inside
from evaluators.trajectory import Trajectory


def chat(n: int, sent: Any, reply_parts: list[dict[str, Any]]) -> Span:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.input.messages": sent if isinstance(sent, str) else json.dumps(sent),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": reply_parts}]),
    }
    return span(n, "chat m", attributes, parent=1)


SYSTEM = [{"role": "system", "parts": [{"type": "text", "content": "You are the store."}]}]


def test_a_history_nested_past_the_decoders_depth_is_no_instructions() -> None:
    # (the fuzz test found it: a langfuse capture's scrambled history reached rule 49)
    trajectory = run(
        span(1, "Workflow.run", {}, start=0, end=10**7),
        chat(2, SYSTEM, [{"type": "tool_call", "id": "c", "name": "lookup", "arguments": {}}]),
        genai_tool(3, "lookup", '{"q": "x"}', call_id="c", **{"gen_ai.tool.call.result": "7"}),
        chat(4, "[" * 5000, [{"type": "text", "content": "done"}]),
    )  # fmt: skip
    assert [step.name for step in trajectory.tool_calls] == ["lookup"]


# Rule 53: a failed tool call's error copied onto the run root is no failure of the run
# when the loop went on (a model call after it) and answered.

REFUSED = "RefundWindowExpired: invoice 877 is outside the refund window"


def recovering_run(
    root_error: str, *, answer_after: bool, tool_message: str = REFUSED
) -> tuple[Span, ...]:
    agent = span(1, "invoke_agent shop", {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shop",
    }, start=0, end=10**7, status=StatusCode.ERROR, message=root_error)  # fmt: skip
    asked = [{"type": "tool_call", "id": "c", "name": "refund", "arguments": {}}]
    refund = genai_tool(3, "refund", '{"invoice": 877}', call_id="c")
    spans = (
        agent,
        chat(2, [USER], asked),
        refund._replace(status_code=StatusCode.ERROR, status_message=tool_message),
    )
    if answer_after:
        spans += (chat(4, [USER], [{"type": "text", "content": "Sorry, too late."}]),)
    return spans


USER = {"role": "user", "parts": [{"type": "text", "content": "refund invoice 877"}]}


def test_a_tool_error_copied_onto_the_root_is_no_failure_when_the_model_answered() -> None:
    trajectory = run(*recovering_run(REFUSED, answer_after=True))
    assert (trajectory.failed, trajectory.error) == (False, None)
    assert [step.error for step in trajectory.tool_calls] == [REFUSED]  # (the call failed)


def test_a_root_error_of_its_own_or_a_failure_nothing_followed_fails_the_run() -> None:
    own = run(*recovering_run("Timeout: the run took too long", answer_after=True))
    assert (own.failed, own.error) == (True, "Timeout: the run took too long")
    last = run(*recovering_run(REFUSED, answer_after=False))
    assert (last.failed, last.error) == (True, REFUSED)


def test_two_errors_without_a_message_are_no_evidence_of_a_copy() -> None:
    # (review: a root and a tool that fail with no message both read "error"; a guardrail
    # that failed the run after the answer is no copy of the tool's failure)
    trajectory = run(*recovering_run("", answer_after=True, tool_message=""))
    assert (trajectory.failed, trajectory.error) == (True, "error")


# Rule 54: spans of an agent's own loop are no hops: an agent span with nothing below
# it that names no agent, and a workflow inside an agent that holds no other agent.


def operation(n: int, op: str, name: str, parent: int, **attributes: Any) -> Span:
    return span(n, f"{op} {name}", {"gen_ai.operation.name": op, **attributes}, parent=parent)


def crew_turn(*inside_loop: Span) -> Trajectory:
    return run(
        operation(1, "invoke_workflow", "crew", 0, **{"gen_ai.workflow.name": "crew"}),
        operation(2, "invoke_agent", "store", 1, **{"gen_ai.agent.name": "store"}),
        operation(3, "invoke_workflow", "Executor", 2, **{"gen_ai.workflow.name": "Executor"}),
        *inside_loop,
    )


LOOP = (
    operation(4, "invoke_agent", "plan", 3),  # (a flow method: nothing below it, no name)
    chat(5, [USER], [{"type": "tool_call", "id": "c", "name": "lookup", "arguments": {}}]),
    genai_tool(6, "lookup", '{"q": "x"}', call_id="c", parent=3),
    operation(7, "invoke_agent", "finalize", 3),
    chat(8, [USER], [{"type": "text", "content": "done"}]),
)


def test_an_agents_own_loop_run_as_a_workflow_of_empty_spans_is_the_agents() -> None:
    trajectory = crew_turn(*(s._replace(parent_span_id=sid(3)) for s in LOOP))
    assert [(s.kind.value, s.name, s.agent) for s in trajectory.steps] == [
        ("llm", "m", "store"),
        ("tool", "lookup", "store"),
        ("llm", "m", "store"),
    ]
    assert (trajectory.agent, trajectory.agents) == ("store", ("store",))


def test_an_empty_unnamed_agent_span_outside_an_agents_loop_is_still_a_hop() -> None:
    # (review: a remote sub-agent's span, its work in another trace, named by its span
    # name only: gen_ai.agent.name is only conditionally required)
    remote = operation(3, "invoke_agent", "billing", 1)._replace(end_unix_nano=10**9)
    trajectory = run(
        operation(1, "invoke_agent", "store", 0, **{"gen_ai.agent.name": "store"}),
        chat(2, [USER], [{"type": "text", "content": "asking billing"}]),
        remote,
        chat(4, [USER], [{"type": "text", "content": "done"}]),
    )
    assert [(s.kind.value, s.name) for s in trajectory.steps] == [
        ("llm", "m"),
        ("agent", "billing"),
        ("llm", "m"),
    ]


def test_a_named_agent_inside_the_workflow_is_still_a_hop() -> None:
    billing = operation(9, "invoke_agent", "billing", 3, **{"gen_ai.agent.name": "billing"})
    work = genai_tool(10, "refund", '{"invoice": 1}', call_id="r", parent=9)
    trajectory = crew_turn(*(s._replace(parent_span_id=sid(3)) for s in LOOP), billing, work)
    assert ("agent", "billing") in [(s.kind.value, s.name) for s in trajectory.steps]
    assert [(s.name, s.agent) for s in trajectory.tool_calls][-1] == ("refund", "billing")


# CrewAI's template, whatever span records the request: the crew chat's history that
# CrewAI appends to the task text is no part of the request.


def test_the_crew_chat_history_appended_to_a_run_input_is_left_out() -> None:
    asked = "Which other albums by that artist do you sell?"
    history = "\n\nYou are a member of a crew collaborating to achieve a common goal. User: hi"
    sent = json.dumps([{"role": "user", "parts": [{"type": "text", "content": asked + history}]}])
    agent = operation(1, "invoke_agent", "store", 0, **{
        "gen_ai.agent.name": "store", "gen_ai.input.messages": sent,
    })  # fmt: skip
    trajectory = run(agent, chat(2, [USER], [{"type": "text", "content": "three"}]))
    assert trajectory.input == asked


# Token counts under the provider's usage names in Langfuse's free-form usage details.


def test_langfuse_usage_details_under_the_providers_names_are_token_counts() -> None:
    generation = span(2, "OpenAI-generation", {
        "langfuse.observation.type": "generation",
        "langfuse.observation.model.name": "m",
        "langfuse.observation.usage_details": '{"prompt_tokens": 70, "completion_tokens": 12}',
    }, parent=1)  # fmt: skip
    agent = span(1, "store", {"langfuse.observation.type": "agent"})
    [step] = run(agent, generation).steps
    assert (step.input_tokens, step.output_tokens) == (70, 12)


# Rule 60: a history that records no request at all (an instrumentation that drops the
# assistant messages holding only tool calls) pairs a call with the answer of its id.


def tool_answer(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id,
            "response": text}]}  # fmt: skip


def requests_lookup(n: int, sent: list[dict[str, Any]]) -> Span:
    return chat(n, sent, [{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {}}])


def test_a_history_without_the_request_pairs_the_call_with_the_answer_of_its_id() -> None:
    turn = span(1, "turn", {}, start=0, end=10**7)
    later = chat(3, [USER, tool_answer("c1", '{"total": 7}')], [{"type": "text", "content": "7"}])
    [step] = run(turn, requests_lookup(2, [USER]), later).tool_calls
    assert (step.name, step.call_id, step.result, step.source) == (
        "lookup",
        "c1",
        {"total": 7},
        "messages",
    )


def test_an_answer_of_another_id_or_before_the_last_user_message_is_not_the_calls() -> None:
    turn = span(1, "turn", {}, start=0, end=10**7)
    for history in (
        [USER, tool_answer("c9", '{"total": 7}')],  # another call's answer
        [tool_answer("c1", '{"total": 7}'), USER],  # an earlier turn's (ids repeat)
    ):
        later = chat(3, history, [{"type": "text", "content": "7"}])
        trajectory = run(turn, requests_lookup(2, [USER]), later)
        assert [(s.name, s.result) for s in trajectory.tool_calls] == [("lookup", None)]


def test_an_id_answered_twice_or_only_in_a_later_turn_pairs_nothing() -> None:
    # (second review: some SDKs reuse ids across the rounds of one turn, and ids repeat
    # across turns; only the next history, and only one answer with the id, pair a call)
    turn = span(1, "turn", {}, start=0, end=10**7)
    twice = [USER, tool_answer("c1", '{"total": 7}'), tool_answer("c1", '{"total": 8}')]
    later = chat(3, twice, [{"type": "text", "content": "7"}])
    trajectory = run(turn, requests_lookup(2, [USER]), later)
    assert [(s.name, s.result) for s in trajectory.tool_calls] == [("lookup", None)]
    second = {"role": "user", "parts": [{"type": "text", "content": "and invoice 878?"}]}
    next_turn = chat(3, [USER, second], [{"type": "text", "content": "looking"}])
    answered = chat(4, [USER, second, tool_answer("c1", '{"total": 8}')], [])
    trajectory = run(turn, requests_lookup(2, [USER]), next_turn, answered)
    assert next((s.name, s.result) for s in trajectory.tool_calls) == ("lookup", None)


def test_a_loop_of_many_empty_spans_is_walked_once() -> None:
    # (a loop of N empty flow spans asked for its verdict N times: N walks of N spans)
    empty = [operation(10 + k, "invoke_agent", "step", 3) for k in range(50)]
    spans = [
        operation(1, "invoke_workflow", "crew", 0, **{"gen_ai.workflow.name": "crew"}),
        operation(2, "invoke_agent", "store", 1, **{"gen_ai.agent.name": "store"}),
        operation(3, "invoke_workflow", "Executor", 2, **{"gen_ai.workflow.name": "Executor"}),
        *empty,
    ]
    tree = SpanTree(spans)
    roles = [classify(s, None)[0] for s in tree.spans]
    memo: dict[tuple[int, str], bool] = {}
    flow = [i for i, s in enumerate(tree.spans) if s.name == "invoke_agent step"]
    assert all(no_agent_inside(tree, roles, i, None, memo) for i in flow)
    assert list(memo.values()) == [True]  # one verdict, for the loop
