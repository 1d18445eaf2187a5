"""The evaluation stage's metrics: its queue, failures, specs in force."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

# Label values known in advance: their series exist at 0 from start, so the first
# drop or failed reload is an increase that rate() and increase() (and the alerts) see.
TRACE_DROP_REASONS = ("shutdown_timeout", "internal_error")
RELOAD_RESULTS = ("success", "failure")


class EvaluationMetrics:
    """Evaluation queue, normalizer and sink failures, spec reloads, dataset misses."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.queue_depth = Gauge(
            "evald_evaluation_queue_depth", "Completed traces waiting for evaluation", registry=r
        )
        self.traces_dropped = Counter(
            "evald_traces_dropped",
            "Completed traces dropped before evaluation, by reason",
            ["reason"],
            registry=r,
        )
        self.normalize_errors = Counter(
            "evald_normalize_errors", "Traces whose trajectory could not be built", registry=r
        )
        self.sink_errors = Counter(
            "evald_sink_errors", "Failures writing results to a sink", ["sink"], registry=r
        )
        self.config_reloads = Counter(
            "evald_config_reloads", "Spec reloads, by result (success, failure)", ["result"],
            registry=r,
        )  # fmt: skip
        self.specs_loaded = Gauge("evald_specs_loaded", "Specs currently active", registry=r)
        for reason in TRACE_DROP_REASONS:
            self.traces_dropped.labels(reason)
        for result in RELOAD_RESULTS:
            self.config_reloads.labels(result)
        self.dataset_unmatched = Counter(
            "evald_dataset_unmatched_traces",
            "Traces a dataset spec matched but none of its items did (not evaluated by it)",
            ["spec"],
            registry=r,
        )
        self.traces_skipped = Counter(
            "evald_traces_skipped",
            "Traces that are no agent run (a setup span, a stray trace), not evaluated, by reason",
            ["reason"],
            registry=r,
        )
