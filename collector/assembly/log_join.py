"""A released trace's log records become events of its spans (docs/adr/0014-otlp-logs.md).

The GenAI semantic conventions moved message content from span events to log
events under the same names (``gen_ai.client.inference.operation.details``,
``gen_ai.user.message`` …). Turning each record into a ``SpanEvent`` of the span it
names lets the normalizer read both the same way, and keeps log records out of every
stage after assembly.

The join happens once, when the trace is released, so the order in which spans and
records arrived does not matter. A record is appended to its span's events in time
order (records of equal time keep their arrival order), as a ``LogEvent``: a
``SpanEvent`` that remembers its origin. A record whose span id names
no span of the trace (or none at all) goes to the trace's root span, the earliest
root if there are several, else to the earliest span; it is counted as unjoined.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from collector.core.records import Attributes, LogEvent, LogRecord, Span

BODY_KEY = "body"


class Joined(NamedTuple):
    """The trace's spans with the records appended to their events."""

    spans: tuple[Span, ...]
    unjoined: int  # records attached to the root (or earliest) span instead of their own


def join(spans: Sequence[Span], records: Sequence[LogRecord]) -> Joined:
    """``spans`` (same order) with ``records`` as events; ``spans`` must not be empty."""
    if not records:
        return Joined(tuple(spans), 0)
    position = {span.span_id: i for i, span in enumerate(spans)}
    fallback = _fallback(spans)
    by_span: dict[int, list[LogRecord]] = {}
    unjoined = 0
    for record in records:
        i = position.get(record.span_id) if record.span_id else None
        if i is None:
            i = fallback
            unjoined += 1
        by_span.setdefault(i, []).append(record)
    joined = list(spans)
    for i, own in by_span.items():
        own.sort(key=_time)  # stable
        span = joined[i]
        joined[i] = span._replace(events=span.events + tuple(map(as_event, own)))
    return Joined(tuple(joined), unjoined)


def as_event(record: LogRecord) -> LogEvent:
    """The span event a record reads as: its attributes plus its body.

    A kvlist body's keys join the attributes (the older GenAI events put the content
    there: ``{content}``, ``{message, finish_reason}``); an attribute wins a clash,
    being the record's own metadata. Any other non-empty body is kept under ``body``.
    """
    body = record.body
    attributes: Attributes
    if isinstance(body, dict):
        attributes = {**body, **record.attributes} if body else record.attributes
    elif body is None:
        attributes = record.attributes
    else:
        attributes = {BODY_KEY: body, **record.attributes}
    return LogEvent(record.event_name, record.time_unix_nano, attributes)


def _time(record: LogRecord) -> int:
    return record.time_unix_nano


def _fallback(spans: Sequence[Span]) -> int:
    """Where unjoined records go: the earliest root span, else the earliest span."""
    roots = [i for i, span in enumerate(spans) if span.is_root]
    candidates = roots or range(len(spans))
    return min(candidates, key=lambda i: spans[i].start_unix_nano)
