"""The assembly stage's metrics: traces, log records and sessions held, completed, evicted, late."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

# Label values known in advance: their series exist at 0 from start, so the first
# eviction or drop is an increase that rate() and increase() (and the alerts) see.
TRACE_EVICTION_LIMITS = ("max_traces", "max_spans")
SESSION_EVICTION_LIMITS = ("max_sessions", "max_held_turns")
SESSION_DROP_REASONS = ("shutdown_timeout",)
# A span received again with its trace's and its own id: the same span (an OTLP retry),
# or another span under reused ids (an SDK whose id generator repeats, e.g. a seeded
# ``random``), which is stored once all the same: the second is lost, and counted.
DUPLICATE_KINDS = ("retry", "id_collision")


class AssemblyMetrics:
    """Trace and session assembly series (in-flight gauges, completions, evictions)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.spans_late = Counter(
            "evald_spans_late", "Spans that arrived after their trace was evaluated", registry=r
        )
        self.spans_duplicate = Counter(
            "evald_spans_duplicate",
            "Spans received again with a held span's trace and span id (stored once), by kind:"
            " retry (the same span) or id_collision (another span under the same ids: lost)",
            ["kind"],
            registry=r,
        )
        for kind in DUPLICATE_KINDS:
            self.spans_duplicate.labels(kind=kind)
        self.log_records_late = Counter(
            "evald_log_records_late",
            "Log records that arrived after their trace was evaluated",
            registry=r,
        )
        self.log_records_unjoined = Counter(
            "evald_log_records_unjoined",
            "Log records whose span id named no span of their trace: attached to its root span",
            registry=r,
        )
        self.log_records_orphaned = Counter(
            "evald_log_records_orphaned",
            "Log records of a trace released without any span: nothing to join, not evaluated",
            registry=r,
        )
        self.log_records_in_flight = Gauge(
            "evald_log_records_in_flight", "Log records held by traces being assembled", registry=r
        )
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
        for limit in TRACE_EVICTION_LIMITS:
            self.traces_evicted.labels(limit)
        for limit in SESSION_EVICTION_LIMITS:
            self.sessions_evicted.labels(limit)
        for reason in SESSION_DROP_REASONS:
            self.sessions_dropped.labels(reason)
