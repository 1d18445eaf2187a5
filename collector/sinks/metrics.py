"""Prometheus sink: trajectory facts for every trace, and evaluation results.

Nothing is labelled per trace: the trace id travels only as an OpenMetrics
exemplar (``trace_id``) on the score, latency and evaluation-duration histograms,
so a Grafana panel can jump from a bad bucket to the trace in the tracing backend.

A session's results (``scope: session`` specs) arrive through ``write_outcomes``
(see ``collector.sinks``): they update the evaluation metrics only, labelled by
their spec like any result, with the session's last trace as exemplar; the
trajectory facts were counted once per turn, when each trace was written.

A trace makes ~25 metric updates. The series they land in are looked up once per
(service, agent), (service, tool) and (spec, evaluator, service, agent) and kept,
but only where the label guards would pass the values through unchanged and count
nothing (``LabelGuard.passes``, ``SeriesBudget.passes``): a truncated, overflowing
or over-budget value goes through the guards on every trace, as each of those is
counted. What is kept grows with the series the families hold (bounded by the
budgets and the loaded specs), not with traffic.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.sinks.base import ResultSink
from collector.sinks.result_metrics import ResultMetrics
from collector.telemetry.fast_metrics import CounterChild, HistogramChild
from collector.telemetry.registry import Telemetry
from evaluators.results import is_error, score_of
from evaluators.runner import Outcome
from evaluators.trajectory import StepKind, Trajectory

NO_SPEC = "none"  # the `spec` label of evaluators that run on every trace


def outcome_label(outcome: Outcome) -> str:
    """``pass`` / ``fail`` / ``error`` / ``none`` (scored without a threshold)."""
    if is_error(outcome.result):
        return "error"
    if outcome.passed is None:
        return "none"
    return "pass" if outcome.passed else "fail"


class _AgentSeries:
    """The series one (service, agent)'s trajectory facts update; the LLM ones are
    created with the first LLM step, as before (no series at 0 for tool-only agents)."""

    __slots__ = (
        "agent",
        "evaluated",
        "failed",
        "latency",
        "llm_calls",
        "service",
        "steps",
        "tokens",
        "tool_calls",
    )

    def __init__(self, results: ResultMetrics, service: str, agent: str) -> None:
        self.service, self.agent = service, agent
        self.evaluated = results.traces_evaluated.labels(service, agent)
        self.failed = results.traces_failed.labels(service, agent)  # born at 0
        self.latency = results.trace_latency.labels(service, agent)
        self.steps = results.steps_per_trace.labels(service, agent)
        self.tool_calls = results.tool_calls_per_trace.labels(service, agent)
        self.llm_calls: CounterChild | None = None
        self.tokens: dict[str, CounterChild] = {}


class _OutcomeSeries:
    """The series of one (spec, evaluator, service, agent); verdict series are created
    with the first verdict that needs them (``MetricsSink._count_outcome``)."""

    __slots__ = ("duration", "labels", "scores", "verdicts")

    def __init__(self, results: ResultMetrics, labels: tuple[str, str, str, str]) -> None:
        self.labels = labels
        self.duration = results.evaluation_duration.labels(*labels)
        self.scores: dict[bool, HistogramChild] = {}  # by "in seconds"
        self.verdicts: dict[str, CounterChild] = {}


class MetricsSink(ResultSink):
    """Updates the ``evald_*`` trajectory and evaluation metrics of ``telemetry``.

    Not thread-safe by itself: ``write`` and ``write_outcomes`` hold the metric
    group's lock, which also guards the series kept here.
    """

    name = "prometheus"

    def __init__(self, telemetry: Telemetry) -> None:
        self._t = t = telemetry.results
        self._traces_without_tools = t.traces_without_tools.labels
        self._tool_calls = t.tool_calls.labels
        self._tool_errors = t.tool_errors.labels
        self._evaluations = t.evaluations.labels
        self._gaps = t.trajectory_gaps.labels
        # Kept series, by the values as they arrive (see the module docstring).
        self._agents: dict[tuple[str | None, str | None], _AgentSeries] = {}
        self._tools: dict[tuple[str, str], tuple[CounterChild, CounterChild]] = {}
        self._outcome_series: dict[tuple[str, str, str, str], _OutcomeSeries] = {}

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Count the trajectory's facts once, then its outcomes (a scrape sees all or none)."""
        with self._t.per_trace.lock:
            series = self._agent_series(trajectory)
            self._trajectory_facts(trajectory, series)
            self._outcomes(trajectory, outcomes, series.service, series.agent)

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """More outcomes of a trajectory already written (e.g. a judge's, later, on the
        judge thread: the lock keeps the evaluation thread's updates whole)."""
        with self._t.per_trace.lock:
            series = self._agent_series(trajectory)
            self._outcomes(trajectory, outcomes, series.service, series.agent)

    def close(self) -> None:
        """Nothing to flush: Prometheus scrapes the registry."""

    def _agent_series(self, trajectory: Trajectory) -> _AgentSeries:
        key = (trajectory.service, trajectory.agent)
        found = self._agents.get(key)
        if found is not None:
            return found
        t = self._t
        service, agent = t.service_label(key[0]), t.agent_label(key[1])
        pair = t.agent_series(service, agent)
        found = _AgentSeries(t, pair[0], pair[1])
        guards_pass = t.service_label.passes(key[0]) and t.agent_label.passes(key[1])
        if guards_pass and t.agent_series.passes(service, agent):
            self._agents[key] = found
        return found

    def _outcomes(
        self, trajectory: Trajectory, outcomes: Sequence[Outcome], service: str, agent: str
    ) -> None:
        exemplar = trajectory.trace_id
        kept = self._outcome_series
        for outcome in outcomes:
            labels = (outcome.spec_id or NO_SPEC, outcome.evaluator, service, agent)
            series = kept.get(labels)
            if series is None:
                series = kept[labels] = _OutcomeSeries(self._t, labels)
            self._count_outcome(series, outcome_label(outcome))
            series.duration.observe(outcome.duration_s, exemplar)
            score = score_of(outcome.result)
            if score is not None:
                # A duration is not a grade: seconds never go into the [0, 1] buckets.
                seconds = outcome.unit == "seconds"
                values = series.scores.get(seconds)
                if values is None:
                    family = self._t.result_seconds if seconds else self._t.scores
                    values = series.scores[seconds] = family.labels(*labels)
                values.observe(score, exemplar)

    def _count_outcome(self, series: _OutcomeSeries, verdict: str) -> None:
        verdicts = series.verdicts
        counter = verdicts.get(verdict)
        if counter is None:
            labels = series.labels
            if verdict in ("pass", "fail"):
                # Both series exist from the first verdict on, so pass-rate ratios and
                # rate() see a 0, not a missing series, for the outcome not seen yet.
                verdicts["pass"] = self._evaluations(*labels, "pass")
                verdicts["fail"] = self._evaluations(*labels, "fail")
            # Likewise errors: born at 0, so the first error is an increase alerts can see.
            verdicts["error"] = self._evaluations(*labels, "error")
            counter = verdicts[verdict] = self._evaluations(*labels, verdict)
        counter.inc()

    def _trajectory_facts(self, trajectory: Trajectory, series: _AgentSeries) -> None:
        series.evaluated.inc()
        if trajectory.failed:
            series.failed.inc()
        series.latency.observe(trajectory.latency_s, trajectory.trace_id)
        series.steps.observe(len(trajectory.steps))
        service = series.service
        tools = llm_steps = tokens_in = tokens_out = 0
        for step in trajectory.steps:  # one pass (the trajectory's properties make one each)
            kind = step.kind
            if kind is StepKind.TOOL:
                tools += 1
                calls, errors = self._tool_series(service, step.name)
                calls.inc()
                if step.error is not None:
                    errors.inc()
            elif kind is StepKind.LLM:
                llm_steps += 1
                tokens_in += step.input_tokens or 0
                tokens_out += step.output_tokens or 0
        series.tool_calls.observe(tools)
        if not tools:
            self._traces_without_tools(service).inc()
        for gap in trajectory.gaps:
            self._gaps(service, gap).inc()
        if llm_steps:
            self._llm_facts(series, llm_steps, tokens_in, tokens_out)

    def _llm_facts(self, series: _AgentSeries, calls: int, tokens_in: int, tokens_out: int) -> None:
        if series.llm_calls is None:
            series.llm_calls = self._t.llm_calls.labels(series.service, series.agent)
        series.llm_calls.inc(calls)
        for direction, tokens in (("input", tokens_in), ("output", tokens_out)):
            if tokens:
                counter = series.tokens.get(direction)
                if counter is None:
                    labels = (series.service, series.agent, direction)
                    counter = series.tokens[direction] = self._t.llm_tokens.labels(*labels)
                counter.inc(tokens)

    def _tool_series(self, service: str, name: str) -> tuple[CounterChild, CounterChild]:
        """(calls, errors) of one tool; the errors series is created at 0 with the first
        call, so errors/calls ratios exist for every tool."""
        key = (service, name)
        found = self._tools.get(key)
        if found is not None:
            return found
        t = self._t
        tool = t.tool_label(name)
        pair = t.tool_series(service, tool)
        found = (self._tool_calls(*pair), self._tool_errors(*pair))
        if t.tool_label.passes(name) and t.tool_series.passes(service, tool):
            self._tools[key] = found
        return found
