"""The worker processes' own metrics (``pipeline.workers > 1``, ADR 0018): kept by the
front, except ``turns_lost`` (by the worker that could not take a routed turn)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge


class WorkerMetrics:
    """Restarts, and what a dead worker held (counted lost, never silently)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.workers = Gauge(
            "evald_workers", "Worker processes configured (pipeline.workers)", registry=r
        )
        self.restarts = Counter(
            "evald_worker_restarts",
            "Worker processes that exited unexpectedly and were started again, by worker",
            ["worker"],
            registry=r,
        )
        self.traces_lost = Counter(
            "evald_worker_traces_lost",
            "Traces a worker held (assembling or queued) when it died: never evaluated",
            registry=r,
        )
        self.spans_lost = Counter(
            "evald_worker_spans_lost",
            "Spans and log records held by traces of a worker when it died",
            registry=r,
        )
        self.turns_lost = Counter(
            "evald_worker_turns_lost",
            "Session turns routed to the worker of their session that it could not take "
            "(evaluation queue full, or stopping)",
            registry=r,
        )
