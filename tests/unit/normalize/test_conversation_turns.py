"""Rule 85 (ADR 0028): a conversation's turns recorded in one trace are one run each.

Minimal traces of the shape fast-agent and mcp-agent showed (a bare span around the
whole conversation, one child per turn), and the shapes that must stay one run: the
steps of one agent, a ReAct loop feeding tool output back as a user message, a turn
that did not end with an answer, overlapping or non-continuing requests."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import RESOURCE, TRACE_ID, genai_tool, span

from collector.core.records import CompletionReason, Resource, Span, Trace
from collector.normalize import normalize, normalize_runs
from collector.sinks.jsonl import result_record
from evaluators.depth import EVERYTHING
from evaluators.results import NumericResult
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory

SYSTEM = {"role": "system", "parts": [{"type": "text", "content": "Store support."}]}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}]}


def asks(call_id: str, tool: str, **args: Any) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": tool, "arguments": args}
    return {"role": "assistant", "parts": [part]}


def answer(call_id: str, result: str) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call_id, "response": result}
    return {"role": "tool", "parts": [part]}


def chat(n: int, parent: int, sent: list[dict[str, Any]], reply: dict[str, Any]) -> Span:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.input.messages": json.dumps(sent),
        "gen_ai.output.messages": json.dumps([reply]),
    }
    return span(n, "chat m", attributes, parent=parent)


def turn(n: int, parent: int, start: int, end: int, name: str = "generate") -> Span:
    return span(n, name, {}, parent=parent, start=start, end=end)


# Turn 1 (spans 10-13): a lookup, then the answer; turn 2 (20-21): an answer; turn 3
# (30-31): an answer. Each later turn's request is the last one's, its answer, a question.
Q1, Q2, Q3 = "Album of Numb?", "Other albums?", "Refund it."
A1, A2, A3 = "The Wall.", "Animals.", "Refunded."
T1_FIRST = [SYSTEM, user(Q1)]
T1_LAST = [*T1_FIRST, asks("c1", "lookup_track", track="Numb"), answer("c1", '{"id": 3}')]
T2 = [*T1_LAST, said(A1), user(Q2)]
T3 = [*T2, said(A2), user(Q3)]


def conversation(root: Span | None, parent: int = 1, **changes: Any) -> list[Span]:
    spans = [
        turn(10, parent, 10_000, 19_000),
        chat(11, 10, T1_FIRST, asks("c1", "lookup_track", track="Numb")),
        genai_tool(12, "lookup_track", '{"track": "Numb"}', call_id="c1", parent=10),
        chat(13, 10, T1_LAST, said(A1)),
        turn(20, parent, 20_000, 29_000),
        chat(21, 20, changes.get("t2", T2), said(A2)),
        turn(30, parent, 30_000, 39_000),
        chat(31, 30, T3, said(A3)),
    ]
    return spans if root is None else [root, *spans]


def bare_root(**attributes: Any) -> Span:
    return span(1, "chat session", attributes, start=0, end=40_000)


def runs(spans: list[Span]) -> list[Trajectory]:
    trace = Trace(TRACE_ID, tuple(spans), CompletionReason.END_OF_INPUT, 0, 0)
    return [found.trajectory for found in normalize_runs(trace, None, EVERYTHING)]


def test_each_turn_of_a_conversation_in_one_trace_is_a_run() -> None:
    found = runs(conversation(bare_root(**{"session.id": "s-1"})))
    assert [(t.input, t.output) for t in found] == [(Q1, A1), (Q2, A2), (Q3, A3)]
    assert [t.tool_names for t in found] == [("lookup_track",), (), ()]
    assert [t.root_span_id for t in found] == [f"{n:016x}" for n in (10, 20, 30)]
    assert {t.trace_id for t in found} == {TRACE_ID.hex()}
    # the session only the dropped root recorded is each turn's, and no gap says otherwise
    assert all(t.session_id == "s-1" and "session_id" not in t.gaps for t in found)
    # each turn is timed by its own span, not the conversation's
    assert [round(t.latency_s * 1e6) for t in found] == [9, 9, 9]


def named_turns(spans: list[Span]) -> list[Span]:
    return [
        s._replace(attributes={"gen_ai.agent.name": "shop"}) if s.name == "generate" else s
        for s in spans
    ]


def test_a_turn_whose_span_never_came_is_still_complete() -> None:
    """The conversation's span never exported (mcp-agent): the turns are top-level, each
    naming its agent."""
    found = runs(named_turns(conversation(None)))
    assert [t.input for t in found] == [Q1, Q2, Q3]
    assert not any(t.incomplete for t in found)


def test_without_the_root_turns_naming_no_agent_stay_one_run() -> None:
    """They may be the steps of an agent whose span is still to come (an idle flush
    before the root ended): one run, incomplete."""
    [whole] = runs(conversation(None))
    assert whole.incomplete


def test_a_react_action_written_as_text_then_its_observation_is_no_turn() -> None:
    """A loop calling plain functions: the reply names an ``Action`` in its text, the
    observation comes back as a user message; no tool span between the two calls."""
    for written in ("Thought: look it up.\nAction: search[Numb]", "Action: lookup_track"):
        action = said(written)
        t2 = [*T1_LAST, action, user("Observation: The Wall")]
        spans = conversation(bare_root(), t2=t2)
        spans[4] = chat(13, 10, T1_LAST, action)
        assert len(runs(spans[:-2])) == 1, written  # (turn 3 left out: it would not continue)
    # the same shape with an answer and a question is a turn
    spans = conversation(bare_root(), t2=[*T1_LAST, said(A1), user("Observe this: and?")])
    assert len(runs(spans[:-2])) == 2


def test_normalize_reads_the_trace_as_one_run() -> None:
    trace = Trace(TRACE_ID, tuple(conversation(bare_root())), CompletionReason.END_OF_INPUT, 0, 0)
    whole = normalize(trace)
    assert whole.input == Q1 and whole.output == A3


def test_the_steps_of_one_agent_are_not_turns() -> None:
    named = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shop"}
    agent = span(1, "invoke_agent shop", named, start=0, end=40_000)
    assert len(runs(conversation(agent))) == 1


def test_a_request_that_does_not_continue_the_last_turn_is_no_new_turn() -> None:
    """A second agent handed a fresh prompt (a task pipeline) is not the user's turn."""
    assert len(runs(conversation(bare_root(), t2=[SYSTEM, user(Q2)]))) == 1
    # the history trimmed, or the previous answer not in it: no evidence of a turn
    assert len(runs(conversation(bare_root(), t2=[*T1_LAST, user(Q2)]))) == 1
    assert len(runs(conversation(bare_root(), t2=[*T1_LAST, said(A1), said("x"), user(Q2)]))) == 1
    two_turns = conversation(bare_root(), t2=[*T1_LAST, said(A1), user(Q2), said("x")])[:-2]
    assert len(runs(two_turns)) == 1
    assert len(runs(conversation(bare_root())[:-2])) == 2  # (what it is without the extra)
    # the history is another conversation's (its messages' roles differ)
    assert (
        len(runs(conversation(bare_root(), t2=[user("x"), *T1_LAST[1:], said(A1), user(Q2)]))) == 1
    )


def test_a_reply_requesting_a_call_then_a_user_message_is_no_turn() -> None:
    """The reply before the "new" message asked for a tool: the turn had not ended."""
    t2 = [*T1_LAST, asks("c5", "lookup_artist", artist="PF"), user(Q2)]
    assert len(runs(conversation(bare_root(), t2=t2))) == 1


def test_a_tool_result_sent_in_a_user_message_is_no_turn() -> None:
    """Anthropic's Messages API sends tool results as a ``user`` message."""
    result = {"role": "user", "parts": [answer("c5", "{}")["parts"][0]]}
    assert len(runs(conversation(bare_root(), t2=[*T1_LAST, said(A1), result]))) == 1


def test_tool_output_fed_back_as_a_user_message_is_no_turn() -> None:
    """A ReAct loop: the reply named an action, a tool ran, its observation came back as a
    user message. The tool ran between the two model calls: the turn had not ended."""
    spans = conversation(bare_root())
    spans.append(genai_tool(19, "lookup_artist", '{"name": "PF"}', call_id=None, parent=10))
    spans[-1] = spans[-1]._replace(start_unix_nano=19_500, end_unix_nano=19_800)
    assert len(runs(spans)) == 1


def test_a_turn_ending_on_a_requested_call_is_not_over() -> None:
    spans = conversation(bare_root())
    spans[4] = chat(13, 10, T1_LAST, asks("c9", "refund", invoice=1))
    assert len(runs(spans)) == 1


def test_overlapping_turns_are_not_a_conversation() -> None:
    spans = conversation(bare_root())
    spans[5] = turn(20, 1, 15_000, 29_000)  # starts before turn 1 ended
    assert len(runs(spans)) == 1


def test_a_model_call_beside_the_turns_keeps_the_trace_one_run() -> None:
    """Even one that continues the conversation: it is in no turn's span."""
    beside = chat(40, 1, [*T3, said(A3), user("And?")], said("late"))
    beside = beside._replace(start_unix_nano=40_000, end_unix_nano=40_500)
    assert len(runs([*conversation(bare_root()), beside])) == 1


def test_a_session_a_turn_records_itself_is_kept() -> None:
    spans = conversation(bare_root(**{"session.id": "outer"}))
    spans[5] = spans[5]._replace(attributes={"session.id": "inner"})
    assert [t.session_id for t in runs(spans)] == ["outer", "inner", "outer"]


def test_a_session_on_the_resource_alone_is_the_session() -> None:
    process = Resource("svc", {"service.name": "svc", "session.id": "app-7"})
    spans = [s._replace(resource=process) for s in conversation(bare_root())]
    assert {t.session_id for t in runs(spans)} == {"app-7"}
    assert normalize(Trace(TRACE_ID, (spans[0],), CompletionReason.END_OF_INPUT, 0, 0)).session_id
    assert RESOURCE.attributes.get("session.id") is None  # (the other tests: no session)


def test_each_turns_results_name_its_span() -> None:
    """The results file tells a trace's runs apart by their root span (``span_id``)."""
    outcome = Outcome("s", "latency", NumericResult(score=1.0), True, 0.0)
    records = [result_record(t, outcome) for t in runs(conversation(bare_root()))]
    assert len({r["trace_id"] for r in records}) == 1
    assert [r["span_id"] for r in records] == [f"{n:016x}" for n in (10, 20, 30)]


def test_a_turn_keeps_the_arrival_order_of_spans_that_start_together() -> None:
    """Start-time ties are broken by arrival (millisecond clocks): a turn's run keeps it."""
    spans = conversation(bare_root())
    twin = genai_tool(14, "lookup_artist", '{"artist": "PF"}', call_id=None, parent=10)
    tied = spans[3].start_unix_nano
    spans.insert(4, twin._replace(start_unix_nano=tied, end_unix_nano=tied + 100))
    trace = Trace(TRACE_ID, tuple(spans), CompletionReason.END_OF_INPUT, 0, 0)
    whole = normalize(trace).tool_names
    [first, *_] = runs(spans)
    assert first.tool_names == whole == ("lookup_track", "lookup_artist")
