"""``tool_args_match``: were the reference calls made with the right arguments?

Each reference call that gives ``args`` (every call with ``unspecified:
empty``) is paired with at most one executed call of the same tool, so that
the total credit is as large as possible (a maximum-weight matching, not first
fit). A paired call earns the share of compared keys that match (partial
credit) or, with ``strict: true``, 1 only if all of them do; an unpaired one
earns 0. The score is the mean credit. The config is an ``ArgsMatch`` (mode,
ignore / only keys, key rules, tolerances, per-tool overrides) plus
``step_kinds`` and ``strict``, so ``{mode: subset}`` is a whole config.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from pydantic import Field

from evaluators.argmatch import ArgComparator, ArgScore, ArgsMatch
from evaluators.assignment import best_assignment
from evaluators.base import Evaluator, EvaluatorConfig
from evaluators.builtin.reference_base import TrajectoryCriteria
from evaluators.gaps import TOOL_ARGS, tool_calls_of
from evaluators.matching import called_steps, same_call
from evaluators.reference import ExpectedStep
from evaluators.results import NumericResult
from evaluators.trajectory import Step, StepKind, Trajectory


class ToolArgsConfig(ArgsMatch, EvaluatorConfig):
    """An ``ArgsMatch``; ``strict``: all-or-nothing per call; ``step_kinds``: which steps."""

    step_kinds: tuple[StepKind, ...] = Field(default=(StepKind.TOOL,), min_length=1)
    strict: bool = False


class Credit(NamedTuple):
    """One reference call's outcome: the call it was paired with and how its args compared."""

    item: ExpectedStep
    call: int | None
    args: ArgScore | None
    credit: float

    def to_json(self) -> dict[str, Any]:
        mismatched = list(self.args.mismatched) if self.args else []
        return {"expected": self.item.label(), "call": self.call, "credit": self.credit,
                "mismatched": mismatched}  # fmt: skip


class ToolArgsMatch(Evaluator[TrajectoryCriteria, ToolArgsConfig]):
    """Mean per-call argument credit of the reference calls (share of matching keys)."""

    id = "tool_args_match"
    requires = frozenset({TOOL_ARGS})
    criteria_model = TrajectoryCriteria
    config_model = ToolArgsConfig
    description = __doc__ or ""

    def __init__(self, config: ToolArgsConfig) -> None:
        super().__init__(config)
        self.comparator = ArgComparator(config)

    def needs(self, criteria: TrajectoryCriteria) -> frozenset[str]:
        """The arguments, and the tool calls when ``step_kinds`` counts them."""
        return tool_calls_of(self.config.step_kinds) | self.requires

    def evaluate(self, trajectory: Trajectory, criteria: TrajectoryCriteria) -> NumericResult:
        predicted = called_steps(trajectory, self.config.step_kinds)
        items = [item for item in criteria.trajectory if self._checks(item)]
        if not items:
            return NumericResult(score=1.0, explanation="the reference gives no arguments")
        credits = self.credits(items, predicted)
        score = sum(credit.credit for credit in credits) / len(credits)
        details = {"calls": [credit.to_json() for credit in credits]}
        return NumericResult(score=score, explanation=_explain(credits), details=details)

    def _checks(self, item: ExpectedStep) -> bool:
        return item.args is not None or self.config.unspecified == "empty"

    def credits(self, items: Sequence[ExpectedStep], predicted: Sequence[Step]) -> list[Credit]:
        """Each item's credit under the best pairing of items with same-tool calls."""
        scores = [[self._score(item, step) for step in predicted] for item in items]
        weights = [[None if s is None else self._credit(s) for s in row] for row in scores]
        paired = dict(best_assignment(weights))
        return [
            Credit(item, None, None, 0.0)
            if (j := paired.get(i)) is None
            else Credit(item, j, scores[i][j], weights[i][j] or 0.0)
            for i, item in enumerate(items)
        ]

    def _score(self, item: ExpectedStep, step: Step) -> ArgScore | None:
        return self.comparator.score(item, step) if same_call(item, step) else None

    def _credit(self, score: ArgScore) -> float:
        return (1.0 if score.ok else 0.0) if self.config.strict else score.score


def _explain(credits: Sequence[Credit]) -> str | None:
    """``"wrong args: refund(track_id); not called: lookup_track"``, or None if all match."""
    wrong = [
        f"{c.item.label()}({', '.join(c.args.mismatched)})"
        for c in credits
        if c.args is not None and c.args.mismatched
    ]
    absent = [c.item.label() for c in credits if c.call is None]
    parts = [f"{what}: {', '.join(labels)}" for what, labels in
             (("wrong args", wrong), ("not called", absent)) if labels]  # fmt: skip
    return "; ".join(parts) or None
