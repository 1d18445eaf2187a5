"""Prometheus sink: trajectory facts for every trace, and evaluation results.

Nothing is labelled per trace: the trace id travels only as an OpenMetrics
exemplar (``trace_id``) on the score, latency and evaluation-duration histograms,
so a Grafana panel can jump from a bad bucket to the trace in the tracing backend.

A session's results (``scope: session`` specs) arrive through ``write_outcomes``
(see ``collector.sinks``): they update the evaluation metrics only, labelled by
their spec like any result, with the session's last trace as exemplar; the
trajectory facts were counted once per turn, when each trace was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prometheus_client.metrics import MetricWrapperBase

from collector.sinks.base import ResultSink
from collector.telemetry.registry import Telemetry
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


class _Bound:
    """``metric.labels(*values)``, remembered per tuple of label values.

    prometheus_client validates the values and takes a lock in every ``labels()``
    call (~2 µs; a trace needs about 25); a dict hit costs a tenth of that. The
    cache holds the children the metric holds anyway: traffic-derived values go
    through ``LabelGuard`` and ``SeriesBudget`` first, so it is bounded by the same caps.
    """

    __slots__ = ("_children", "_metric")

    def __init__(self, metric: MetricWrapperBase) -> None:
        self._metric = metric
        self._children: dict[tuple[str, ...], Any] = {}

    def __call__(self, *values: str) -> Any:
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = self._metric.labels(*values)
        return child


class MetricsSink(ResultSink):
    """Updates the ``evald_*`` trajectory and evaluation metrics of ``telemetry``."""

    name = "prometheus"

    def __init__(self, telemetry: Telemetry) -> None:
        self._t = t = telemetry.results
        self._traces_evaluated = _Bound(t.traces_evaluated)
        self._traces_failed = _Bound(t.traces_failed)
        self._traces_without_tools = _Bound(t.traces_without_tools)
        self._trace_latency = _Bound(t.trace_latency)
        self._steps_per_trace = _Bound(t.steps_per_trace)
        self._tool_calls_per_trace = _Bound(t.tool_calls_per_trace)
        self._tool_calls = _Bound(t.tool_calls)
        self._tool_errors = _Bound(t.tool_errors)
        self._llm_calls = _Bound(t.llm_calls)
        self._llm_tokens = _Bound(t.llm_tokens)
        self._evaluations = _Bound(t.evaluations)
        self._scores = _Bound(t.scores)
        self._result_seconds = _Bound(t.result_seconds)
        self._evaluation_duration = _Bound(t.evaluation_duration)
        self._gaps = _Bound(t.trajectory_gaps)

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
        t = self._t
        pair = t.agent_series(t.service_label(trajectory.service), t.agent_label(trajectory.agent))
        return pair[0], pair[1]

    def _outcomes(
        self, trajectory: Trajectory, outcomes: Sequence[Outcome], service: str, agent: str
    ) -> None:
        exemplar = {"trace_id": trajectory.trace_id}
        for outcome in outcomes:
            labels = (outcome.spec_id or NO_SPEC, outcome.evaluator, service, agent)
            self._count_outcome(labels, outcome_label(outcome))
            self._evaluation_duration(*labels).observe(outcome.duration_s, exemplar)
            score = score_of(outcome.result)
            if score is not None:
                # A duration is not a grade: seconds never go into the [0, 1] buckets.
                values = self._result_seconds if outcome.unit == "seconds" else self._scores
                values(*labels).observe(score, exemplar)

    def _count_outcome(self, labels: tuple[str, str, str, str], verdict: str) -> None:
        if verdict in ("pass", "fail"):
            # Both series exist from the first verdict on, so pass-rate ratios and
            # rate() see a 0, not a missing series, for the outcome not seen yet.
            self._evaluations(*labels, "pass")
            self._evaluations(*labels, "fail")
        # Likewise errors: born at 0, so the first error is an increase alerts can see.
        self._evaluations(*labels, "error")
        self._evaluations(*labels, verdict).inc()

    def _trajectory_facts(self, trajectory: Trajectory, service: str, agent: str) -> None:
        self._traces_evaluated(service, agent).inc()
        failed = self._traces_failed(service, agent)  # born at 0 with the agent's first run
        if trajectory.failed:
            failed.inc()
        exemplar = {"trace_id": trajectory.trace_id}
        self._trace_latency(service, agent).observe(trajectory.latency_s, exemplar)
        self._steps_per_trace(service, agent).observe(len(trajectory.steps))
        tools = trajectory.tool_calls
        self._tool_calls_per_trace(service, agent).observe(len(tools))
        if not tools:
            self._traces_without_tools(service).inc()
        for step in tools:
            self._tool_call(service, self._t.tool_label(step.name), failed=step.error is not None)
        for gap in trajectory.gaps:
            self._gaps(service, gap).inc()
        self._llm_facts(trajectory, service, agent)

    def _tool_call(self, service: str, tool: str, *, failed: bool) -> None:
        service, tool = self._t.tool_series(service, tool)
        self._tool_calls(service, tool).inc()
        # Created at 0 with the first call, so errors/calls ratios exist for every tool.
        errors = self._tool_errors(service, tool)
        if failed:
            errors.inc()

    def _llm_facts(self, trajectory: Trajectory, service: str, agent: str) -> None:
        llm_steps = sum(1 for step in trajectory.steps if step.kind is StepKind.LLM)
        if not llm_steps:
            return
        self._llm_calls(service, agent).inc(llm_steps)
        tokens_in, tokens_out = trajectory.input_tokens, trajectory.output_tokens  # sums
        if tokens_in:
            self._llm_tokens(service, agent, "input").inc(tokens_in)
        if tokens_out:
            self._llm_tokens(service, agent, "output").inc(tokens_out)
