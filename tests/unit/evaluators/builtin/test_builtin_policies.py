"""Policies without a reference: required / forbidden / ordered tools, and budgets."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

import pytest
from pydantic import ValidationError
from support.builtin_kit import agent, calls, golden_runs, run, score, step, trajectory, value
from support.captures import not_read
from support.paths import GOLDEN

from evaluators.builtin.limits import (
    MaxCallsPerTool,
    MaxLatency,
    MaxSteps,
    RepeatedCalls,
    ToolErrorRate,
    ToolLoops,
    longest_loop,
)
from evaluators.builtin.policies import (
    EssentialToolsPresent,
    ForbiddenTools,
    OrderConstraint,
    ToolOrder,
)
from evaluators.call_identity import (
    MAX_DEPTH,
    PAIRWISE_LIMIT,
    call_identities,
    call_key,
    surely_different,
)
from evaluators.results import BooleanResult, NumericResult


def seed_003_essential_tools_present(instance: dict, required_tools: list) -> dict:  # type: ignore[type-arg]
    """Vertex AI's custom metric, verbatim from seed 003 (default argument dropped)."""
    trajectory = instance["predicted_trajectory"]
    tools_present = [tool_used["tool_name"] for tool_used in trajectory]
    if len(required_tools) == 0:
        return {"essential_tools_present": 1}
    score = 0
    for tool in required_tools:
        if tool in tools_present:
            score += 1
    return {
        "essential_tools_present": score / len(required_tools),
    }


@pytest.mark.parametrize(
    ("used", "required"),
    [
        (["get_user_preferences", "set_temperature"], ["get_user_preferences", "set_temperature"]),
        (["set_device_info"], ["tool1", "tool2"]),
        (["tool1"], ["tool1", "tool2"]),
        (["tool1", "tool1"], ["tool1", "tool1", "tool2"]),
        ([], []),
        (["a"], []),
    ],
)
def test_essential_tools_present_is_vertex_custom_metric(
    used: list[str], required: list[str]
) -> None:
    instance = {"predicted_trajectory": [{"tool_name": name} for name in used]}
    expected = seed_003_essential_tools_present(instance, required)["essential_tools_present"]
    assert score(EssentialToolsPresent, calls(*used), {"tools": required}) == expected


def test_essential_tools_present_names_the_missing_and_ignores_unexecuted_calls() -> None:
    traj = trajectory(step("lookup_invoice"), step("refund", executed=False))
    result = run(EssentialToolsPresent, traj, {"tools": ["lookup_invoice", "refund"]})
    assert isinstance(result, NumericResult) and result.score == 0.5
    assert result.explanation == "missing: refund"


def test_forbidden_tools() -> None:
    criteria = {"tools": ["refund", "delete_customer"]}
    assert value(ForbiddenTools, calls("lookup_track"), criteria) is True
    result = run(ForbiddenTools, calls("refund", "refund", "lookup"), criteria)
    assert isinstance(result, BooleanResult) and result.value is False
    assert result.explanation == "forbidden tool called: refund (2 call(s))"
    assert result.details == {"called": {"refund": 2}}


def test_forbidden_tools_can_count_requested_calls() -> None:
    traj = trajectory(step("refund", executed=False))
    assert value(ForbiddenTools, traj, {"tools": ["refund"]}) is True
    assert value(ForbiddenTools, traj, {"tools": ["refund"]}, count_requested=True) is False
    with pytest.raises(ValidationError):
        ForbiddenTools.criteria_model.model_validate({"tools": []})


@pytest.mark.parametrize(
    "form",
    ["lookup_invoice before refund", "  lookup_invoice   BEFORE refund ",
     ["lookup_invoice", "refund"], {"first": "lookup_invoice", "then": "refund"}],
)  # fmt: skip
def test_order_constraint_forms(form: Any) -> None:
    rule = OrderConstraint.model_validate(form)
    assert (rule.first, rule.then) == ("lookup_invoice", "refund")
    assert rule.label() == "lookup_invoice before refund"


@pytest.mark.parametrize("form", ["refund after lookup", ["a", "b", "c"], "a before"])
def test_order_constraint_rejects_other_forms(form: Any) -> None:
    with pytest.raises(ValidationError):
        OrderConstraint.model_validate(form)


@pytest.mark.parametrize(
    ("names", "strict", "lenient"),
    [
        (["lookup_invoice", "refund"], True, True),
        (["refund", "lookup_invoice"], False, False),  # too late
        (["refund"], False, True),  # never: a violation unless require_first is off
        (["lookup_invoice"], True, True),  # no refund: nothing to check
        (["lookup_invoice", "refund", "refund"], True, True),
        (["refund", "lookup_invoice", "refund"], False, False),  # the first refund was early
    ],
)
def test_tool_order(names: list[str], strict: bool, lenient: bool) -> None:
    criteria = {"constraints": ["lookup_invoice before refund"]}
    assert value(ToolOrder, calls(*names), criteria) is strict
    assert value(ToolOrder, calls(*names), criteria, require_first=False) is lenient


def test_tool_order_reproduces_the_labelled_violations_of_every_framework() -> None:
    checked = 0
    for golden in golden_runs(text_needed=False):  # tool names only
        constraints = golden.labels["ordering_constraints"]
        labelled = golden.labels["labels"].get("violated_constraints", [])
        violated = []
        for turn in golden.turns:
            result = run(ToolOrder, turn, {"constraints": constraints}, require_first=False)
            assert result.details is not None
            violated += result.details["violated"]
        assert violated == [f"{a} before {b}" for a, b in labelled], golden[:2]
        assert bool(violated) is golden.labels["labels"]["order_violation"]
        checked += 1
    labelled = [
        (p.parent.name, p.name.split(".")[0]) for p in GOLDEN.glob("traces/*/*.expected.json")
    ]
    assert checked == len([pair for pair in labelled if not_read(*pair) is None])


def test_tool_order_counts_agent_steps_when_the_spec_does() -> None:
    traj = trajectory(agent("refund_agent"), step("refund"))
    criteria = {"constraints": ["refund_agent before refund"]}
    assert value(ToolOrder, traj, criteria) is False  # tools only: refund_agent never ran
    assert value(ToolOrder, traj, criteria, step_kinds=["agent", "tool"]) is True


def test_max_steps() -> None:
    traj = trajectory(step("a"), step("b"), step("c", executed=False), agent("x"))
    assert value(MaxSteps, traj, {"limit": 2}) is True
    assert value(MaxSteps, traj, {"limit": 1}) is False
    assert value(MaxSteps, traj, {"limit": 2}, step_kinds=["agent", "tool"]) is False
    result = run(MaxSteps, traj, {"limit": 1})
    assert result.explanation == "2 step(s), limit 1"


def test_max_calls_per_tool() -> None:
    traj = calls("lookup", "lookup", "refund", "refund")
    assert value(MaxCallsPerTool, traj, {"limit": 2}) is True
    assert value(MaxCallsPerTool, traj, {"tools": {"refund": 1}}) is False
    assert value(MaxCallsPerTool, traj, {"limit": 1, "tools": {"lookup": 2, "refund": 2}}) is True
    result = run(MaxCallsPerTool, traj, {"limit": 1, "tools": {"lookup": 3}})
    assert result.explanation == "over the limit: refund 2 > 1"
    with pytest.raises(ValidationError, match="give `limit`"):
        MaxCallsPerTool.criteria_model.model_validate({})


def test_repeated_calls_compare_name_and_arguments() -> None:
    traj = trajectory(step("lookup", {"q": 1}), step("lookup", {"q": 2}), step("lookup", {"q": 1}))
    assert value(RepeatedCalls, traj, {}) is False
    assert value(RepeatedCalls, traj, {"max_identical": 2}) is True
    result = run(RepeatedCalls, traj, {})
    assert result.details is not None and result.details["repeated"] == {'lookup({"q": 1})': 2}
    assert value(RepeatedCalls, calls("a", "b", "c"), {}) is True


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "args",
    [
        [{"q": 1, "r": [1, 2]}, {"r": [1, 2], "q": 1}],  # key order is not identity
        [{"q": float("nan")}, {"q": None}],  # msgspec would write both as null
        [{"q": 1}, {"q": 1.0}, {"q": True}, {"q": "1"}],
        [{"q": 2**70}, {"q": 2**70 + 1}],
        [{"when": {1, 2}}, {"when": {1, 2}}, {"when": "{1, 2}"}],  # json.dumps's default=str
        [b"abc", "b'abc'", datetime(2024, 1, 2, 3, 4), "2024-01-02 03:04:00"],
        [None, {}, []],
        [{"q": 0.0}, {"q": -0.0}, {"q": 0}, {"q": 0.0}],  # equal, yet written apart
        [{"q": float("nan")}, {"q": float("nan")}, {"q": float("inf")}],
        [[1, 2], (1, 2), [1, 2, 3], [2, 1]],  # a tuple is written as an array
        [{1: "a"}, {"1": "a"}, {"2": "a"}],  # json.dumps writes 1 and "1" as one key
        [{"a": 1}, {"b": 1}, {"a": 1, "b": 1}],
        [{"a": [1, {"c": "x"}]}, {"a": [1, {"c": "y"}]}, {"a": [1, {"c": "x"}]}],
        # json.dumps writes a character beyond U+FFFF and its two surrogates alike
        [{"q": "\U0001f400"}, {"q": "\ud83d\udc00"}, {"q": "\u00e9"}, {"q": "e"}],
        [{"\U0001f400": 1}, {"\ud83d\udc00": 1}, {"\u00e9": 1}],
        [_nested(400, 1), _nested(400, 1), _nested(400, 2)],  # deeper than it recurses
    ],
)
def test_call_identities_equal_exactly_when_call_keys_are(args: list[Any]) -> None:
    steps = [step("lookup", a) for a in args] + [step("other", args[0]), step("once", args[0])]
    keys = call_identities(steps)
    exact = [call_key(s) for s in steps]
    for i in range(len(steps)):
        for j in range(len(steps)):
            assert (keys[i] == keys[j]) is (exact[i] == exact[j]), (steps[i].args, steps[j].args)


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    """Small JSON-like values from a small alphabet, so that equal ones are frequent."""
    pick = rng.randrange(9 if depth < 3 else 6)
    scalars: list[Any] = [0, 1, 0.0, -0.0, 1.0, True, None, "1", "a", float("nan"), "\U0001f400"]
    scalars.append("\ud83d\udc00")  # written as the character before it
    if pick < 6:
        return rng.choice(scalars)
    if pick == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    if pick == 7:
        return tuple(_random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    keys: list[Any] = rng.choice([["1", "a", "\U0001f400", "\ud83d\udc00"], [1]])  # not 1 with "a"
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(3))}


def test_surely_different_never_separates_calls_written_alike() -> None:
    rng = random.Random(20261127)
    separated = 0
    for _ in range(3000):
        a, b = _random_value(rng), _random_value(rng)
        same = call_key(step("t", a)) == call_key(step("t", b))
        if surely_different(a, b):
            assert not same, (a, b)
            separated += 1
    assert separated > 1000  # it does decide most pairs
    for many in [4] * 300 + [PAIRWISE_LIMIT + 1] * 30:  # identities stay exact, whatever
        steps = [step("t", _random_value(rng)) for _ in range(many)]  # the calls per tool
        keys, exact = call_identities(steps), [call_key(s) for s in steps]
        assert [[k == o for o in keys] for k in keys] == [[k == o for o in exact] for k in exact]


def test_call_identities_compare_no_pairs_of_a_tool_called_very_often() -> None:
    # Pairwise comparison grows with the square of the calls: a hostile trace with
    # thousands of calls of one tool must cost what call_key costs, linear. Distinct
    # arguments tell the two paths apart (and hold whether the module is compiled):
    # compared pairwise, each call would keep its (name, position) key.
    steps = [step("t", {"q": i}) for i in range(PAIRWISE_LIMIT + 1)]
    assert call_identities(steps) == [call_key(s) for s in steps]
    fewer = steps[:PAIRWISE_LIMIT]
    assert call_identities(fewer) == [("t", at) for at in range(PAIRWISE_LIMIT)]


def test_repeated_calls_count_nan_and_null_apart() -> None:
    traj = trajectory(step("lookup", {"q": float("nan")}), step("lookup", {"q": None}))
    assert value(RepeatedCalls, traj, {}) is True
    twice = trajectory(*[step("lookup", {"q": float("nan")})] * 2, step("lookup", {"q": None}))
    result = run(RepeatedCalls, twice, {})
    assert result.details is not None and result.details["repeated"] == {'lookup({"q": NaN})': 2}


def test_repeated_calls_on_the_labelled_runs() -> None:
    # No labelled scenario repeats a call: every run passes.
    for golden in golden_runs():
        assert all(value(RepeatedCalls, turn, {}) for turn in golden.turns), golden[:2]


@pytest.mark.parametrize(
    ("keys", "loop"),
    [
        ("abcd", None),
        ("aab", (0, 1, 2)),
        ("xababab", (1, 2, 3)),
        ("abcabcabcx", (0, 3, 3)),
        ("aaaa", (0, 1, 4)),
    ],
)
def test_longest_loop(keys: str, loop: tuple[int, int, int] | None) -> None:
    assert longest_loop(list(keys), max_period=3) == loop


def test_tool_loops() -> None:
    search = [step("search", {"q": "x"}), step("read", {"id": 1})]
    looping = trajectory(*search * 3)
    assert value(ToolLoops, looping, {}) is False
    assert value(ToolLoops, looping, {"max_repeats": 3}) is True
    assert value(ToolLoops, looping, {"max_period": 1}) is True
    result = run(ToolLoops, looping, {})
    assert result.explanation == "loop: [search → read] 3 times from step 0"
    varied = trajectory(*(step("search", {"q": i}) for i in range(4)))
    assert value(ToolLoops, varied, {}) is True
    assert value(ToolLoops, varied, {}, same="name") is False


def test_tool_error_rate_on_the_labelled_runs() -> None:
    for golden in golden_runs():
        rates = [score(ToolErrorRate, turn, {}) for turn in golden.turns]
        assert (max(rates) > 0) is bool(golden.labels["labels"]["tool_errors"]), golden[:2]
    tool_error = next(g for g in golden_runs() if g.scenario == "tool_error")
    assert score(ToolErrorRate, tool_error.turns[0], {}) == pytest.approx(1 / 3)
    assert ToolErrorRate.higher_is_better is False
    assert score(ToolErrorRate, calls(), {}) == 0.0


def test_max_latency() -> None:
    traj = trajectory(step("lookup", duration=0.5), step("refund", duration=2.0), latency=3.0)
    assert value(MaxLatency, traj, {"run": 5}) is True
    assert value(MaxLatency, traj, {"run": 2}) is False
    assert value(MaxLatency, traj, {"per_step": 1.0}) is False
    assert value(MaxLatency, traj, {"per_step": 1.0, "tools": {"refund": 2.5}}) is True
    result = run(MaxLatency, traj, {"run": 2, "tools": {"lookup": 0.1}})
    assert result.explanation == "run 3.000 s > 2.0 s; lookup 0.500 s > 0.1 s"
    with pytest.raises(ValidationError, match="at least one"):
        MaxLatency.criteria_model.model_validate({})


def test_call_identities_of_hostile_nesting_raise_instead_of_crashing() -> None:
    # The compiled build recurses in C and never raises RecursionError: without a depth
    # bound, 100 000 levels would overflow the C stack. Now both builds stop comparing
    # at MAX_DEPTH and leave the call to call_key, whose json.dumps refuses the depth.
    deep = _nested(100_000, 1)
    with pytest.raises(RecursionError):
        call_identities([step("t", deep), step("t", _nested(100_000, 2))])
    shallow = [step("t", _nested(MAX_DEPTH + 5, 1)), step("t", _nested(MAX_DEPTH + 5, 2))]
    assert call_identities(shallow) == [call_key(s) for s in shallow]  # undecided: call_key


def test_tools_named_by_their_bare_name_match_plugin_qualified_steps() -> None:
    # Semantic Kernel records a plugin's function as ``MusicStore-refund``; references and
    # criteria may name it ``refund`` (``matching.names_match``), in every evaluator.
    from evaluators.builtin.single_step import FirstStepMatch
    from evaluators.builtin.trajectory_match import TrajectorySingleToolUse

    traj = calls("MusicStore-route", "MusicStore-refund", "MusicStore-refund")
    assert value(TrajectorySingleToolUse, traj, {"tool": "refund"}) is True
    assert value(TrajectorySingleToolUse, traj, {"tool": "fund"}) is False
    assert value(MaxCallsPerTool, traj, {"tools": {"refund": 1}}) is False
    assert value(MaxCallsPerTool, traj, {"tools": {"refund": 2}}) is True
    assert value(FirstStepMatch, traj, {"step": "refund"}, skip=["route"]) is True
    assert value(FirstStepMatch, traj, {"step": "refund"}, after="route") is True
    slow = trajectory(step("MusicStore-refund", duration=3.0))
    assert value(MaxLatency, slow, {"tools": {"refund": 2.0}}) is False
    assert value(MaxLatency, slow, {"tools": {"refund": 5.0}}) is True
