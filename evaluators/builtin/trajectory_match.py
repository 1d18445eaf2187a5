"""Trajectory match evaluators, with the definitions of Vertex AI's agent evaluation.

The *predicted* trajectory is the executed steps of the configured kinds
(``step_kinds``, default tools only); a call the model requested but that never
ran does not count. The *reference* is the criteria's ``trajectory``. A
reference item matches a step per ``evaluators.argmatch.matcher_for``: same
name and kind, and arguments per the ``args`` setting (a shorthand mode, or a
mapping: subset / superset, ignored keys, regex, tolerance, per-tool overrides).

Scores:

- exact: 1 if same calls, same order, same length, else 0;
- in order: 1 if the reference is an ordered subsequence of the prediction;
- any order: 1 if every reference call is present, each step used once;
- precision: matched steps / predicted steps; recall: matched items / reference
  items — both over a maximum one-to-one matching, so repeated calls are counted
  as a multiset (predicting ``refund`` three times against one expected
  ``refund`` gives precision 1/3, where a set-based count would say 1).
  Precision of an empty prediction is 0 against a non-empty reference (nothing
  relevant was done) and 1 against an empty one; recall of an empty reference is 1.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from evaluators.base import Criteria, Evaluator, EvaluatorConfig
from evaluators.builtin.reference_base import (
    ReferenceEvaluator,
    TrajectoryCriteria,
    TrajectoryMatchConfig,
    ratio,
)
from evaluators.gaps import TOOL_CALLS
from evaluators.match_details import copied_details, summary_and_details
from evaluators.matching import (
    Pairs,
    exact_sequence,
    explain,
    maximum_matching,
    names_match,
    ordered_matching,
)
from evaluators.reference import ExpectedStep
from evaluators.results import BooleanResult, NumericResult
from evaluators.trajectory import Step, Trajectory


class BinaryMatchConfig(TrajectoryMatchConfig):
    """For 0/1 scores the verdict is obvious: pass only on a match."""

    threshold: float | None = 1.0


def _result(
    score: float,
    reference: Sequence[ExpectedStep],
    predicted: Sequence[Step],
    pairs: Pairs,
    explanation: str | None = None,
) -> NumericResult:
    """A result whose details list both trajectories and what was left over."""
    summary, details = summary_and_details(reference, predicted, pairs)  # maybe kept: read-only
    explanation = explanation or explain(summary)
    return NumericResult(score=score, explanation=explanation, details=copied_details(details))


class TrajectoryExactMatch(ReferenceEvaluator):
    """1 if the predicted trajectory is the reference: same calls, same order, nothing extra."""

    id = "trajectory_exact_match"
    config_model = BinaryMatchConfig
    description = __doc__ or ""

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> NumericResult:
        if exact_sequence(reference, predicted, self.matches):
            return _result(1.0, reference, predicted, [(i, i) for i in range(len(predicted))])
        pairs = maximum_matching(reference, predicted, self.matches)
        fully = len(pairs) == len(reference) == len(predicted)
        return _result(
            0.0, reference, predicted, pairs, "same calls, different order" if fully else None
        )


class TrajectoryInOrderMatch(ReferenceEvaluator):
    """1 if every reference call appears in the prediction in the same order (extras allowed)."""

    id = "trajectory_in_order_match"
    config_model = BinaryMatchConfig
    description = __doc__ or ""

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> NumericResult:
        pairs = ordered_matching(reference, predicted, self.matches)
        if len(pairs) == len(reference):
            return _result(1.0, reference, predicted, pairs)
        present = {i for i, _ in maximum_matching(reference, predicted, self.matches)}
        return _result(0.0, reference, predicted, pairs, _order_text(reference, present, pairs))


def _order_text(reference: Sequence[ExpectedStep], present: set[int], pairs: Pairs) -> str:
    """Why an in-order match failed: items present but out of order, items missing."""
    in_order = {i for i, _ in pairs}
    out_of_order = [reference[i].label() for i in sorted(present - in_order)]
    missing = [item.label() for i, item in enumerate(reference) if i not in present]
    parts = [
        f"{what}: {', '.join(labels)}"
        for what, labels in (("out of order", out_of_order), ("missing", missing))
        if labels
    ]
    return "; ".join(parts)


class TrajectoryAnyOrderMatch(ReferenceEvaluator):
    """1 if every reference call appears in the prediction, in any order (extras allowed)."""

    id = "trajectory_any_order_match"
    config_model = BinaryMatchConfig
    description = __doc__ or ""

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> NumericResult:
        pairs = maximum_matching(reference, predicted, self.matches)
        return _result(float(len(pairs) == len(reference)), reference, predicted, pairs)


class TrajectoryPrecision(ReferenceEvaluator):
    """Share of predicted calls that match a reference call (each reference call used once)."""

    id = "trajectory_precision"
    description = __doc__ or ""

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> NumericResult:
        pairs = maximum_matching(reference, predicted, self.matches)
        empty = 0.0 if reference else 1.0
        return _result(ratio(len(pairs), len(predicted), empty), reference, predicted, pairs)


class TrajectoryRecall(ReferenceEvaluator):
    """Share of reference calls found in the prediction (each predicted call used once)."""

    id = "trajectory_recall"
    description = __doc__ or ""

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> NumericResult:
        pairs = maximum_matching(reference, predicted, self.matches)
        return _result(ratio(len(pairs), len(reference), 1.0), reference, predicted, pairs)


class SingleToolCriteria(Criteria):
    """The tool that must have been called."""

    tool: str = Field(min_length=1)


class TrajectorySingleToolUse(Evaluator[SingleToolCriteria, EvaluatorConfig]):
    """True if the named tool was called (executed) at least once; order and count ignored."""

    id = "trajectory_single_tool_use"
    requires = frozenset({TOOL_CALLS})  # (tools that ran unrecorded: no verdict)
    criteria_model = SingleToolCriteria
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: SingleToolCriteria) -> BooleanResult:
        calls = [step for step in trajectory.tool_calls if names_match(criteria.tool, step.name)]
        executed = sum(1 for step in calls if step.executed)
        details = {"tool": criteria.tool, "executed": executed, "requested": len(calls)}
        return BooleanResult(
            value=executed > 0,
            explanation=_tool_use_text(criteria.tool, executed, len(calls)),
            details=details,
        )


def _tool_use_text(tool: str, executed: int, requested: int) -> str:
    if executed:
        return f"{tool} called {executed} time(s)"
    if requested:
        return f"{tool} requested but never executed"
    return f"{tool} not called"


__all__ = [
    "BinaryMatchConfig",
    "TrajectoryAnyOrderMatch",
    "TrajectoryCriteria",
    "TrajectoryExactMatch",
    "TrajectoryInOrderMatch",
    "TrajectoryMatchConfig",
    "TrajectoryPrecision",
    "TrajectoryRecall",
]
