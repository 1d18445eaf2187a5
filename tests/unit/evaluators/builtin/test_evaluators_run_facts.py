"""latency and failure: facts of every run, no reference needed."""

from __future__ import annotations

from evaluators.base import NoCriteria
from evaluators.builtin.run_facts import Failure, Latency
from evaluators.results import NumericResult
from evaluators.runner import verdict
from evaluators.trajectory import Trajectory

OK = Trajectory("t1", "svc", None, None, None, "done", False, 3.25, 0, ())
FAILED = OK._replace(failed=True, output=None, error="RuntimeError: RefundWindowExpired")


def test_latency_is_the_run_duration_in_seconds_lower_is_better() -> None:
    evaluator = Latency.build()
    result = evaluator.evaluate(OK, NoCriteria())
    assert result == NumericResult(score=3.25, explanation="3.250 s")
    assert Latency.higher_is_better is False
    assert evaluator.config.threshold is None
    assert verdict(evaluator, result, 5.0) is True
    assert verdict(evaluator, result, 3.0) is False


def test_failure_scores_one_for_a_failed_run_and_fails_it_by_default() -> None:
    evaluator = Failure.build()
    failed = evaluator.evaluate(FAILED, NoCriteria())
    assert failed.score == 1.0
    assert failed.explanation == "RuntimeError: RefundWindowExpired"
    assert verdict(evaluator, failed, evaluator.config.threshold) is False


def test_failure_scores_zero_for_a_clean_run_and_passes_it() -> None:
    evaluator = Failure.build()
    ok = evaluator.evaluate(OK, NoCriteria())
    assert ok.score == 0.0 and ok.explanation is None
    assert verdict(evaluator, ok, evaluator.config.threshold) is True
