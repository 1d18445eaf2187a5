"""evald's own Prometheus metrics: one object, one registry, passed to every component.

Names follow Prometheus conventions (``evald_`` namespace, base units, ``_total`` on
counters). Label values that come from traffic (``service``, ``agent``, ``tool``)
go through ``LabelGuard`` so a misbehaving client cannot explode cardinality.
Every metric here is listed in the README's metric table.
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

from collector.core.build_info import build_labels, installed_version

# `_created` series double the exposition size and no dashboard uses them.
disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in prometheus-client

OVERFLOW_LABEL = "other"
UNKNOWN_LABEL = "unknown"

# Score histogram buckets: scores are usually in [0, 1].
SCORE_BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300)
COUNT_BUCKETS = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89)
EVAL_DURATION_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30)


class LabelGuard:
    """Caps the distinct values one traffic-derived label may take.

    The first ``limit`` distinct values pass through; later new values become
    ``other`` and are counted in ``evald_label_overflow_total{label}``. Values are
    never forgotten, so a series, once created, keeps its label value (a series
    that switched to ``other`` later would break rates). Thread-safe.
    """

    def __init__(self, label: str, limit: int, overflow: Counter) -> None:
        self._label = label
        self._limit = limit
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._overflow = overflow.labels(label=label)

    def __call__(self, value: str | None) -> str:
        if not value:
            return UNKNOWN_LABEL
        if value in self._seen:
            return value
        with self._lock:
            if value in self._seen:
                return value
            if len(self._seen) < self._limit:
                self._seen.add(value)
                return value
        self._overflow.inc()
        return OVERFLOW_LABEL


class Telemetry:
    """All of evald's metrics, registered on ``registry`` (a fresh one in tests)."""

    def __init__(
        self, registry: CollectorRegistry | None = None, label_value_limit: int = 200
    ) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.build_info = Gauge(
            "evald_build_info",
            "Always 1; labels: evald version, protobuf decoder (native | upb), normalizer "
            "(compiled | interpreted): the interpreted fallbacks when built without a C compiler",
            ["version", "decoder", "normalizer"],
            registry=r,
        )
        self.build_info.labels(version=installed_version(), **build_labels()).set(1)
        # --- ingestion -------------------------------------------------------
        self.spans_received = Counter(
            "evald_spans_received", "Spans accepted by a receiver", ["transport"], registry=r
        )
        self.spans_refused = Counter(
            "evald_spans_refused",
            "Spans not accepted, by reason (invalid, rejected, overloaded)",
            ["transport", "reason"],
            registry=r,
        )
        self.requests_failed = Counter(
            "evald_receiver_requests_failed",
            "Export requests answered with an error, by status",
            ["transport", "status"],
            registry=r,
        )
        self.spans_late = Counter(
            "evald_spans_late", "Spans that arrived after their trace was evaluated", registry=r
        )
        self.spans_dropped = Counter(
            "evald_spans_dropped",
            "Spans accepted but not assembled, by reason (own_output: evald's own exports)",
            ["transport", "reason"],
            registry=r,
        )
        self.attribute_values_truncated = Counter(
            "evald_attribute_values_truncated",
            "Attribute values cut to receivers.otlp.max_attribute_value_size",
            registry=r,
        )
        # --- assembly ----------------------------------------------------------
        self.traces_in_flight = Gauge(
            "evald_traces_in_flight", "Traces being assembled", registry=r
        )
        self.spans_in_flight = Gauge(
            "evald_spans_in_flight", "Spans held by traces being assembled", registry=r
        )
        self.traces_completed = Counter(
            "evald_traces_completed",
            "Traces released by the assembler, by reason (idle, max_age, evicted, shutdown …)",
            ["reason"],
            registry=r,
        )
        self.traces_evicted = Counter(
            "evald_traces_evicted",
            "Traces released early to stay within memory limits, by limit",
            ["limit"],
            registry=r,
        )
        # --- session assembly (scope: session specs) ------------------------------
        self.sessions_in_flight = Gauge(
            "evald_sessions_in_flight", "Sessions open (turns held, not yet evaluated)", registry=r
        )
        self.session_turns_in_flight = Gauge(
            "evald_session_turns_in_flight", "Turns held by open sessions", registry=r
        )
        self.sessions_completed = Counter(
            "evald_sessions_completed",
            "Sessions released for evaluation, by reason (idle, max_age, max_turns, evicted …)",
            ["reason"],
            registry=r,
        )
        self.sessions_evicted = Counter(
            "evald_sessions_evicted",
            "Sessions released early to stay within memory limits, by limit",
            ["limit"],
            registry=r,
        )
        self.sessions_dropped = Counter(
            "evald_sessions_dropped",
            "Completed sessions not evaluated, by reason (shutdown_timeout)",
            ["reason"],
            registry=r,
        )
        # --- evaluation queue ----------------------------------------------------
        self.queue_depth = Gauge(
            "evald_evaluation_queue_depth", "Completed traces waiting for evaluation", registry=r
        )
        self.traces_dropped = Counter(
            "evald_traces_dropped",
            "Completed traces dropped before evaluation, by reason",
            ["reason"],
            registry=r,
        )
        # --- trajectories ------------------------------------------------------------
        self.traces_evaluated = Counter(
            "evald_traces_evaluated",
            "Traces normalised and evaluated",
            ["service", "agent"],
            registry=r,
        )
        self.traces_failed = Counter(
            "evald_traces_failed",
            "Agent runs that ended in error",
            ["service", "agent"],
            registry=r,
        )
        self.traces_without_tools = Counter(
            "evald_traces_without_tool_calls",
            "Traces in which no tool call was recognised",
            ["service"],
            registry=r,
        )
        self.trace_latency = Histogram(
            "evald_agent_latency_seconds",
            "Agent run latency (root span duration)",
            ["service", "agent"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.steps_per_trace = Histogram(
            "evald_trace_steps", "Steps per trace", ["service", "agent"],
            buckets=COUNT_BUCKETS, registry=r,
        )  # fmt: skip
        self.tool_calls_per_trace = Histogram(
            "evald_trace_tool_calls", "Tool calls per trace", ["service", "agent"],
            buckets=COUNT_BUCKETS, registry=r,
        )  # fmt: skip
        self.tool_calls = Counter(
            "evald_tool_calls", "Tool calls, by tool", ["service", "tool"], registry=r
        )
        self.tool_errors = Counter(
            "evald_tool_errors", "Tool calls that failed, by tool", ["service", "tool"], registry=r
        )
        self.llm_calls = Counter(
            "evald_llm_calls", "LLM inference steps", ["service", "agent"], registry=r
        )
        self.llm_tokens = Counter(
            "evald_llm_tokens", "LLM tokens, by direction", ["service", "agent", "direction"],
            registry=r,
        )  # fmt: skip
        # --- evaluations ---------------------------------------------------------------
        self.evaluations = Counter(
            "evald_evaluations",
            "Evaluator results, by outcome (pass, fail, error, none)",
            ["spec", "evaluator", "service", "agent", "outcome"],
            registry=r,
        )
        self.scores = Histogram(
            "evald_evaluation_score",
            "Evaluator scores",
            ["spec", "evaluator", "service", "agent"],
            buckets=SCORE_BUCKETS,
            registry=r,
        )
        self.evaluation_duration = Histogram(
            "evald_evaluation_duration_seconds",
            "Time spent in one evaluator call",
            ["spec", "evaluator", "service", "agent"],
            buckets=EVAL_DURATION_BUCKETS,
            registry=r,
        )
        self.normalize_errors = Counter(
            "evald_normalize_errors", "Traces whose trajectory could not be built", registry=r
        )
        self.sink_errors = Counter(
            "evald_sink_errors", "Failures writing results to a sink", ["sink"], registry=r
        )
        self.otlp_export_items = Counter(
            "evald_otlp_export_items",
            "Spans / log records given to the OTLP exporter, by outcome (sent, failed, dropped)",
            ["signal", "outcome"],
            registry=r,
        )
        # --- specs / config ------------------------------------------------------------
        self.config_reloads = Counter(
            "evald_config_reloads", "Spec reloads, by result (success, failure)", ["result"],
            registry=r,
        )  # fmt: skip
        self.specs_loaded = Gauge("evald_specs_loaded", "Specs currently active", registry=r)
        self.dataset_unmatched = Counter(
            "evald_dataset_unmatched_traces",
            "Traces a dataset spec matched but none of its items did (not evaluated by it)",
            ["spec"],
            registry=r,
        )
        # --- cardinality guard -----------------------------------------------------------
        self.label_overflow = Counter(
            "evald_label_overflow",
            "Label values replaced by 'other' because the label hit its cap",
            ["label"],
            registry=r,
        )
        self.service_label = LabelGuard("service", label_value_limit, self.label_overflow)
        self.agent_label = LabelGuard("agent", label_value_limit, self.label_overflow)
        self.tool_label = LabelGuard("tool", label_value_limit, self.label_overflow)
