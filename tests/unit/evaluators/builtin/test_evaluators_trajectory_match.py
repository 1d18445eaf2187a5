"""Built-in trajectory evaluators: Vertex definitions, labelled music-store scenarios."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.paths import FIXTURES

from evaluators.base import Evaluator
from evaluators.builtin.partial_credit import TrajectoryLcsScore
from evaluators.builtin.trajectory_match import (
    SingleToolCriteria,
    TrajectoryAnyOrderMatch,
    TrajectoryCriteria,
    TrajectoryExactMatch,
    TrajectoryInOrderMatch,
    TrajectoryPrecision,
    TrajectoryRecall,
    TrajectorySingleToolUse,
)
from evaluators.results import BooleanResult, NumericResult
from evaluators.trajectory import Step, StepKind, Trajectory

SCENARIOS = json.loads((FIXTURES / "evaluators/music_store_scenarios.json").read_text())[
    "scenarios"
]


def step(
    name: str, args: Any = None, *, kind: StepKind = StepKind.TOOL, executed: bool = True
) -> Step:
    return Step(kind, name, "ab" if executed else "", None, 0, 0.1, args=args, executed=executed)


def trajectory(*steps: Step) -> Trajectory:
    return Trajectory("t1", "svc", None, None, None, None, False, 1.0, 0, steps)


def scenario_trajectory(name: str) -> Trajectory:
    actual = SCENARIOS[name]["actual_trajectory"]
    return trajectory(*(step(call["tool"], call["args"]) for call in actual))


def criteria(*items: Any) -> TrajectoryCriteria:
    return TrajectoryCriteria.model_validate({"trajectory": list(items)})


def score(cls: type[Evaluator[Any, Any]], traj: Trajectory, crit: Any, **config: Any) -> float:
    result = cls.build(config).evaluate(traj, crit)
    assert isinstance(result, NumericResult)
    return result.score


ALL = (
    TrajectoryExactMatch,
    TrajectoryInOrderMatch,
    TrajectoryAnyOrderMatch,
    TrajectoryPrecision,
    TrajectoryRecall,
)

# scenario -> (exact, in order, any order, precision, recall), reference = the
# scenario's own expected trajectory with arguments (args: auto).
LABELLED = {
    "correct": (1, 1, 1, 1, 1),
    "parallel_calls": (1, 1, 1, 1, 1),
    "extra_call": (0, 1, 1, 0.75, 1),
    "wrong_order": (0, 0, 1, 1, 1),
    "tool_error": (1, 1, 1, 1, 1),  # a failed call is still a call
    "wrong_args": (0, 0, 0, 2 / 3, 2 / 3),  # refund(track 3160) is not refund(track 3158)
    "tool_exception": (0, 0, 0, 1, 2 / 3),  # lookup_track never happened
}


@pytest.mark.parametrize("scenario", sorted(LABELLED))
def test_labelled_scenarios_score_as_labelled(scenario: str) -> None:
    crit = criteria(*SCENARIOS[scenario]["expected_trajectory"])
    traj = scenario_trajectory(scenario)
    scores = tuple(score(cls, traj, crit) for cls in ALL)
    assert scores == pytest.approx(LABELLED[scenario])


def test_exact_match_agrees_with_the_trajectory_correct_label() -> None:
    for name, data in SCENARIOS.items():
        crit = criteria(*data["expected_trajectory"])
        exact = score(TrajectoryExactMatch, scenario_trajectory(name), crit)
        assert (exact == 1.0) is data["labels"]["trajectory_correct"], name


def test_wrong_args_pass_when_arguments_are_ignored() -> None:
    crit = criteria(*SCENARIOS["wrong_args"]["expected_trajectory"])
    traj = scenario_trajectory("wrong_args")
    assert [score(cls, traj, crit, args="ignore") for cls in ALL] == [1, 1, 1, 1, 1]


def test_auto_args_compare_only_where_the_reference_gives_them() -> None:
    traj = trajectory(step("lookup_invoice", {"invoice_id": 1}), step("refund", {"x": 1}))
    assert score(TrajectoryExactMatch, traj, criteria({"tool": "lookup_invoice"}, "refund")) == 1
    wrong = criteria({"tool": "lookup_invoice", "args": {"invoice_id": 2}}, "refund")
    assert score(TrajectoryExactMatch, traj, wrong) == 0


def test_exact_args_require_absent_reference_args_to_be_absent() -> None:
    traj = trajectory(step("refund", {"x": 1}), step("ping"))
    crit = criteria("refund", "ping")
    assert score(TrajectoryRecall, traj, crit, args="exact") == 0.5
    assert score(TrajectoryRecall, traj, crit, args="auto") == 1.0


def test_extra_call_explains_what_is_extra() -> None:
    crit = criteria(*SCENARIOS["extra_call"]["expected_trajectory"])
    result = TrajectoryExactMatch.build().evaluate(scenario_trajectory("extra_call"), crit)
    assert result.explanation == "extra: lookup_artist"
    assert result.details is not None and result.details["extra"] == ["lookup_artist"]


def test_wrong_args_explanation_names_missing_and_extra() -> None:
    crit = criteria(*SCENARIOS["wrong_args"]["expected_trajectory"])
    result = TrajectoryAnyOrderMatch.build().evaluate(scenario_trajectory("wrong_args"), crit)
    assert result.explanation == "missing: refund; extra: refund"


def test_in_order_failure_says_out_of_order_not_missing() -> None:
    crit = criteria(*SCENARIOS["wrong_order"]["expected_trajectory"])
    result = TrajectoryInOrderMatch.build().evaluate(scenario_trajectory("wrong_order"), crit)
    assert result.score == 0 and result.explanation == "out of order: lookup_invoice"


def test_exact_failure_on_permutation_says_order() -> None:
    crit = criteria("a", "b")
    result = TrajectoryExactMatch.build().evaluate(trajectory(step("b"), step("a")), crit)
    assert result.score == 0 and result.explanation == "same calls, different order"


def test_exact_match_rejects_a_prefix() -> None:
    assert score(TrajectoryExactMatch, trajectory(step("a")), criteria("a", "b")) == 0


def test_precision_and_recall_count_repeated_calls_as_a_multiset() -> None:
    traj = trajectory(step("refund"), step("refund"), step("refund"))
    assert score(TrajectoryPrecision, traj, criteria("refund")) == pytest.approx(1 / 3)
    assert score(TrajectoryRecall, traj, criteria("refund", "refund")) == 1.0
    assert score(TrajectoryRecall, trajectory(step("refund")), criteria("refund", "refund")) == 0.5


def test_any_order_uses_each_predicted_call_once() -> None:
    crit = criteria("lookup", "lookup")
    assert score(TrajectoryAnyOrderMatch, trajectory(step("lookup")), crit) == 0
    assert score(TrajectoryAnyOrderMatch, trajectory(step("lookup"), step("lookup")), crit) == 1


def test_empty_prediction_and_empty_reference() -> None:
    empty = trajectory()
    assert score(TrajectoryPrecision, empty, criteria("a")) == 0.0
    assert score(TrajectoryPrecision, empty, criteria()) == 1.0
    assert score(TrajectoryPrecision, trajectory(step("a")), criteria()) == 0.0
    assert score(TrajectoryRecall, empty, criteria()) == 1.0
    assert score(TrajectoryExactMatch, empty, criteria()) == 1.0
    assert score(TrajectoryInOrderMatch, trajectory(step("a")), criteria()) == 1.0


def test_requested_but_not_executed_calls_do_not_count() -> None:
    traj = trajectory(step("lookup"), step("refund", executed=False))
    assert score(TrajectoryRecall, traj, criteria("lookup", "refund")) == 0.5
    assert score(TrajectoryExactMatch, traj, criteria("lookup")) == 1.0


def test_step_kinds_select_which_steps_form_the_trajectory() -> None:
    traj = trajectory(step("router", kind=StepKind.AGENT), step("refund"))
    crit = criteria({"agent": "router"}, {"tool": "refund"})
    assert score(TrajectoryExactMatch, traj, crit) == 0  # default: tools only
    assert score(TrajectoryExactMatch, traj, crit, step_kinds=["agent", "tool"]) == 1


def test_reference_kind_must_match_unless_left_open() -> None:
    traj = trajectory(step("refund", kind=StepKind.AGENT))
    kinds = {"step_kinds": ["agent", "tool"]}
    assert score(TrajectoryRecall, traj, criteria({"tool": "refund"}), **kinds) == 0
    assert score(TrajectoryRecall, traj, criteria({"name": "refund"}), **kinds) == 1


def test_binary_matches_default_to_threshold_one_and_ratios_to_none() -> None:
    assert TrajectoryExactMatch.build().config.threshold == 1.0
    assert TrajectoryInOrderMatch.build().config.threshold == 1.0
    assert TrajectoryAnyOrderMatch.build().config.threshold == 1.0
    assert TrajectoryPrecision.build().config.threshold is None


def test_unknown_args_mode_is_rejected_at_build() -> None:
    with pytest.raises(ValueError, match="args"):
        TrajectoryRecall.build({"args": "subset"})


def single(tool: str, traj: Trajectory) -> BooleanResult:
    result = TrajectorySingleToolUse.build().evaluate(traj, SingleToolCriteria(tool=tool))
    assert isinstance(result, BooleanResult)
    return result


def test_single_tool_use() -> None:
    assert single("refund", scenario_trajectory("correct")).value is True
    assert single("lookup_artist", scenario_trajectory("correct")).value is False
    assert single("lookup_artist", scenario_trajectory("extra_call")).value is True


def test_single_tool_use_ignores_requested_only_calls_and_says_so() -> None:
    result = single("refund", trajectory(step("refund", executed=False)))
    assert result.value is False
    assert result.explanation == "refund requested but never executed"


def test_single_tool_use_counts_a_failed_call() -> None:
    assert single("refund", scenario_trajectory("tool_error")).value is True


def test_expected_step_forms() -> None:
    crit = criteria("a", {"tool": "b", "args": {"x": 1}}, {"agent": "c"}, {"name": "d"})
    labels = [item.label() for item in crit.trajectory]
    assert labels == ["a", "b", "agent:c", "d"]
    assert crit.trajectory[1].args == {"x": 1}
    assert crit.trajectory[3].kind is None


@pytest.mark.parametrize(
    "item",
    [{"tool": "a", "agent": "b"}, {"tool": "a", "name": "b"}, {"tool": "a", "arg": {}}, {}],
)
def test_expected_step_rejects_ambiguous_or_unknown_forms(item: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        criteria(item)


def test_answers_kept_between_evaluators_are_the_answers_computed_afresh() -> None:
    # A spec's reference evaluators run one after another on one trajectory, with equal
    # but distinct criteria; what is kept between them (matchings, details, labels,
    # executed steps) must give exactly what each computes alone, and stay unchanged
    # when a caller changes the details it got.
    items = ({"tool": "lookup"}, {"tool": "refund", "args": {"id": 1}}, {"agent": "billing"})
    runs = [
        trajectory(step("lookup"), step("billing", kind=StepKind.AGENT), step("refund", {"id": 1})),
        trajectory(step("refund", {"id": 2}), step("lookup"), step("store__lookup")),
        trajectory(step("billing__refund", {"id": 1}), step("store__refund", {"id": 1})),
        trajectory(),
    ]
    built = [cls.build({"step_kinds": ["tool", "agent"]}) for cls in (*ALL, TrajectoryLcsScore)]
    for traj in runs * 2:
        in_turn = [evaluator.evaluate(traj, criteria(*items)) for evaluator in built]
        in_turn += [evaluator.evaluate(traj, criteria(*items)) for evaluator in built]
        for result in in_turn:
            assert result.details is not None
            result.details["predicted"].append("changed by a caller")
            result.details["matched"].append([9, 9])
        for at, evaluator in enumerate(built):
            alone = traj._replace(steps=tuple(list(traj.steps)))  # nothing kept applies
            fresh = evaluator.evaluate(alone, criteria(*items))
            assert fresh.details is not None and "changed by a caller" not in str(fresh.details)
            again = evaluator.evaluate(traj, criteria(*items))
            assert again == fresh, evaluator.id
            for result in (in_turn[at], in_turn[at + len(built)]):
                assert result.details is not None
                assert result.details["predicted"].pop() == "changed by a caller"
                assert result.details["matched"].pop() == [9, 9]
                assert result == fresh, evaluator.id
