"""A tool span's result recorded as the lone text of its own events.

An instrumentation that records a call's output as a span event (Claude Code's
``tool.output {output}``) names the event and its attribute as it likes; what holds
whatever the names are: the span's own events carry one text value in all. Log
records joined to the span are not its own events (an application's log line inside a
tool is no result), nor are ``exception`` events (the OTel name for a failure). With
two texts or more nothing is read: which one is the result would be a guess.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from collector.core.records import LogEvent, Span
from collector.normalize.errors import EXCEPTION_EVENT


def lone_text(span: Span) -> str | None:
    """The lone non-empty text value of the span's own events, else ``None``."""
    found: str | None = None
    for event in span.events:
        if isinstance(event, LogEvent) or event.name == EXCEPTION_EVENT:
            continue
        for value in event.attributes.values():
            if isinstance(value, str) and value:
                if found is not None:
                    return None
                found = value
    return found


def log_records(spans: Sequence[Span]) -> Iterator[LogEvent]:
    """The log records joined to ``spans`` (``collector.assembly.log_join``), in order."""
    for span in spans:
        for event in span.events:
            if isinstance(event, LogEvent):
                yield event
