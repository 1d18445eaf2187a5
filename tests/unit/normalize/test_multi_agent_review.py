"""A second review's findings on the multi-agent rules (ADR 0017, rules 41-43): each
test failed on cc029e3. Minimal traces in the GenAI conventions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from support.span_kit import run, span

from collector.core.records import Span, StatusCode
from evaluators.trajectory import Trajectory


def agent(n: int, name: str, parent: int = 0, **kw: Any) -> Span:
    a = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return span(n, f"invoke_agent {name}", a, parent=parent, **kw)


def workflow() -> Span:
    return span(100, "run", {"gen_ai.operation.name": "invoke_workflow"}, start=0, end=10**9)


def chat(
    n: int,
    parent: int,
    *,
    request: str = "hello",
    reply: str = "",
    calls: Sequence[dict[str, Any]] = (),
    start: int | None = None,
    end: int | None = None,
) -> Span:
    parts = [{"type": "tool_call", **c} for c in calls]
    if reply:
        parts.append({"type": "text", "content": reply})
    return span(
        n,
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": request}]}]
            ),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
        },
        parent=parent,
        start=start,
        end=end,
    )


def tool(
    n: int,
    name: str,
    args: Any,
    result: str | None = None,
    *,
    parent: int = 1,
    call_id: str | None = None,
    start: int | None = None,
    end: int | None = None,
    **kw: Any,
) -> Span:
    a = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": json.dumps(args),
    }
    if call_id:
        a["gen_ai.tool.call.id"] = call_id
    if result is not None:
        a["gen_ai.tool.call.result"] = result
    return span(n, f"execute_tool {name}", a, parent=parent, start=start, end=end, **kw)


def show(t: Trajectory) -> list[tuple[str, str, str | None, bool, str | None]]:
    return [(s.kind.value, s.name, s.agent, s.executed, s.error) for s in t.steps]


# 1. (a) a generic tool that once ran a sub-agent: all its calls, genuine ones and a
#    genuinely failed one, become control; the error disappears from tool_errors.
def test_generic_tool_that_once_ran_an_agent() -> None:
    t = run(
        agent(1, "front"),
        chat(2, 1, calls=[{"id": "s1", "name": "search", "arguments": {"q": "a"}}]),
        tool(3, "search", {"q": "a"}, "3 hits", call_id="s1"),
        chat(4, 1, calls=[{"id": "s2", "name": "search", "arguments": {"q": "b"}}]),
        tool(5, "search", {"q": "b"}, call_id="s2", status=StatusCode.ERROR, message="index down"),
        chat(6, 1, calls=[{"id": "s3", "name": "search", "arguments": {"q": "c"}}]),
        tool(7, "search", {"q": "c"}, "web says c", call_id="s3", end=12_000),  # (ran an agent)
        agent(8, "web_researcher", parent=7),
        chat(9, 8, reply="web says c"),
        chat(13, 1, reply="done"),
    )
    assert [s.name for s in t.tool_calls] == ["search", "search"], show(t)
    assert t.tool_errors == 1


# 2. (a)+(c) an unexecuted request of the steering tool elsewhere in the run (cut short)
#    is reported as executed.
def test_unexecuted_request_of_steering_tool_stays_unexecuted() -> None:
    t = run(
        agent(1, "manager"),
        chat(2, 1, calls=[{"id": "d1", "name": "delegate", "arguments": {"coworker": "store"}}]),
        tool(3, "delegate", {"coworker": "store"}, "report", call_id="d1", end=8_000),
        agent(4, "store", parent=3),
        chat(5, 4, reply="report"),
        chat(9, 1, calls=[{"id": "d2", "name": "delegate", "arguments": {"coworker": "billing"}}]),
    )  # trace ends: d2 never ran
    last = [s for s in t.steps if s.name == "delegate"][-1]
    assert last.executed is False, show(t)


# 3. (c) the <object>.<method> split applies to names an attribute gave: a namespaced
#    agent "support.billing" is named by "support".
def test_dotted_agent_name_from_attribute_is_not_object_method() -> None:
    t = run(
        workflow(),
        agent(1, "triage", parent=100),
        chat(
            2, 1, calls=[{"id": "t1", "name": "create_ticket", "arguments": {"queue": "support"}}]
        ),
        tool(3, "create_ticket", {"queue": "support"}, '{"id": 7}', call_id="t1"),
        agent(5, "support.billing", parent=100),
        chat(6, 5, reply="done"),
    )
    assert ("tool", "create_ticket") in [(s.kind.value, s.name) for s in t.steps], show(t)


# 4. (d) a parallel branch that got the user's question, during a long real tool whose
#    argument is that question: the docstring says it "carries neither"; it does.
def test_parallel_branch_with_the_same_question_is_no_delegation() -> None:
    q = "Is the blue kettle in stock?"
    t = run(
        workflow(),
        agent(1, "front", parent=100, start=1_000, end=50_000),
        chat(
            2, 1, request=q, calls=[{"id": "w1", "name": "web_search", "arguments": {"query": q}}]
        ),
        tool(3, "web_search", {"query": q}, "kettle page", call_id="w1", start=3_000, end=40_000),
        agent(4, "critic", parent=100, start=4_000, end=20_000),  # a parallel branch
        chat(5, 4, request=q, reply="looks fine", start=5_000, end=6_000),
        chat(41, 1, reply="yes", start=41_000, end=42_000),
    )
    assert ("tool", "web_search") in [(s.kind.value, s.name) for s in t.steps], show(t)


# 7. (b) a plain-text answer that opens with the word "Error" and has a colon or a hyphen
#    81-120 characters on is read as a failed call.
def test_plain_text_opening_with_error_word_is_no_error() -> None:
    answers = [
        "Error rates for the checkout service stayed below the 0.1% objective for the whole"
        " week of March 12: no action needed.",
        "Exception requests for refunds older than thirty days are reviewed by the duty"
        " manager within two business days - submit the form at /refunds.",
    ]
    for answer in answers:
        t = run(
            agent(1, "ops"),
            chat(2, 1, calls=[{"id": "k", "name": "kb_search", "arguments": {"q": "x"}}]),
            tool(3, "kb_search", {"q": "x"}, answer, call_id="k"),
            chat(4, 1, reply="fine"),
        )
        assert t.tool_errors == 0, show(t)


# 8. (c) an unexecuted request now stops the walk back: the closing model call asked for
#    one more call the framework never ran (it had handed over): the hand-over before it
#    is lost.
def test_closing_call_whose_request_never_ran_keeps_the_hand_over() -> None:
    t = run(
        span(100, "invoke_swarm", {"gen_ai.operation.name": "invoke_swarm"}, start=0, end=10**7),
        agent(1, "front_desk", parent=100),
        chat(2, 1, calls=[{"id": "h1", "name": "handoff_to_agent", "arguments": {}}]),
        tool(3, "handoff_to_agent", {"agent_name": "store", "message": "m"}, call_id="h1"),
        chat(4, 1, calls=[{"id": "n1", "name": "note", "arguments": {"text": "bye"}}]),
        agent(5, "store", parent=100),
        chat(6, 5, reply="done"),
    )
    assert ("control", "handoff_to_agent") in [(s.kind.value, s.name) for s in t.steps], show(t)


# 9. (c) a weak hand-over beside a request the framework never ran (it handed over first).
def test_weak_hand_over_beside_an_unexecuted_request() -> None:
    t = run(
        workflow(),
        agent(1, "triage", parent=100),
        chat(
            2,
            1,
            calls=[
                {"id": "h1", "name": "transfer_to_agent", "arguments": {"agent_name": "store"}},
                {"id": "n1", "name": "note", "arguments": {"text": "bye"}},
            ],
        ),
        tool(3, "transfer_to_agent", {"agent_name": "store"}, call_id="h1"),
        agent(5, "store", parent=100),
        chat(6, 5, reply="done"),
    )
    assert ("control", "transfer_to_agent") in [(s.kind.value, s.name) for s in t.steps], show(t)
