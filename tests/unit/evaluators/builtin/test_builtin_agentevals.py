"""langchain agentevals' match modes, on labelled runs; and why first-fit pairing is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import ValidationError
from support.builtin_kit import calls, golden_runs, run, step, trajectory, value

from evaluators.argmatch import matcher_for
from evaluators.builtin.agentevals import TrajectoryMatch, TrajectoryModeConfig
from evaluators.matching import CallMatcher
from evaluators.reference import ExpectedStep
from evaluators.results import BooleanResult
from evaluators.trajectory import Step

MODES = ("strict", "unordered", "subset", "superset")

# scenario -> (strict, unordered, subset, superset) against its expected trajectory.
LABELLED = {
    "correct": (True, True, True, True),
    "parallel_calls": (True, True, True, True),
    "tool_error": (True, True, True, True),  # a failed call is a call
    "extra_call": (False, False, False, True),  # lookup_artist is not in the reference
    "wrong_order": (False, True, True, True),
    "wrong_args": (False, False, False, False),  # refund(track 3160) is neither
    "tool_exception": (False, False, True, False),  # lookup_track never ran
}


def modes(traj: Any, criteria: dict[str, Any], **config: Any) -> tuple[bool, ...]:
    return tuple(value(TrajectoryMatch, traj, criteria, mode=mode, **config) for mode in MODES)


@pytest.mark.parametrize("golden", [g for g in golden_runs() if g.scenario in LABELLED],
                         ids=lambda g: f"{g.framework}-{g.scenario}")  # fmt: skip
def test_modes_on_the_labelled_runs_of_every_framework(golden: Any) -> None:
    criteria = {"trajectory": golden.labels["expected_trajectory"]}
    expected = LABELLED[golden.scenario]
    found = modes(golden.turns[0], criteria)
    if golden.scenario == "parallel_calls":
        # Calls requested together run in any order: strict compares the
        # execution order, which differs by framework.
        found, expected = found[1:], expected[1:]
    assert found == expected


def test_strict_agrees_with_the_trajectory_correct_label_except_parallel_calls() -> None:
    disagree = set()
    for golden in golden_runs():
        if golden.scenario != "multi_turn":
            criteria = {"trajectory": golden.labels["expected_trajectory"]}
            strict = value(TrajectoryMatch, golden.turns[0], criteria)
            if strict is not golden.labels["labels"]["trajectory_correct"]:
                disagree.add((golden.framework, golden.scenario))
    # langsmith-otel and agno ran lookup_track before lookup_invoice (both requested at once).
    assert disagree == {
        ("agno-openinference", "parallel_calls"),
        ("langchain-langsmith-otel", "parallel_calls"),
    }


@pytest.mark.parametrize(
    ("predicted", "expected"),
    [
        (["a", "b"], (True, True, True, True)),
        (["b", "a"], (False, True, True, True)),
        (["a"], (False, False, True, False)),
        (["a", "b", "c"], (False, False, False, True)),
        (["a", "c"], (False, False, False, False)),
        ([], (False, False, True, False)),
    ],
)
def test_mode_definitions(predicted: list[str], expected: tuple[bool, ...]) -> None:
    assert modes(calls(*predicted), {"trajectory": ["a", "b"]}) == expected


def test_failure_explanations_speak_the_mode() -> None:
    criteria = {"trajectory": ["a", "b"]}
    explain = {
        mode: run(TrajectoryMatch, calls("b", "c"), criteria, mode=mode).explanation
        for mode in MODES
    }
    assert explain == {
        "strict": "missing: a; unexpected: c",
        "unordered": "missing: a; unexpected: c",
        "subset": "unexpected: c",
        "superset": "missing: a",
    }
    result = run(TrajectoryMatch, calls("b", "a"), criteria)
    assert result.explanation == "same calls, different order"


def test_unknown_mode_is_rejected_at_construction() -> None:
    with pytest.raises(ValidationError, match="'strict', 'unordered', 'subset' or 'superset'"):
        TrajectoryMatch.build({"mode": "loose"})
    with pytest.raises(ValueError, match="unknown trajectory match mode 'loose'"):
        TrajectoryMatch(TrajectoryModeConfig.model_construct(mode="loose"))  # type: ignore[arg-type]


def first_fit_superset(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step], matches: CallMatcher
) -> bool:
    """agentevals' pairing: each reference call takes the first unused call that matches."""
    used: set[int] = set()
    for item in reference:
        free = [j for j, call in enumerate(predicted) if j not in used and matches(item, call)]
        if not free:
            return False
        used.add(free[0])
    return True


def test_first_fit_gives_a_false_negative_that_maximum_matching_avoids() -> None:
    # With ``args: {mode: subset}`` a call matches a reference call when the
    # arguments it passed are a subset of the reference's. lookup(a) fits both
    # reference calls; lookup(a, b) fits only the first. First fit gives the
    # first reference call lookup(a) and leaves the second nothing.
    reference = [{"tool": "lookup", "args": {"a": 1, "b": 2}}, {"tool": "lookup", "args": {"a": 1}}]
    traj = trajectory(step("lookup", {"a": 1}), step("lookup", {"a": 1, "b": 2}))
    criteria = {"trajectory": reference}
    args = {"mode": "subset"}

    items = [ExpectedStep.model_validate(item) for item in reference]
    assert (
        first_fit_superset(items, traj.steps, matcher_for(TrajectoryModeConfig(args=args).args))
        is False
    )
    for mode in ("superset", "unordered", "subset"):
        assert value(TrajectoryMatch, traj, criteria, mode=mode, args=args) is True, mode


def test_first_fit_false_negative_with_superset_arguments() -> None:
    # ``args: {mode: superset}``: refund(invoice) fits both calls, the more
    # specific reference refund(invoice, track 3158) only the first.
    reference = [
        {"tool": "refund", "args": {"invoice_id": 1042}},
        {"tool": "refund", "args": {"invoice_id": 1042, "track_id": 3158}},
    ]
    traj = trajectory(
        step("refund", {"invoice_id": 1042, "track_id": 3158}),
        step("refund", {"invoice_id": 1042, "track_id": 3160}),
    )
    items = [ExpectedStep.model_validate(item) for item in reference]
    matches = matcher_for(TrajectoryModeConfig(args={"mode": "superset"}).args)
    assert first_fit_superset(items, traj.steps, matches) is False
    result = run(TrajectoryMatch, traj, {"trajectory": reference}, mode="superset",
                 args={"mode": "superset"})  # fmt: skip
    assert isinstance(result, BooleanResult) and result.value is True
    assert result.details is not None and result.details["matched"] == [[0, 1], [1, 0]]
