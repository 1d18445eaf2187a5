"""Facts of every run, reported for every trace without a spec (Vertex's latency / failure)."""

from __future__ import annotations

from evaluators.base import Evaluator, EvaluatorConfig, NoCriteria
from evaluators.results import NumericResult
from evaluators.trajectory import Trajectory


class Latency(Evaluator[NoCriteria, EvaluatorConfig]):
    """The agent run's wall-clock duration in seconds (lower is better; no default threshold)."""

    id = "latency"
    higher_is_better = False
    unit = "seconds"
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        return NumericResult(
            score=trajectory.latency_s, explanation=f"{trajectory.latency_s:.3f} s"
        )


class FailureConfig(EvaluatorConfig):
    """Threshold 0: a run that errored (score 1) fails, a clean run (score 0) passes."""

    threshold: float | None = 0.0


class Failure(Evaluator[NoCriteria, FailureConfig]):
    """1.0 if the agent run errored, else 0.0; the explanation is the run's error."""

    id = "failure"
    config_model = FailureConfig
    higher_is_better = False
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        return NumericResult(
            score=1.0 if trajectory.failed else 0.0,
            explanation=trajectory.error if trajectory.failed else None,
        )
