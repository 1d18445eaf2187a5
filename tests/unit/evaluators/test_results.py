"""Result kinds: what every reader of a result (runner, sinks, reports) tells apart."""

from __future__ import annotations

from typing import Literal

import pytest

from collector.offline.reports.summary import MetricSummary, failed_checks
from collector.sinks.metrics import outcome_label
from evaluators.base import Evaluator, EvaluatorConfig, NoCriteria
from evaluators.results import (
    BooleanResult,
    ErrorResult,
    EvaluationResult,
    NumericResult,
    is_error,
    score_of,
)
from evaluators.runner import Outcome, verdict
from evaluators.trajectory import Trajectory


class _Numeric(NumericResult):
    """A plug-in's own subclass: still a numeric result."""


class _Boolean(BooleanResult):
    pass


class _Error(ErrorResult):
    pass


class _Renamed(NumericResult):
    """pydantic lets a subclass redefine ``kind``: the class decides, not the field."""

    kind: Literal["latency"] = "latency"  # type: ignore[assignment]


class _ClaimsError(NumericResult):
    kind: str = "error"  # type: ignore[assignment]


class _Scorer(Evaluator[NoCriteria, EvaluatorConfig]):
    id = "scorer"

    def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> EvaluationResult:
        raise NotImplementedError


RESULTS: list[tuple[EvaluationResult, float | None]] = [
    (NumericResult(score=0.25), 0.25),
    (_Numeric(score=0.75), 0.75),
    (BooleanResult(value=True), 1.0),
    (_Boolean(value=False), 0.0),
    (ErrorResult(error="boom"), None),
    (_Error(error="boom"), None),
    (_Renamed(score=0.5), 0.5),
    (_ClaimsError(score=0.0), 0.0),
]


@pytest.mark.parametrize(("result", "score"), RESULTS)
def test_every_reader_tells_the_kinds_apart_subclasses_included(
    result: EvaluationResult, score: float | None
) -> None:
    is_error = isinstance(result, ErrorResult)
    assert score_of(result) == score
    outcome = Outcome(None, "e", result, None if is_error else False, 0.0, None, "score")
    assert outcome_label(outcome) == ("error" if is_error else "fail")
    assert [check.error for check in failed_checks([outcome])] == ["boom" if is_error else None]
    summary = MetricSummary()
    summary.add(outcome)
    assert (summary.errors, summary.failed, summary.scores.count) == (
        (1, 0, 0) if is_error else (0, 1, 1)
    )
    passed = verdict(_Scorer(EvaluatorConfig()), result, 0.5)
    assert passed is (None if is_error else score is not None and score >= 0.5)


def test_is_error_is_isinstance() -> None:
    for result, _ in RESULTS:
        assert is_error(result) is isinstance(result, ErrorResult)


def test_verdicts_without_a_threshold() -> None:
    scorer = _Scorer(EvaluatorConfig())
    assert verdict(scorer, NumericResult(score=1.0), None) is None
    assert verdict(scorer, _Renamed(score=1.0), None) is None
    assert verdict(scorer, BooleanResult(value=True), None) is True
    assert verdict(scorer, _Boolean(value=False), None) is False
    assert verdict(scorer, ErrorResult(error="x"), None) is None
