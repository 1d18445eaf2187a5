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


class MetricsSink(ResultSink):
    """Updates the ``evald_*`` trajectory and evaluation metrics of ``telemetry``."""

    name = "prometheus"

    def __init__(self, telemetry: Telemetry) -> None:
        self._t = t = telemetry.results
        self._traces_evaluated = t.traces_evaluated.labels
        self._traces_failed = t.traces_failed.labels
        self._traces_without_tools = t.traces_without_tools.labels
        self._trace_latency = t.trace_latency.labels
        self._steps_per_trace = t.steps_per_trace.labels
        self._tool_calls_per_trace = t.tool_calls_per_trace.labels
        self._tool_calls = t.tool_calls.labels
        self._tool_errors = t.tool_errors.labels
        self._llm_calls = t.llm_calls.labels
        self._llm_tokens = t.llm_tokens.labels
        self._evaluations = t.evaluations.labels
        self._scores = t.scores.labels
        self._result_seconds = t.result_seconds.labels
        self._evaluation_duration = t.evaluation_duration.labels
        self._gaps = t.trajectory_gaps.labels

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Count the trajectory's facts once, then its outcomes (a scrape sees all or none)."""
        with self._t.per_trace.lock:
            service, agent = self._labels(trajectory)
            self._trajectory_facts(trajectory, service, agent)
            self._outcomes(trajectory, outcomes, service, agent)

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """More outcomes of a trajectory already written (e.g. a judge's, later, on the
        judge thread: the lock keeps the evaluation thread's updates whole)."""
        with self._t.per_trace.lock:
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
        exemplar = trajectory.trace_id
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
        exemplar = trajectory.trace_id
        self._trace_latency(service, agent).observe(trajectory.latency_s, exemplar)
        self._steps_per_trace(service, agent).observe(len(trajectory.steps))
        tools = llm_steps = tokens_in = tokens_out = 0
        tool_label = self._t.tool_label
        for step in trajectory.steps:  # one pass (the trajectory's properties make one each)
            kind = step.kind
            if kind is StepKind.TOOL:
                tools += 1
                self._tool_call(service, tool_label(step.name), failed=step.error is not None)
            elif kind is StepKind.LLM:
                llm_steps += 1
                tokens_in += step.input_tokens or 0
                tokens_out += step.output_tokens or 0
        self._tool_calls_per_trace(service, agent).observe(tools)
        if not tools:
            self._traces_without_tools(service).inc()
        for gap in trajectory.gaps:
            self._gaps(service, gap).inc()
        if llm_steps:
            self._llm_calls(service, agent).inc(llm_steps)
            if tokens_in:
                self._llm_tokens(service, agent, "input").inc(tokens_in)
            if tokens_out:
                self._llm_tokens(service, agent, "output").inc(tokens_out)

    def _tool_call(self, service: str, tool: str, *, failed: bool) -> None:
        service, tool = self._t.tool_series(service, tool)
        self._tool_calls(service, tool).inc()
        # Created at 0 with the first call, so errors/calls ratios exist for every tool.
        errors = self._tool_errors(service, tool)
        if failed:
            errors.inc()
