"""Shared test helpers (moved from test_assembly.py): spans, log records and a
``TraceAssembler`` on a ManualClock whose released traces land in a list."""

from __future__ import annotations

from typing import Any

from collector.assembly.traces import TraceAssembler
from collector.config.settings import Assembly
from collector.core.clock import ManualClock
from collector.core.records import (
    EMPTY_ATTRIBUTES,
    AttrValue,
    CompletionReason,
    LogRecord,
    Resource,
    Span,
    Trace,
)
from collector.receivers.handoff import ConsumeResult
from collector.telemetry.registry import Telemetry

RESOURCE = Resource("svc", EMPTY_ATTRIBUTES)
IDLE = 5.0
MAX_AGE = 60.0


def span(trace: int, span_id: int, parent: int | None = None, start: int = 0) -> Span:
    """A span of trace ``trace``; a root when ``parent`` is None."""
    return Span(
        trace_id=trace.to_bytes(16, "big"),
        span_id=span_id.to_bytes(8, "big"),
        parent_span_id=b"" if parent is None else parent.to_bytes(8, "big"),
        name=f"span-{span_id}",
        kind=1,
        start_unix_nano=start,
        end_unix_nano=start + 1,
        status_code=0,
        status_message="",
        attributes=EMPTY_ATTRIBUTES,
        events=(),
        resource=RESOURCE,
        scope_name="test",
    )


def tid(trace: int) -> bytes:
    return trace.to_bytes(16, "big")


class Harness:
    """An assembler on a ManualClock whose released traces land in ``done``."""

    def __init__(self, **config: Any) -> None:
        settings = {"idle_timeout": IDLE, "max_trace_age": MAX_AGE, **config}
        self.clock = ManualClock()
        self.telemetry = Telemetry()
        self.done: list[Trace] = []
        self.full = False  # the offer has no room
        self.assembler = TraceAssembler(Assembly(**settings), self.clock, self.telemetry)

    def offer(self, trace: Trace) -> bool:
        if self.full:
            return False
        self.done.append(trace)
        return True

    def add(self, *spans: Span) -> ConsumeResult | None:
        return self.assembler.add(spans, self.offer)

    def add_logs(self, *records: LogRecord) -> ConsumeResult | None:
        return self.assembler.add_logs(records, self.offer)

    def flush(self, reason: CompletionReason = CompletionReason.SHUTDOWN) -> None:
        self.assembler.flush(reason, self.offer)

    def tick(self) -> None:
        self.assembler.tick(self.offer)

    def at(self, now: float) -> None:
        """Move the clock to ``now`` and tick."""
        self.clock.set(now)
        self.tick()

    def metric(self, name: str, **labels: str) -> float:
        value = self.telemetry.registry.get_sample_value(name, labels)
        return 0.0 if value is None else value

    def released(self) -> list[tuple[int, CompletionReason]]:
        return [(int.from_bytes(t.trace_id, "big"), t.completed_by) for t in self.done]


def record(
    trace: int,
    span_id: int | None,
    time: int = 0,
    name: str = "gen_ai.choice",
    body: AttrValue = None,
    **attributes: AttrValue,
) -> LogRecord:
    """A log record of trace ``trace`` naming span ``span_id`` (None: no span)."""
    return LogRecord(
        trace_id=trace.to_bytes(16, "big"),
        span_id=b"" if span_id is None else span_id.to_bytes(8, "big"),
        event_name=name,
        time_unix_nano=time,
        attributes=attributes,
        body=body,
        resource=RESOURCE,
        scope_name="test",
    )


def events_of(trace: Trace) -> dict[int, list[tuple[str, int]]]:
    """``{span id: [(event name, time), …]}`` for the spans that have events."""
    return {
        int.from_bytes(s.span_id, "big"): [(e.name, e.time_unix_nano) for e in s.events]
        for s in trace.spans
        if s.events
    }
