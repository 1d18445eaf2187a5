"""Seconds are not scores: evaluators whose unit is seconds (latency) get their own
histogram, in seconds, and never the [0, 1] score buckets."""

from __future__ import annotations

from typing import ClassVar

import pytest

from collector.sinks.metrics import MetricsSink
from collector.telemetry.registry import Telemetry
from evaluators import NumericResult
from evaluators.base import Evaluator, EvaluatorConfig, NoCriteria
from evaluators.registry import EvaluatorLoadError, validate_evaluator_class
from evaluators.runner import EvaluationRunner, bind_always
from evaluators.trajectory import Trajectory

RUN = Trajectory(f"{7:032x}", "svc", "agent", None, None, None, False, 42.0, 0, [])


def observed(telemetry: Telemetry, name: str, evaluator: str, suffix: str) -> float | None:
    labels = {"spec": "none", "evaluator": evaluator, "service": "svc", "agent": "agent"}
    return telemetry.registry.get_sample_value(f"{name}_{suffix}", labels)


def test_latency_goes_to_the_seconds_histogram_and_failure_to_the_scores() -> None:
    telemetry = Telemetry()
    with EvaluationRunner() as runner:
        outcomes = runner.run(RUN, bind_always(["latency", "failure"]))
    assert [outcome.unit for outcome in outcomes] == ["seconds", "score"]
    MetricsSink(telemetry).write(RUN, outcomes)
    seconds, scores = "evald_evaluation_result_seconds", "evald_evaluation_score"
    assert observed(telemetry, seconds, "latency", "sum") == 42.0
    assert observed(telemetry, scores, "latency", "count") is None
    assert observed(telemetry, scores, "failure", "count") == 1.0
    assert observed(telemetry, seconds, "failure", "count") is None
    # 42 s lands in a bucket below 60 s, not in "+Inf" beyond the score buckets' 1.0.
    labels = {"spec": "none", "evaluator": "latency", "service": "svc", "agent": "agent"}
    below_a_minute = telemetry.registry.get_sample_value(
        f"{seconds}_bucket", {**labels, "le": "60.0"}
    )
    assert below_a_minute == 1.0


def test_a_plugin_declares_its_unit() -> None:
    class WaitTime(Evaluator[NoCriteria, EvaluatorConfig]):
        id = "wait_time"
        unit = "seconds"

        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
            return NumericResult(score=3.0)

    assert validate_evaluator_class(WaitTime, "wait_time").unit == "seconds"


def test_an_unknown_unit_is_a_load_error() -> None:
    class Minutes(Evaluator[NoCriteria, EvaluatorConfig]):
        id = "minutes"
        unit: ClassVar = "minutes"

        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
            return NumericResult(score=1.0)

    with pytest.raises(EvaluatorLoadError, match=r"Minutes\.unit is 'minutes', not 'score' or"):
        validate_evaluator_class(Minutes, "minutes")
