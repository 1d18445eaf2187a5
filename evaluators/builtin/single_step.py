"""``first_step_match``: was one decision right? The first tool, or the route taken.

LangSmith's single-step evaluation (seed 001) runs the intent classifier alone
and checks its route (``refund_agent`` / ``question_answering_agent``). From a
trace, the same question is "which step came first": with ``step_kinds:
[agent, tool]`` and ``after: intent_classifier``, the step right after the
classifier node is the route it chose; with the defaults, the first tool call.
"""

from __future__ import annotations

from pydantic import Field

from evaluators.argmatch import matcher_for
from evaluators.base import Criteria, Evaluator
from evaluators.builtin.reference_base import ReferenceConfig
from evaluators.gaps import tool_calls_of
from evaluators.matching import called_steps, names_match
from evaluators.reference import ExpectedStep
from evaluators.results import BooleanResult
from evaluators.trajectory import Step, Trajectory


class FirstStepCriteria(Criteria):
    """``step``: the expected step, in reference form (``lookup_invoice``, ``{agent: x}``…)."""

    step: ExpectedStep


class FirstStepConfig(ReferenceConfig):
    """``skip``: step names that never count (e.g. a wrapper node); ``after``: look only
    past the first step of that name (e.g. the router). Plus ``step_kinds`` and ``args``.
    """

    skip: frozenset[str] = frozenset()
    after: str | None = Field(default=None, min_length=1)


class FirstStepMatch(Evaluator[FirstStepCriteria, FirstStepConfig]):
    """True if the first step (after ``after``, ignoring ``skip``) matches ``step``."""

    id = "first_step_match"
    criteria_model = FirstStepCriteria
    config_model = FirstStepConfig
    description = __doc__ or ""

    def __init__(self, config: FirstStepConfig) -> None:
        super().__init__(config)
        self.matches = matcher_for(config.args)

    def needs(self, criteria: FirstStepCriteria) -> frozenset[str]:
        return tool_calls_of(self.config.step_kinds)

    def evaluate(self, trajectory: Trajectory, criteria: FirstStepCriteria) -> BooleanResult:
        expected = criteria.step.label()
        skip = self.config.skip
        steps = [s for s in called_steps(trajectory, self.config.step_kinds)
                 if not any(names_match(name, s.name) for name in skip)]  # fmt: skip
        candidates = self._after(steps)
        if candidates is None:
            return BooleanResult(value=False, explanation=f"no step {self.config.after!r}")
        if not candidates:
            return BooleanResult(value=False, explanation=f"no step to compare with {expected}")
        first = candidates[0]
        value = self.matches(criteria.step, first)
        details = {"expected": expected, "actual": first.name, "kind": first.kind.value}
        explanation = None if value else f"first step {first.name!r}, expected {expected}"
        return BooleanResult(value=value, explanation=explanation, details=details)

    def _after(self, steps: list[Step]) -> list[Step] | None:
        """The steps past the first ``after`` one (all without ``after``); None if absent."""
        if self.config.after is None:
            return steps
        after = self.config.after
        for at, step in enumerate(steps):
            if names_match(after, step.name):
                return steps[at + 1 :]
        return None
