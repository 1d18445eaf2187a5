"""The results' metrics: trajectory facts and evaluator outcomes (written by
``MetricsSink``), OTLP export counts, and the cap on traffic-derived label values."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from collector.telemetry.fast_metrics import FastCounter, FastHistogram, MetricGroup
from collector.telemetry.labels import LabelGuard, SeriesBudget

# Score histogram buckets: scores are usually in [0, 1]. Latency buckets: agent runs, and
# the results of evaluators in seconds.
SCORE_BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300)
COUNT_BUCKETS = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89)
EVAL_DURATION_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30)


class ResultMetrics:
    """What evaluated traces report; traffic-derived labels go through ``LabelGuard``s.

    The families ``MetricsSink`` writes for every trace are ``fast_metrics`` families
    of one group: write them with ``per_trace.lock`` held.
    """

    def __init__(
        self,
        registry: CollectorRegistry,
        label_value_limit: int = 200,
        *,
        label_value_length: int = 64,
        series_limit: int = 100,
    ) -> None:
        r = registry
        self.per_trace = g = MetricGroup(registry)
        self.traces_evaluated = FastCounter(
            g,
            "evald_traces_evaluated",
            "Agent runs normalised and evaluated (a trace recording a conversation: one per turn)",
            ["service", "agent"],
        )
        self.traces_failed = FastCounter(
            g,
            "evald_traces_failed",
            "Agent runs that ended in error",
            ["service", "agent"],
        )
        self.traces_without_tools = FastCounter(
            g,
            "evald_traces_without_tool_calls",
            "Traces in which no tool call was recognised",
            ["service"],
        )
        self.trace_latency = FastHistogram(
            g,
            "evald_agent_latency_seconds",
            "Agent run latency (root span duration)",
            ["service", "agent"],
            buckets=LATENCY_BUCKETS,
        )
        self.steps_per_trace = FastHistogram(
            g,
            "evald_trace_steps", "Steps per trace", ["service", "agent"],
            buckets=COUNT_BUCKETS,
        )  # fmt: skip
        self.tool_calls_per_trace = FastHistogram(
            g,
            "evald_trace_tool_calls", "Tool calls per trace", ["service", "agent"],
            buckets=COUNT_BUCKETS,
        )  # fmt: skip
        self.tool_calls = FastCounter(
            g,
            "evald_tool_calls",
            "Tool calls, by tool",
            ["service", "tool"],
        )
        self.tool_errors = FastCounter(
            g,
            "evald_tool_errors",
            "Tool calls that failed, by tool",
            ["service", "tool"],
        )
        self.llm_calls = FastCounter(
            g,
            "evald_llm_calls",
            "LLM inference steps",
            ["service", "agent"],
        )
        self.llm_tokens = FastCounter(
            g,
            "evald_llm_tokens", "LLM tokens, by direction", ["service", "agent", "direction"],
        )  # fmt: skip
        self.evaluations = FastCounter(
            g,
            "evald_evaluations",
            "Evaluator results, by outcome (pass, fail, error, none)",
            ["spec", "evaluator", "service", "agent", "outcome"],
        )
        self.scores = FastHistogram(
            g,
            "evald_evaluation_score",
            "Evaluator scores (unit score; durations go to evald_evaluation_result_seconds)",
            ["spec", "evaluator", "service", "agent"],
            buckets=SCORE_BUCKETS,
        )
        self.result_seconds = FastHistogram(
            g,
            "evald_evaluation_result_seconds",
            "Results of evaluators that measure a duration (unit seconds, e.g. latency)",
            ["spec", "evaluator", "service", "agent"],
            buckets=LATENCY_BUCKETS,
        )
        self.evaluation_duration = FastHistogram(
            g,
            "evald_evaluation_duration_seconds",
            "Time spent in one evaluator call",
            ["spec", "evaluator", "service", "agent"],
            buckets=EVAL_DURATION_BUCKETS,
        )
        self.otlp_export_items = Counter(
            "evald_otlp_export_items",
            "Spans / log records given to the OTLP exporter, by outcome (sent, failed, dropped)",
            ["signal", "outcome"],
            registry=r,
        )
        self.trajectory_gaps = FastCounter(
            g,
            "evald_trajectory_gaps",
            "Traces whose instrumentation did not record what evaluators may need, by gap",
            ["service", "gap"],
        )
        self.label_overflow = Counter(
            "evald_label_overflow",
            "Label values replaced by 'other' because the label hit its cap",
            ["label"],
            registry=r,
        )
        self.label_truncated = Counter(
            "evald_label_values_truncated",
            "Label values cut to telemetry.label_value_length",
            ["label"],
            registry=r,
        )
        self.series_overflow = Counter(
            "evald_series_overflow",
            "Observations put in the 'other' series because their label combination "
            "was over telemetry.max_series_per_metric",
            ["labels"],
            registry=r,
        )
        guard = (label_value_limit, self.label_overflow, label_value_length, self.label_truncated)
        self.service_label = LabelGuard("service", *guard)
        self.agent_label = LabelGuard("agent", *guard)
        self.tool_label = LabelGuard("tool", *guard)
        # The families labelled (service, agent) share one budget, those labelled
        # (service, tool) another (telemetry.labels.SeriesBudget).
        self.agent_series = SeriesBudget(("service", "agent"), series_limit, self.series_overflow)
        self.tool_series = SeriesBudget(("service", "tool"), series_limit, self.series_overflow)
