"""Prometheus sink: trajectory facts for every trace, and evaluation results."""

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
        t = self._t
        service = t.service_label(trajectory.service)
        agent = t.agent_label(trajectory.agent)
        self._trajectory_facts(trajectory, service, agent)
        for outcome in outcomes:
            spec = outcome.spec_id or NO_SPEC
            labels = (spec, outcome.evaluator, service, agent)
            t.evaluations.labels(*labels, outcome_label(outcome)).inc()
            t.evaluation_duration.labels(outcome.evaluator).observe(outcome.duration_s)
            score = score_of(outcome.result)
            if score is not None:
                t.scores.labels(*labels).observe(score)

    def _trajectory_facts(self, trajectory: Trajectory, service: str, agent: str) -> None:
        t = self._t
        t.traces_evaluated.labels(service, agent).inc()
        if trajectory.failed:
            t.traces_failed.labels(service, agent).inc()
        t.trace_latency.labels(service, agent).observe(trajectory.latency_s)
        t.steps_per_trace.labels(service, agent).observe(len(trajectory.steps))
        tools = trajectory.tool_calls
        t.tool_calls_per_trace.labels(service, agent).observe(len(tools))
        if not tools:
            t.traces_without_tools.labels(service).inc()
        for step in tools:
            tool = t.tool_label(step.name)
            t.tool_calls.labels(service, tool).inc()
            if step.error is not None:
                t.tool_errors.labels(service, tool).inc()
        llm_steps = [step for step in trajectory.steps if step.kind is StepKind.LLM]
        if llm_steps:
            t.llm_calls.labels(service, agent).inc(len(llm_steps))
            if trajectory.input_tokens:
                t.llm_tokens.labels(service, agent, "input").inc(trajectory.input_tokens)
            if trajectory.output_tokens:
                t.llm_tokens.labels(service, agent, "output").inc(trajectory.output_tokens)

    def close(self) -> None:
        """Nothing to flush: Prometheus scrapes the registry."""
