"""Policies that need no reference trajectory: required, forbidden and ordered tools.

Only executed calls count (a call the model requested but that never ran is
not a call; ``forbidden_tools`` can count requests too). Results are booleans
with the offending calls in ``details``, except ``essential_tools_present``,
which is Vertex AI's custom metric (seed 003): the share of required tools used.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluators.base import Criteria, Evaluator, EvaluatorConfig
from evaluators.gaps import TOOL_CALLS, tool_calls_of
from evaluators.matching import called_steps, names_match
from evaluators.results import BooleanResult, NumericResult
from evaluators.trajectory import Step, StepKind, Trajectory


class StepsConfig(EvaluatorConfig):
    """``step_kinds``: which steps count (the spec's ``step_kinds``; default tools)."""

    step_kinds: tuple[StepKind, ...] = Field(default=(StepKind.TOOL,), min_length=1)


def executed(
    trajectory: Trajectory, kinds: Sequence[StepKind] = (StepKind.TOOL,)
) -> tuple[Step, ...]:
    """The steps of ``kinds`` that ran, in order (``matching.called_steps``)."""
    return called_steps(trajectory, kinds)


class ToolsCriteria(Criteria):
    """``tools``: tool names."""

    tools: tuple[str, ...]


class EssentialToolsPresent(Evaluator[ToolsCriteria, EvaluatorConfig]):
    """Share of ``tools`` called at least once (1 when none are listed); Vertex's example."""

    id = "essential_tools_present"
    requires = frozenset({TOOL_CALLS})  # (tools that ran unrecorded: no verdict)
    criteria_model = ToolsCriteria
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: ToolsCriteria) -> NumericResult:
        used = {step.name for step in executed(trajectory)}
        missing = [tool for tool in criteria.tools if not any(names_match(tool, u) for u in used)]
        present = len(criteria.tools) - len(missing)
        score = present / len(criteria.tools) if criteria.tools else 1.0
        return NumericResult(
            score=score,
            explanation=f"missing: {', '.join(missing)}" if missing else None,
            details={"required": list(criteria.tools), "missing": missing},
        )


class ForbiddenCriteria(Criteria):
    """``tools``: tool names that must not be called."""

    tools: tuple[str, ...] = Field(min_length=1)


class ForbiddenConfig(EvaluatorConfig):
    """``count_requested``: a call the model asked for but that never ran also violates."""

    count_requested: bool = False


class ForbiddenTools(Evaluator[ForbiddenCriteria, ForbiddenConfig]):
    """True if none of ``tools`` was called."""

    id = "forbidden_tools"
    requires = frozenset({TOOL_CALLS})
    criteria_model = ForbiddenCriteria
    config_model = ForbiddenConfig
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: ForbiddenCriteria) -> BooleanResult:
        counted = [s for s in trajectory.tool_calls if s.executed or self.config.count_requested]
        called = Counter(
            step.name for step in counted if any(names_match(t, step.name) for t in criteria.tools)
        )
        text = ", ".join(f"{tool} ({count} call(s))" for tool, count in sorted(called.items()))
        return BooleanResult(
            value=not called,
            explanation=f"forbidden tool called: {text}" if called else None,
            details={"called": dict(sorted(called.items()))},
        )


def _as_named(recorded: str, wanted: set[str]) -> str:
    """The constraint name ``recorded`` stands for (its bare name when only that is used)."""
    if recorded in wanted:
        return recorded
    return next((name for name in wanted if names_match(name, recorded)), recorded)


_BEFORE = re.compile(r"^\s*(\S+)\s+before\s+(\S+)\s*$", re.IGNORECASE)


class OrderConstraint(BaseModel):
    """``first`` must run before ``then``: ``"a before b"``, ``[a, b]`` or ``{first, then}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    first: str = Field(min_length=1)
    then: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _accept_shorthands(cls, data: Any) -> Any:
        if isinstance(data, str):
            found = _BEFORE.match(data)
            if not found:
                raise ValueError(f"expected 'A before B', got {data!r}")
            return {"first": found[1], "then": found[2]}
        if isinstance(data, list | tuple):
            if len(data) != 2:
                raise ValueError(f"expected a pair [A, B], got {len(data)} item(s)")
            return {"first": data[0], "then": data[1]}
        return data

    def label(self) -> str:
        return f"{self.first} before {self.then}"

    def violated(self, names: Sequence[str], require_first: bool) -> bool:
        """Some ``then`` ran before any ``first`` (or, if required, with no ``first`` at all)."""
        if self.then not in names:
            return False
        if self.first not in names:
            return require_first
        return names.index(self.first) > names.index(self.then)


class OrderCriteria(Criteria):
    """``constraints``: the ordering rules, e.g. ``["lookup_invoice before refund"]``."""

    constraints: tuple[OrderConstraint, ...] = Field(min_length=1)


class OrderConfig(StepsConfig):
    """``require_first``: a ``then`` step with no ``first`` step at all violates (default).

    With False, only a ``first`` that comes too late does: a missing call is
    then left to recall / ``essential_tools_present``.
    """

    require_first: bool = True


class ToolOrder(Evaluator[OrderCriteria, OrderConfig]):
    """True if every ordering constraint holds ("lookup_invoice before refund")."""

    id = "tool_order"
    criteria_model = OrderCriteria
    config_model = OrderConfig
    description = __doc__ or ""

    def needs(self, criteria: OrderCriteria) -> frozenset[str]:
        return tool_calls_of(self.config.step_kinds)

    def evaluate(self, trajectory: Trajectory, criteria: OrderCriteria) -> BooleanResult:
        steps = executed(trajectory, self.config.step_kinds)
        # A constraint names tools as references do: full or bare (namespaced tools).
        wanted = {name for rule in criteria.constraints for name in (rule.first, rule.then)}
        names = [_as_named(step.name, wanted) for step in steps]
        violated = [
            rule.label()
            for rule in criteria.constraints
            if rule.violated(names, self.config.require_first)
        ]
        return BooleanResult(
            value=not violated,
            explanation=f"violated: {'; '.join(violated)}" if violated else None,
            details={"steps": names, "violated": violated},
        )
