"""Budgets that need no reference: steps, calls per tool, repeats, loops, errors, latency.

Only executed steps count. Each evaluator returns a boolean (within the limit
or not) with the numbers in ``details``, except ``tool_error_rate``, a score
(lower is better) to put a threshold on.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any, Literal, NamedTuple, Self

from pydantic import Field, model_validator

from evaluators.base import Criteria, Evaluator, EvaluatorConfig, NoCriteria
from evaluators.builtin.policies import StepsConfig, executed
from evaluators.results import BooleanResult, NumericResult
from evaluators.trajectory import Step, Trajectory


def call_key(step: Step) -> str:
    """A step's identity as a call: its name and canonical JSON arguments."""
    return f"{step.name}({json.dumps(step.args, sort_keys=True, default=str)})"


def call_identities(steps: Sequence[Step]) -> Sequence[Hashable]:
    """One key per step, equal exactly when ``call_key`` is: the same call.

    ``call_key`` costs a ``json.dumps`` per call (~10 µs for a few hundred bytes of
    arguments), so it is computed only where two steps could be the same call: for a
    tool called more than once, and then only for the calls whose arguments are not
    provably different from those of every other call of that tool
    (``surely_different``, which usually decides at the first differing value). The
    other steps get ``(name, position)``: unique, and never equal to a string. A tool
    called more than ``PAIRWISE_LIMIT`` times gets ``call_key`` for every call: the
    pairwise comparison grows with the square of the calls, ``call_key`` linearly.
    """
    counts = Counter(step.name for step in steps)
    keys: list[Hashable] = [(step.name, at) for at, step in enumerate(steps)]
    groups: dict[str, list[int]] = {}
    for at, step in enumerate(steps):
        if counts[step.name] > PAIRWISE_LIMIT:
            keys[at] = call_key(step)
        elif counts[step.name] > 1:
            groups.setdefault(step.name, []).append(at)
    for positions in groups.values():
        values = [steps[at].args for at in positions]
        for k, at in enumerate(positions):
            mine = values[k]
            if not all(_apart(mine, values[o]) for o in range(len(values)) if o != k):
                keys[at] = call_key(steps[at])
    return keys


def _apart(a: Any, b: Any) -> bool:
    """``surely_different``, False where its recursion is too deep (``json.dumps``, in C,
    nests deeper)."""
    try:
        return surely_different(a, b)
    except RecursionError:
        return False


PAIRWISE_LIMIT = 8
"""The most calls of one tool whose arguments ``call_identities`` compares pairwise."""

_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})
_ARRAYS: frozenset[type] = frozenset({list, tuple})  # json.dumps writes both as arrays
_JSON_TYPES = _SCALARS | _ARRAYS | {dict}


def surely_different(a: Any, b: Any) -> bool:
    """True only if ``a`` and ``b`` certainly have different canonical JSON (the
    ``json.dumps(..., sort_keys=True, default=str)`` of ``call_key``); False when they
    may have the same (equal values, ``-0.0`` and ``0.0``, two NaNs, or anything
    outside JSON's types, which ``default=str`` writes as text; a string outside ASCII
    is compared as written, since ``json.dumps`` writes a character beyond U+FFFF and
    its two surrogates alike). May raise ``RecursionError`` on deeply nested values
    (``call_identities`` then falls back to ``call_key``)."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        if ta in _ARRAYS and tb in _ARRAYS:
            return _arrays_differ(a, b)
        # Two different JSON types never write alike (true / 1 / 1.0 / "1" / null).
        return ta in _JSON_TYPES and tb in _JSON_TYPES
    if ta is str:
        if a.isascii() and b.isascii():
            return bool(a != b)
        return bool(encode_basestring_ascii(a) != encode_basestring_ascii(b))
    if ta is int or ta is bool:
        return bool(a != b)
    if ta is float:
        nan_a, nan_b = math.isnan(a), math.isnan(b)
        if nan_a or nan_b:  # NaN writes "NaN" whichever NaN it is
            return nan_a is not nan_b
        return bool(a != b)  # repr round-trips: unequal floats write apart
    if ta in _ARRAYS:
        return _arrays_differ(a, b)
    if ta is dict:
        if not _plain_keys(a) or not _plain_keys(b):
            return False  # json.dumps writes 1 and "1" (or a character and its surrogates) alike
        if a.keys() != b.keys():
            return True
        return any(surely_different(value, b[key]) for key, value in a.items())
    return False


def _plain_keys(mapping: dict[Any, Any]) -> bool:
    """Whether every key is an ASCII ``str``: written as itself, so distinct keys write apart."""
    return all(type(key) is str and key.isascii() for key in mapping)


def _arrays_differ(a: Sequence[Any], b: Sequence[Any]) -> bool:
    if len(a) != len(b):
        return True
    return any(surely_different(x, y) for x, y in zip(a, b, strict=True))


class MaxStepsCriteria(Criteria):
    """``limit``: the most steps (of the config's ``step_kinds``) a run may take."""

    limit: int = Field(ge=0)


class MaxSteps(Evaluator[MaxStepsCriteria, StepsConfig]):
    """True if the run took at most ``limit`` steps of ``step_kinds`` (default: tool calls)."""

    id = "max_steps"
    criteria_model = MaxStepsCriteria
    config_model = StepsConfig
    description = __doc__ or ""

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
        return self.tools.get(tool, self.limit)


class MaxCallsPerTool(Evaluator[CallLimitsCriteria, EvaluatorConfig]):
    """True if no tool was called more often than its limit."""

    id = "max_calls_per_tool"
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
        return self.tools.get(step.name, self.per_step)


class MaxLatency(Evaluator[LatencyCriteria, StepsConfig]):
    """True if the run, and each step of ``step_kinds``, finished within its limit."""

    id = "max_latency"
    criteria_model = LatencyCriteria
    config_model = StepsConfig
    description = __doc__ or ""

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
