"""Running bound evaluators on a trajectory and deciding pass / fail.

``EvaluationRunner.run`` never raises because of an evaluator: an exception
becomes an ``ErrorResult`` (this is one of the three places allowed to catch
every exception). Async evaluators are awaited on an event loop the runner owns,
so callers stay synchronous (the processor thread, replay).

Verdicts (``Outcome.passed``):

- numeric result with a threshold: ``evaluator.passed(score, threshold)``;
- boolean result: its value, or with a threshold, 1.0 / 0.0 against it;
- error result, or numeric result without threshold: None (no verdict).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial
from types import TracebackType
from typing import Any, NamedTuple, cast

from evaluators.base import Evaluator, Unit
from evaluators.gaps import gap_error, missing
from evaluators.isolation import EvaluatorBusy, EvaluatorTimeout, IsolatedCalls, runs_inline
from evaluators.registry import EvaluatorRegistry, default_registry, user_code
from evaluators.results import (
    BooleanResult,
    ErrorResult,
    EvaluationResult,
    NumericResult,
    score_of,
)
from evaluators.selectors import sampled
from evaluators.spec_model import BoundEvaluator
from evaluators.trajectory import Trajectory

__all__ = [
    "ALWAYS",
    "BoundEvaluator",
    "EvaluationRunner",
    "Outcome",
    "bind_always",
    "due",
    "verdict",
]

_log = logging.getLogger(__name__)

ALWAYS = ("latency", "failure")
"""Evaluators that run on every trace, spec or not (Vertex adds them by default)."""

_RESULT_TYPES = (NumericResult, BooleanResult, ErrorResult)
_RESULT_CLASSES = frozenset(_RESULT_TYPES)  # exactly these (subclasses: ``_RESULT_TYPES``)


class Outcome(NamedTuple):
    """One evaluator's result on one trajectory (``item``: see ``BoundEvaluator``;
    ``unit``: the evaluator's, ``score`` or ``seconds``)."""

    spec_id: str | None
    evaluator: str
    result: EvaluationResult
    passed: bool | None
    duration_s: float
    item: str | None = None
    unit: Unit = "score"


def due(bound: BoundEvaluator, trajectory: Trajectory) -> bool:
    """Whether ``bound`` runs on ``trajectory``: its sample rate, decided by trace id."""
    return sampled(trajectory.trace_id, bound.sample_rate)


def verdict(
    evaluator: Evaluator[Any, Any], result: EvaluationResult, threshold: float | None
) -> bool | None:
    """Pass / fail of ``result`` (see the module doc); None when there is no verdict."""
    score = score_of(result)  # by exact class first (``evaluators.results``)
    if score is None:  # an error
        return None
    if threshold is not None:
        return evaluator.passed(score, threshold)
    if type(result) is NumericResult:
        return None
    return result.value if isinstance(result, BooleanResult) else None


class EvaluationRunner:
    """Runs bound evaluators one after the other on one trajectory at a time.

    ``timeout_s`` bounds every plug-in evaluator call: plug-ins then run on threads
    of their own (``evaluators.isolation``) and one that hangs costs its own results
    (``ErrorResult``), never the caller's progress; evald's built-ins run inline.
    ``None`` runs everything inline, unbounded (sync code cannot be interrupted).
    ``async_timeout_s`` bounds awaiting an inline async evaluator (default
    ``timeout_s``).

    Not thread-safe: give each worker thread its own runner. ``run`` must not be
    called from a thread whose event loop is running (an inline async evaluator
    would then get an ``ErrorResult``). ``close()`` closes the private loop and
    lets the plug-in threads exit; it is safe to call twice, and the runner can be
    used again afterwards.
    """

    def __init__(
        self,
        *,
        timeout_s: float | None = None,
        async_timeout_s: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._timeout = async_timeout_s if async_timeout_s is not None else timeout_s
        self._isolated = IsolatedCalls(timeout_s) if timeout_s is not None else None
        self._clock = clock
        self._loop: asyncio.AbstractEventLoop | None = None
        self._logged: set[tuple[str | None, str]] = set()

    def run(self, trajectory: Trajectory, bound: Sequence[BoundEvaluator]) -> list[Outcome]:
        """One ``Outcome`` per bound evaluator that is ``due`` (sampled), in order.

        Never raises for evaluator faults.
        """
        return [self.run_one(trajectory, item) for item in bound if due(item, trajectory)]

    def run_one(self, trajectory: Trajectory, bound: BoundEvaluator) -> Outcome:
        """Evaluate, time and judge one bound evaluator."""
        started = self._clock()
        result: EvaluationResult
        try:
            gaps = self._gaps(trajectory, bound) if trajectory.gaps else None
            if gaps:  # not recorded is not failed: no verdict, and which setting records it
                result, passed = gap_error(trajectory, gaps), None
            else:
                result = self._evaluate(trajectory, bound)
                passed = verdict(bound.evaluator, result, bound.threshold)
        # The evaluator call is one of the three catch-all places (STYLE habit 6):
        # whatever user code raises is reported as an ErrorResult, never propagated.
        # CancelledError is a BaseException; an evaluator that raises it is still a fault.
        except (Exception, asyncio.CancelledError) as exc:
            self._log_first(bound, exc)
            result, passed = ErrorResult(error=f"{type(exc).__name__}: {exc}"), None
        duration = self._clock() - started
        unit = bound.evaluator.unit
        return Outcome(bound.spec_id, bound.id, result, passed, duration, bound.item, unit)

    @staticmethod
    def _gaps(trajectory: Trajectory, bound: BoundEvaluator) -> list[str]:
        if not trajectory.gaps:
            return []
        needs = bound.evaluator.needs(bound.criteria)
        return missing(trajectory, needs) if needs else []

    def close(self) -> None:
        """Close the private event loop, if one was created, and idle plug-in threads."""
        if self._isolated is not None:
            self._isolated.close()
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def __enter__(self) -> EvaluationRunner:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _evaluate(self, trajectory: Trajectory, bound: BoundEvaluator) -> EvaluationResult:
        evaluator, criteria = bound.evaluator, bound.criteria
        result: object
        if self._isolated is not None and not runs_inline(evaluator):
            call = partial(evaluator.evaluate, trajectory, criteria)
            result = self._isolated.call(evaluator, call)
        else:
            result = evaluator.evaluate(trajectory, criteria)
            if (
                type(result) not in _RESULT_CLASSES
                and not isinstance(result, _RESULT_TYPES)
                and inspect.isawaitable(result)
            ):
                result = self._await(result)
        # The exact classes first: isinstance on pydantic models is slower.
        if type(result) not in _RESULT_CLASSES and not isinstance(result, _RESULT_TYPES):
            raise TypeError(
                f"evaluate() returned {type(result).__name__}, "
                "expected NumericResult, BooleanResult or ErrorResult"
            )
        checked = cast(EvaluationResult, result)
        # NaN would poison every mean and fail silently (NaN >= t is False): not a score.
        if (
            type(checked) is NumericResult or isinstance(checked, NumericResult)
        ) and not math.isfinite(checked.score):
            raise ValueError(f"evaluate() returned a non-finite score {checked.score}")
        return checked

    def _await(self, awaitable: Awaitable[object]) -> object:
        try:
            _refuse_inside_running_loop()
            return self._event_loop().run_until_complete(self._bounded(awaitable))
        finally:
            if inspect.iscoroutine(awaitable):
                awaitable.close()  # no-op once finished; avoids "never awaited" otherwise

    async def _bounded(self, awaitable: Awaitable[object]) -> object:
        if self._timeout is None:
            return await awaitable
        return await asyncio.wait_for(awaitable, self._timeout)

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop

    def _log_first(self, bound: BoundEvaluator, exc: BaseException) -> None:
        """Log an evaluator's first failure with its traceback; later ones only at debug."""
        key = (bound.spec_id, bound.id)
        first = key not in self._logged
        self._logged.add(key)
        _log.log(
            logging.WARNING if first else logging.DEBUG,
            "evaluator %s (spec %s) failed: %s: %s",
            bound.id,
            bound.spec_id,
            type(exc).__name__,
            exc,
            # A timeout's traceback would show the runner, not the evaluator.
            exc_info=first and not isinstance(exc, EvaluatorTimeout | EvaluatorBusy),
        )


def _refuse_inside_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError("cannot await an async evaluator from inside a running event loop")


def bind_always(
    names: Iterable[str] = ALWAYS, *, registry: EvaluatorRegistry | None = None
) -> list[BoundEvaluator]:
    """Bind evaluators that need no spec (``spec_id`` None), with default config.

    Raises ``EvaluatorLoadError`` for an unknown name or an evaluator that needs criteria.
    """
    registry = registry or default_registry()
    bound = []
    for name in names:
        cls = registry.resolve(name)
        with user_code(name, "building with default config and no criteria"):
            evaluator = cls.build()
            criteria = cls.criteria_model()
        bound.append(BoundEvaluator(None, name, evaluator, criteria, evaluator.config.threshold))
    return bound
