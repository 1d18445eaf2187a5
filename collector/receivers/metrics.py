"""The ingest stage's metrics: the spans and log records the OTLP receivers accepted,
refused and dropped."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge


class IngestMetrics:
    """``evald_spans_received_total`` and the other receiver series."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
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
        self.spans_dropped = Counter(
            "evald_spans_dropped",
            "Spans accepted but not assembled, by reason (own_output: evald's own exports)",
            ["transport", "reason"],
            registry=r,
        )
        self.log_records_received = Counter(
            "evald_log_records_received",
            "Log records accepted by a receiver",
            ["transport"],
            registry=r,
        )
        self.log_records_refused = Counter(
            "evald_log_records_refused",
            "Log records not accepted, by reason (invalid, rejected, overloaded)",
            ["transport", "reason"],
            registry=r,
        )
        self.log_records_dropped = Counter(
            "evald_log_records_dropped",
            "Log records accepted but not assembled, by reason (no_trace_id, own_output)",
            ["transport", "reason"],
            registry=r,
        )
        self.connections_refused = Counter(
            "evald_connections_refused",
            "HTTP connections answered 503 and closed: over max_connections (server: http, admin)",
            ["server"],
            registry=r,
        )
        self.bytes_in_flight = Gauge(
            "evald_receiver_bytes_in_flight",
            "Bytes of export requests being received or decoded (max_in_flight_bytes)",
            registry=r,
        )
        self.attribute_values_truncated = Counter(
            "evald_attribute_values_truncated",
            "Attribute values cut to receivers.otlp.max_attribute_value_size",
            registry=r,
        )
