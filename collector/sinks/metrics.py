"""Prometheus sink: trajectory facts for every trace, and evaluation results.

Nothing is labelled per trace: the trace id travels only as an OpenMetrics
exemplar (``trace_id``) on the score, latency and evaluation-duration histograms,
so a Grafana panel can jump from a bad bucket to the trace in the tracing backend.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.telemetry import Telemetry
from evaluators.results import ErrorResult, score_of
from evaluators.runner import Outcome
from evaluators.trajectory import StepKind, Trajectory

NO_SPEC = "none"  # the `spec` label of evaluators that run on every trace


def outcome_label(outcome: Outcome) -> str:
    """``pass`` / ``fail`` / ``error`` / ``none`` (scored without a threshold)."""
    if isinstance(outcome.result, ErrorResult):
        return "error"
    if outcome.passed is None:
        return "none"
    return "pass" if outcome.passed else "fail"


class MetricsSink:
    """Updates the ``evald_*`` trajectory and evaluation metrics of ``telemetry``."""

    name = "prometheus"

    def __init__(self, telemetry: Telemetry) -> None:
        self._t = telemetry

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Count the trajectory's facts once, then its outcomes."""
        service, agent = self._labels(trajectory)
        self._trajectory_facts(trajectory, service, agent)
        self._outcomes(trajectory, outcomes, service, agent)

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """More outcomes of a trajectory already written (e.g. a judge's, later)."""
        service, agent = self._labels(trajectory)
        self._outcomes(trajectory, outcomes, service, agent)

    def close(self) -> None:
        """Nothing to flush: Prometheus scrapes the registry."""

    def _labels(self, trajectory: Trajectory) -> tuple[str, str]:
        return self._t.service_label(trajectory.service), self._t.agent_label(trajectory.agent)

    def _outcomes(
        self, trajectory: Trajectory, outcomes: Sequence[Outcome], service: str, agent: str
    ) -> None:
        t = self._t
        exemplar = {"trace_id": trajectory.trace_id}
        for outcome in outcomes:
            labels = (outcome.spec_id or NO_SPEC, outcome.evaluator, service, agent)
            self._count_outcome(labels, outcome_label(outcome))
            t.evaluation_duration.labels(*labels).observe(outcome.duration_s, exemplar)
            score = score_of(outcome.result)
            if score is not None:
                t.scores.labels(*labels).observe(score, exemplar)

    def _count_outcome(self, labels: tuple[str, str, str, str], verdict: str) -> None:
        evaluations = self._t.evaluations
        if verdict in ("pass", "fail"):
            # Both series exist from the first verdict on, so pass-rate ratios and
            # rate() see a 0, not a missing series, for the outcome not seen yet.
            evaluations.labels(*labels, "pass")
            evaluations.labels(*labels, "fail")
        evaluations.labels(*labels, verdict).inc()

    def _trajectory_facts(self, trajectory: Trajectory, service: str, agent: str) -> None:
        t = self._t
        t.traces_evaluated.labels(service, agent).inc()
        if trajectory.failed:
            t.traces_failed.labels(service, agent).inc()
        exemplar = {"trace_id": trajectory.trace_id}
        t.trace_latency.labels(service, agent).observe(trajectory.latency_s, exemplar)
        t.steps_per_trace.labels(service, agent).observe(len(trajectory.steps))
        tools = trajectory.tool_calls
        t.tool_calls_per_trace.labels(service, agent).observe(len(tools))
        if not tools:
            t.traces_without_tools.labels(service).inc()
        for step in tools:
            self._tool_call(service, t.tool_label(step.name), failed=step.error is not None)
        self._llm_facts(trajectory, service, agent)

    def _tool_call(self, service: str, tool: str, *, failed: bool) -> None:
        self._t.tool_calls.labels(service, tool).inc()
        # Created at 0 with the first call, so errors/calls ratios exist for every tool.
        errors = self._t.tool_errors.labels(service, tool)
        if failed:
            errors.inc()

    def _llm_facts(self, trajectory: Trajectory, service: str, agent: str) -> None:
        t = self._t
        llm_steps = sum(1 for step in trajectory.steps if step.kind is StepKind.LLM)
        if not llm_steps:
            return
        t.llm_calls.labels(service, agent).inc(llm_steps)
        if trajectory.input_tokens:
            t.llm_tokens.labels(service, agent, "input").inc(trajectory.input_tokens)
        if trajectory.output_tokens:
            t.llm_tokens.labels(service, agent, "output").inc(trajectory.output_tokens)
