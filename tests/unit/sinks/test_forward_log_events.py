"""Forwarded spans (``outputs.otlp.forward_spans``) keep their own events, not the events
that arrived as OTLP log records: the sender kept that content off its spans."""

from __future__ import annotations

from support.assembly_kit import record, span

from collector.assembly.log_join import join
from collector.core.records import CompletionReason, LogEvent, SpanEvent, Trace
from collector.sinks.otlp_records import forwarded_spans


def test_events_from_log_records_are_not_forwarded() -> None:
    own = span(1, 1)._replace(events=(SpanEvent("exception", 3, {"exception.type": "E"}),))
    joined = join([own], [record(1, 1, time=5, name="gen_ai.choice", body={"message": "m"})])
    (forwarded_from,) = joined.spans
    assert [type(e) for e in forwarded_from.events] == [SpanEvent, LogEvent]
    trace = Trace(own.trace_id, joined.spans, CompletionReason.IDLE, 0.0, 0.0)

    (forwarded,) = forwarded_spans(trace, own.span_id.hex(), {})

    assert [(e.name, e.timestamp) for e in forwarded.events] == [("exception", 3)]
