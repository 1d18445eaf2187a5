"""The runner: exceptions become ErrorResults, async evaluators, verdicts, timing."""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any, ClassVar

import pytest

from evaluators.base import Evaluator, EvaluatorConfig, NoCriteria
from evaluators.registry import EvaluatorLoadError, EvaluatorRegistry
from evaluators.results import BooleanResult, ErrorResult, EvaluationResult, NumericResult
from evaluators.runner import EvaluationRunner, Outcome, bind_always, verdict
from evaluators.spec import BoundEvaluator
from evaluators.trajectory import Trajectory

TRAJECTORY = Trajectory("t1", "svc", None, None, None, None, False, 2.5, 0, ())


class Fixed(Evaluator[NoCriteria, EvaluatorConfig]):
    """Returns a preset result (or raises a preset exception)."""

    id = "fixed"
    outcome: ClassVar[Any] = None

    def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> EvaluationResult:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome  # type: ignore[no-any-return]


def fixed(outcome: Any, *, lower_is_better: bool = False) -> Evaluator[Any, Any]:
    cls = type("Preset", (Fixed,), {"outcome": outcome, "higher_is_better": not lower_is_better})
    return cls(EvaluatorConfig())


def bound(evaluator: Evaluator[Any, Any], threshold: float | None = None) -> BoundEvaluator:
    return BoundEvaluator("spec-a", "fixed", evaluator, NoCriteria(), threshold)


def run_one(evaluator: Evaluator[Any, Any], threshold: float | None = None) -> Outcome:
    with EvaluationRunner() as runner:
        return runner.run(TRAJECTORY, [bound(evaluator, threshold)])[0]


class AsyncScore(Evaluator[NoCriteria, EvaluatorConfig]):
    id = "async_score"

    async def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        await asyncio.sleep(0)
        return NumericResult(score=trajectory.latency_s)


class Slow(Evaluator[NoCriteria, EvaluatorConfig]):
    id = "slow"

    async def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        await asyncio.Event().wait()  # never set: only the timeout ends it
        raise AssertionError("unreachable")


def test_exception_becomes_error_result_without_verdict() -> None:
    outcome = run_one(fixed(ValueError("bad reference")), threshold=0.5)
    assert outcome.result == ErrorResult(error="ValueError: bad reference")
    assert outcome.passed is None
    assert (outcome.spec_id, outcome.evaluator) == ("spec-a", "fixed")


def test_cancelled_error_from_an_evaluator_is_contained() -> None:
    outcome = run_one(fixed(asyncio.CancelledError("gone")))
    assert isinstance(outcome.result, ErrorResult)
    assert outcome.result.error == "CancelledError: gone"


def test_non_result_return_value_is_an_error() -> None:
    outcome = run_one(fixed({"score": 1}))
    assert isinstance(outcome.result, ErrorResult)
    assert "returned dict" in outcome.result.error


def test_later_evaluators_still_run_after_one_fails() -> None:
    with EvaluationRunner() as runner:
        outcomes = runner.run(
            TRAJECTORY, [bound(fixed(RuntimeError("x"))), bound(fixed(NumericResult(score=1)))]
        )
    assert [type(o.result) for o in outcomes] == [ErrorResult, NumericResult]


def test_first_failure_is_logged_with_traceback_then_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="evaluators.runner")
    evaluator = bound(fixed(RuntimeError("boom")))
    with EvaluationRunner() as runner:
        runner.run(TRAJECTORY, [evaluator, evaluator])
    levels = [(r.levelno, bool(r.exc_info)) for r in caplog.records]
    assert levels == [(logging.WARNING, True), (logging.DEBUG, False)]


def test_async_evaluator_is_awaited_on_the_runner_loop() -> None:
    runner = EvaluationRunner()
    outcome = runner.run(TRAJECTORY, [bound(AsyncScore(EvaluatorConfig()), threshold=2.0)])[0]
    assert outcome.result == NumericResult(score=2.5)
    assert outcome.passed is True
    runner.close()
    runner.close()  # idempotent
    again = runner.run(TRAJECTORY, [bound(AsyncScore(EvaluatorConfig()))])[0]
    assert again.result == NumericResult(score=2.5)  # a closed runner makes a new loop
    runner.close()


def test_async_timeout_becomes_error_result() -> None:
    with EvaluationRunner(async_timeout_s=0.01) as runner:
        outcome = runner.run(TRAJECTORY, [bound(Slow(EvaluatorConfig()))])[0]
    assert isinstance(outcome.result, ErrorResult)
    assert outcome.result.error.startswith("TimeoutError")


def test_async_evaluator_inside_a_running_loop_is_an_error_not_a_hang() -> None:
    async def main() -> Outcome:
        with EvaluationRunner() as runner:
            return runner.run(TRAJECTORY, [bound(AsyncScore(EvaluatorConfig()))])[0]

    outcome = asyncio.run(main())
    assert isinstance(outcome.result, ErrorResult)
    assert "running event loop" in outcome.result.error


def test_duration_is_measured_with_the_clock() -> None:
    ticks = itertools.count(start=10.0, step=0.25)
    with EvaluationRunner(clock=lambda: next(ticks)) as runner:
        outcome = runner.run(TRAJECTORY, [bound(fixed(NumericResult(score=1)))])[0]
    assert outcome.duration_s == 0.25


@pytest.mark.parametrize(
    ("result", "threshold", "lower_is_better", "expected"),
    [
        (NumericResult(score=0.8), 0.75, False, True),
        (NumericResult(score=0.7), 0.75, False, False),
        (NumericResult(score=0.75), 0.75, False, True),  # the threshold itself passes
        (NumericResult(score=2.0), 1.5, True, False),  # latency-like: lower is better
        (NumericResult(score=1.0), 1.5, True, True),
        (NumericResult(score=0.9), None, False, None),  # no threshold, no verdict
        (BooleanResult(value=True), None, False, True),
        (BooleanResult(value=False), None, False, False),
        (BooleanResult(value=False), 0.0, False, True),  # 0.0 >= 0.0
        (BooleanResult(value=True), 0.0, True, False),  # lower is better: 1.0 > 0.0
        (ErrorResult(error="x"), 0.5, False, None),
    ],
)
def test_verdict(
    result: EvaluationResult, threshold: float | None, lower_is_better: bool, expected: bool | None
) -> None:
    evaluator = fixed(result, lower_is_better=lower_is_better)
    assert verdict(evaluator, result, threshold) is expected
    assert run_one(evaluator, threshold).passed is expected


def test_bind_always_binds_latency_and_failure_without_a_spec() -> None:
    failed = TRAJECTORY._replace(failed=True, error="RuntimeError: refund window")
    with EvaluationRunner() as runner:
        outcomes = runner.run(failed, bind_always())
    by_name = {o.evaluator: o for o in outcomes}
    assert set(by_name) == {"latency", "failure"}
    assert all(o.spec_id is None for o in outcomes)
    assert by_name["latency"].result.model_dump()["score"] == 2.5
    assert by_name["latency"].passed is None
    assert by_name["failure"].passed is False
    assert by_name["failure"].result.explanation == "RuntimeError: refund window"


def test_bind_always_rejects_unknown_names_and_evaluators_needing_criteria() -> None:
    registry = EvaluatorRegistry()
    with pytest.raises(EvaluatorLoadError, match="'no_such'"):
        bind_always(["no_such"], registry=registry)
    with pytest.raises(EvaluatorLoadError, match=r"trajectory_recall.*no criteria"):
        bind_always(["trajectory_recall"], registry=registry)


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_score_is_an_evaluator_error_not_a_failed_verdict(score: float) -> None:
    # NaN would silently fail its threshold and turn every mean of the run into NaN.
    with EvaluationRunner() as runner:
        outcome = runner.run_one(TRAJECTORY, bound(fixed(NumericResult(score=score)), 0.5))
    assert isinstance(outcome.result, ErrorResult)
    assert "non-finite score" in outcome.result.error
    assert outcome.passed is None


class _AwaitableVerdict(BooleanResult):
    """A result subclass that is also awaitable: a result, not something to await."""

    def __await__(self) -> Any:
        async def another() -> BooleanResult:
            return BooleanResult(value=False)

        return another().__await__()


class _Finer(NumericResult):
    """A plug-in's own numeric result class."""


def test_result_subclasses_are_results_whatever_else_they_are() -> None:
    assert run_one(fixed(_AwaitableVerdict(value=True))).passed is True
    assert run_one(fixed(_Finer(score=0.9)), 0.5).passed is True
    outcome = run_one(fixed(_Finer(score=float("nan"))), 0.5)
    assert isinstance(outcome.result, ErrorResult) and "non-finite" in outcome.result.error
