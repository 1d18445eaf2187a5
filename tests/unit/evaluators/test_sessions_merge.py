"""Session trajectories: merging the turns of one session, and ``scope: session`` specs."""

from __future__ import annotations

from typing import Any

import pytest

from evaluators.runner import EvaluationRunner
from evaluators.session_merge import merge_session, session_trace_ids, session_turns
from evaluators.spec import SpecError, SpecSet, build_spec
from evaluators.trajectory import Step, StepKind, Trajectory

S = 1_000_000_000  # one second in nanoseconds


def turn(
    n: int,
    tools: tuple[str, ...],
    *,
    start_s: float,
    latency_s: float = 1.0,
    failed: bool = False,
    error: str | None = None,
    agents: tuple[str, ...] = ("support",),
    tokens: int | None = None,
    **fields: Any,
) -> Trajectory:
    """Turn ``n`` of session ``s-1``: one LLM step, then ``tools``, 0.1 s apart."""
    start = int(start_s * S)
    llm = Step(StepKind.LLM, "model", f"{n:02x}00", None, start, 0.1, input_tokens=tokens)
    steps = [llm] + [
        Step(StepKind.TOOL, name, f"{n:02x}{i + 1:02x}", None, start + (i + 1) * S // 10, 0.1)
        for i, name in enumerate(tools)
    ]
    values: dict[str, Any] = {
        "trace_id": f"{n:032x}",
        "service": "svc",
        "agent": agents[0] if agents else None,
        "session_id": "s-1",
        "input": f"question {n}",
        "output": f"answer {n}",
        "failed": failed,
        "latency_s": latency_s,
        "start_unix_nano": start,
        "steps": tuple(steps),
        "error": error,
        "agents": agents,
        "root_span_id": f"{n:02x}ff",
        "attributes": {"turn": n},
        "resource_attributes": {"service.name": "svc", "turn": n},
        "conventions": ("genai",),
    }
    return Trajectory(**(values | fields))


def test_turns_are_merged_in_start_order_whatever_the_order_given() -> None:
    first, second, third = (
        turn(1, ("lookup_track",), start_s=10),
        turn(2, ("lookup_artist",), start_s=20),
        turn(3, ("lookup_invoice", "refund"), start_s=30, latency_s=2.5),
    )
    merged = merge_session([third, first, second])
    assert merged.tool_names == ("lookup_track", "lookup_artist", "lookup_invoice", "refund")
    assert merged.steps == first.steps + second.steps + third.steps  # each turn kept as is
    assert (merged.input, merged.output) == ("question 1", "answer 3")
    assert merged.session_id == "s-1"
    assert merged.latency_s == pytest.approx(30 + 2.5 - 10)
    assert merged.start_unix_nano == first.start_unix_nano


def test_ids_are_the_last_turns_and_context_the_first_turns() -> None:
    first = turn(1, (), start_s=1, service="front", attributes={"env": "prod"})
    last = turn(2, (), start_s=2, service="back", attributes={"env": "dev"})
    merged = merge_session([last, first])
    assert merged.trace_id == last.trace_id and merged.root_span_id == last.root_span_id
    assert merged.service == "front"
    assert merged.attributes["env"] == "prod"
    assert merged.resource_attributes == first.resource_attributes
    assert session_turns(merged) == 2
    assert session_trace_ids(merged) == (first.trace_id, last.trace_id)


def test_turns_recorded_in_one_trace_name_that_trace_once() -> None:
    """A conversation recorded in one trace is one run per turn (ADR 0028): its turns
    share the trace id, which the session names once, in turn order."""
    shared = f"{7:032x}"
    turns = [
        turn(1, (), start_s=1, trace_id=shared),
        turn(2, (), start_s=2),
        turn(3, (), start_s=3, trace_id=shared),
    ]
    merged = merge_session(turns)
    assert session_turns(merged) == 3
    assert session_trace_ids(merged) == (shared, turns[1].trace_id)


def test_failure_is_any_turns_and_the_error_the_first_failed_turns() -> None:
    turns = [
        turn(1, (), start_s=1),
        turn(2, (), start_s=2, failed=True, error="timeout"),
        turn(3, (), start_s=3, failed=True, error="refused"),
    ]
    merged = merge_session(turns)
    assert merged.failed and merged.error == "timeout"
    assert not merge_session(turns[:1]).failed
    assert merge_session(turns[:1]).error is None


def test_agents_conventions_and_tokens_add_up() -> None:
    turns = [
        turn(1, (), start_s=1, agents=("router", "support"), tokens=10),
        turn(2, (), start_s=2, agents=("router", "refunds"), tokens=5, conventions=("oi",)),
    ]
    merged = merge_session(turns)
    assert merged.agent == "router"
    assert merged.agents == ("router", "support", "refunds")
    assert merged.conventions == ("genai", "oi")
    assert merged.input_tokens == 15


def test_an_incomplete_turn_makes_the_session_incomplete_and_empty_is_refused() -> None:
    turns = [turn(1, (), start_s=1), turn(2, (), start_s=2, incomplete=True)]
    assert merge_session(turns).incomplete
    assert not merge_session(turns[:1]).incomplete
    with pytest.raises(ValueError, match="at least one turn"):
        merge_session([])


def test_overlapping_turns_keep_their_steps_together() -> None:
    long = turn(1, ("a", "b"), start_s=1, latency_s=10)
    short = turn(2, ("c",), start_s=1.05, latency_s=0.5)
    merged = merge_session([short, long])
    assert merged.tool_names == ("a", "b", "c")
    assert merged.latency_s == pytest.approx(10)  # to the latest end, not the last turn's


def test_a_single_traces_trajectory_is_no_session() -> None:
    one = turn(1, (), start_s=1)
    assert session_turns(one) is None and session_trace_ids(one) == ()
    assert session_turns(one._replace(attributes={"evald.session.turns": True})) is None


# --- scope: session specs ----------------------------------------------------------------

SESSION_SPEC = {
    "id": "conversation",
    "scope": "session",
    "match": {"input_regex": "question 1"},
    "reference": {"trajectory": [{"tool": "lookup_track"}, {"tool": "refund"}]},
    "evaluators": [
        "trajectory_exact_match",
        {"name": "max_calls_per_tool", "id": "one_refund", "criteria": {"tools": {"refund": 1}}},
    ],
}
TRACE_SPEC = {"id": "per-turn", "evaluators": [{"name": "max_steps", "criteria": {"limit": 9}}]}


def test_scope_defaults_to_trace_and_rejects_other_values() -> None:
    assert build_spec(TRACE_SPEC).scope == "trace"
    assert build_spec(SESSION_SPEC).scope == "session"
    with pytest.raises(SpecError, match="scope"):
        build_spec({**SESSION_SPEC, "scope": "conversation"})


def test_specs_match_in_their_own_scope_only() -> None:
    specs = SpecSet([build_spec(TRACE_SPEC), build_spec(SESSION_SPEC)])
    first = turn(1, ("lookup_track",), start_s=1)
    session = merge_session([first, turn(2, ("refund",), start_s=2)])
    assert specs.has_session_specs and not SpecSet([build_spec(TRACE_SPEC)]).has_session_specs
    assert [spec.id for spec in specs.matching(first)] == ["per-turn"]
    assert [spec.id for spec in specs.matching(session, "session")] == ["conversation"]
    assert [b.id for b in specs.bound_for(session, "session")] == [
        "trajectory_exact_match",
        "one_refund",
    ]


def test_builtin_evaluators_judge_the_whole_conversation() -> None:
    spec = build_spec(SESSION_SPEC)
    twice = merge_session(
        [
            turn(1, ("lookup_track",), start_s=1),
            turn(2, ("refund",), start_s=2),
            turn(3, ("refund",), start_s=3),
        ]
    )
    once = merge_session([turn(1, ("lookup_track",), start_s=1), turn(2, ("refund",), start_s=2)])
    with EvaluationRunner() as runner:
        good = {o.evaluator: o.passed for o in runner.run(once, spec.bound)}
        bad = {o.evaluator: o.passed for o in runner.run(twice, spec.bound)}
    assert good == {"trajectory_exact_match": True, "one_refund": True}
    assert bad == {"trajectory_exact_match": False, "one_refund": False}
