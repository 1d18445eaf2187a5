"""Budgets that need no reference: steps, calls per tool, repeats, loops, errors, latency.

Only executed steps count. Each evaluator returns a boolean (within the limit
or not) with the numbers in ``details``, except ``tool_error_rate``, a score
(lower is better) to put a threshold on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any, Literal, NamedTuple, Self

from pydantic import Field, model_validator

from evaluators.base import Criteria, Evaluator, EvaluatorConfig, NoCriteria
from evaluators.builtin.policies import StepsConfig, executed

# Moved to evaluators.call_identity (compiled); still importable from here.
from evaluators.call_identity import PAIRWISE_LIMIT as PAIRWISE_LIMIT  # noqa: PLC0414
from evaluators.call_identity import call_identities
from evaluators.call_identity import call_key as call_key  # noqa: PLC0414
from evaluators.call_identity import surely_different as surely_different  # noqa: PLC0414
from evaluators.gaps import MODEL_TIMINGS, TOOL_CALLS, TOOL_TIMINGS, tool_calls_of
from evaluators.matching import bare_name
from evaluators.results import BooleanResult, NumericResult
from evaluators.trajectory import Step, StepKind, Trajectory


class MaxStepsCriteria(Criteria):
    """``limit``: the most steps (of the config's ``step_kinds``) a run may take."""

    limit: int = Field(ge=0)


class MaxSteps(Evaluator[MaxStepsCriteria, StepsConfig]):
    """True if the run took at most ``limit`` steps of ``step_kinds`` (default: tool calls)."""

    id = "max_steps"
    criteria_model = MaxStepsCriteria
    config_model = StepsConfig
    description = __doc__ or ""

    def needs(self, criteria: MaxStepsCriteria) -> frozenset[str]:
        return tool_calls_of(self.config.step_kinds)

    def evaluate(self, trajectory: Trajectory, criteria: MaxStepsCriteria) -> BooleanResult:
        steps = len(executed(trajectory, self.config.step_kinds))
        return BooleanResult(
            value=steps <= criteria.limit,
            explanation=f"{steps} step(s), limit {criteria.limit}",
            details={"steps": steps, "limit": criteria.limit},
        )


class CallLimitsCriteria(Criteria):
    """``limit``: calls allowed per tool; ``tools``: per-tool limits (they win)."""

    limit: int | None = Field(default=None, ge=0)
    tools: dict[str, int] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _some_limit(self) -> Self:
        if self.limit is None and not self.tools:
            raise ValueError("give `limit` (every tool), `tools` (per tool), or both")
        return self

    def limit_of(self, tool: str) -> int | None:
        """The limit of a recorded tool name, given by its full or bare name."""
        found = self.tools.get(tool)
        if found is None and self.tools:
            found = self.tools.get(bare_name(tool))
        return self.limit if found is None else found


class MaxCallsPerTool(Evaluator[CallLimitsCriteria, EvaluatorConfig]):
    """True if no tool was called more often than its limit."""

    id = "max_calls_per_tool"
    requires = frozenset({TOOL_CALLS})  # (tools that ran unrecorded: no verdict)
    criteria_model = CallLimitsCriteria
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: CallLimitsCriteria) -> BooleanResult:
        counts = Counter(step.name for step in executed(trajectory))
        over = {
            tool: count
            for tool, count in sorted(counts.items())
            if (limit := criteria.limit_of(tool)) is not None and count > limit
        }
        text = ", ".join(f"{t} {n} > {criteria.limit_of(t)}" for t, n in over.items())
        return BooleanResult(
            value=not over,
            explanation=f"over the limit: {text}" if over else None,
            details={"calls": dict(sorted(counts.items())), "over": over},
        )


class RepeatCriteria(Criteria):
    """``max_identical``: how many times one call (same tool, same arguments) may run."""

    max_identical: int = Field(default=1, ge=1)


class RepeatedCalls(Evaluator[RepeatCriteria, EvaluatorConfig]):
    """True if no identical call (same tool and arguments) ran more than ``max_identical`` times."""

    id = "repeated_calls"
    requires = frozenset({TOOL_CALLS})
    criteria_model = RepeatCriteria
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: RepeatCriteria) -> BooleanResult:
        counts = Counter(call_identities(executed(trajectory)))
        repeated = {key: n for key, n in counts.items() if n > criteria.max_identical}
        text = ", ".join(f"{key} {n} times" for key, n in repeated.items())
        return BooleanResult(
            value=not repeated,
            explanation=f"repeated: {text}" if repeated else None,
            details={"repeated": repeated, "max_identical": criteria.max_identical},
        )


class Loop(NamedTuple):
    """A block of ``period`` steps repeated ``repeats`` times in a row, from ``start``."""

    start: int
    period: int
    repeats: int


def longest_loop(keys: Sequence[Hashable], max_period: int) -> Loop | None:
    """The block (of at most ``max_period`` steps) repeated most often back to back."""
    best: Loop | None = None
    for period in range(1, max_period + 1):
        run = 0  # how many positions j so far satisfy keys[j] == keys[j - period]
        for j in range(period, len(keys)):
            run = run + 1 if keys[j] == keys[j - period] else 0
            repeats = run // period + 1
            if repeats > 1 and (best is None or repeats > best.repeats):
                best = Loop(j + 1 - period * repeats, period, repeats)
    return best


class LoopCriteria(Criteria):
    """``max_repeats``: times a block may repeat in a row; ``max_period``: longest block."""

    max_repeats: int = Field(default=2, ge=1)
    max_period: int = Field(default=3, ge=1)


class LoopConfig(StepsConfig):
    """``same``: steps are the same when their ``call`` (name and arguments) or ``name`` is."""

    same: Literal["call", "name"] = "call"


class ToolLoops(Evaluator[LoopCriteria, LoopConfig]):
    """True unless a block of steps repeats more than ``max_repeats`` times back to back."""

    id = "tool_loops"
    criteria_model = LoopCriteria
    config_model = LoopConfig
    description = __doc__ or ""

    def needs(self, criteria: LoopCriteria) -> frozenset[str]:
        return tool_calls_of(self.config.step_kinds)

    def evaluate(self, trajectory: Trajectory, criteria: LoopCriteria) -> BooleanResult:
        steps = executed(trajectory, self.config.step_kinds)
        keys = call_identities(steps) if self.config.same == "call" else [s.name for s in steps]
        loop = longest_loop(keys, criteria.max_period)
        if loop is None or loop.repeats <= criteria.max_repeats:
            return BooleanResult(value=True, details={"longest": _loop_json(loop, steps)})
        block = " → ".join(step.name for step in steps[loop.start : loop.start + loop.period])
        return BooleanResult(
            value=False,
            explanation=f"loop: [{block}] {loop.repeats} times from step {loop.start}",
            details={"longest": _loop_json(loop, steps)},
        )


def _loop_json(loop: Loop | None, steps: Sequence[Step]) -> dict[str, Any] | None:
    if loop is None:
        return None
    block = [step.name for step in steps[loop.start : loop.start + loop.period]]
    return {"start": loop.start, "block": block, "repeats": loop.repeats}


class ToolErrorRate(Evaluator[NoCriteria, EvaluatorConfig]):
    """Share of executed tool calls that failed (0 without calls); lower is better."""

    id = "tool_error_rate"
    requires = frozenset({TOOL_CALLS})
    higher_is_better = False
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        calls = executed(trajectory)
        failed = [step.name for step in calls if step.error is not None]
        return NumericResult(
            score=len(failed) / len(calls) if calls else 0.0,
            explanation=f"{len(failed)} of {len(calls)} tool call(s) failed",
            details={"calls": len(calls), "failed": dict(Counter(failed))},
        )


class LatencyCriteria(Criteria):
    """Seconds: ``run`` (the whole run), ``per_step`` (each step), ``tools`` (per tool call)."""

    run: float | None = Field(default=None, ge=0)
    per_step: float | None = Field(default=None, ge=0)
    tools: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _some_limit(self) -> Self:
        if self.run is None and self.per_step is None and not self.tools:
            raise ValueError("give at least one of `run`, `per_step`, `tools`")
        return self

    def step_limit(self, step: Step) -> float | None:
        """The limit of a step, its tool given by its full or bare name."""
        found = self.tools.get(step.name)
        if found is None and self.tools:
            found = self.tools.get(bare_name(step.name))
        return self.per_step if found is None else found


_TOOL_TIMINGS = frozenset({TOOL_TIMINGS})
_MODEL_TIMINGS = frozenset({MODEL_TIMINGS})


class MaxLatency(Evaluator[LatencyCriteria, StepsConfig]):
    """True if the run, and each step of ``step_kinds``, finished within its limit."""

    id = "max_latency"
    criteria_model = LatencyCriteria
    config_model = StepsConfig
    description = __doc__ or ""

    def needs(self, criteria: LatencyCriteria) -> frozenset[str]:
        """The steps' timings when a step limit is set (the run's latency is recorded):
        the tool calls, and their durations (a call rebuilt from the model's messages
        that no span ran has none; its 0 s is no evidence of speed); the model calls'
        durations when model steps are judged too (per step: ``tools`` limits only tool
        steps)."""
        if criteria.per_step is None and not criteria.tools:
            return frozenset()
        kinds = self.config.step_kinds
        needed = tool_calls_of(kinds)
        needed = needed | _TOOL_TIMINGS if StepKind.TOOL in kinds else needed
        per_step = criteria.per_step is not None and StepKind.LLM in kinds
        return needed | _MODEL_TIMINGS if per_step else needed

    def evaluate(self, trajectory: Trajectory, criteria: LatencyCriteria) -> BooleanResult:
        slow = [
            {"step": step.name, "seconds": step.duration_s, "limit": limit}
            for step in executed(trajectory, self.config.step_kinds)
            if (limit := criteria.step_limit(step)) is not None and step.duration_s > limit
        ]
        run_slow = criteria.run is not None and trajectory.latency_s > criteria.run
        parts = [f"run {trajectory.latency_s:.3f} s > {criteria.run} s"] if run_slow else []
        parts += [f"{s['step']} {s['seconds']:.3f} s > {s['limit']} s" for s in slow]
        return BooleanResult(
            value=not parts,
            explanation="; ".join(parts) or None,
            details={"run_s": trajectory.latency_s, "slow_steps": slow},
        )
