"""Shared test helpers (moved from conftest.py)."""

from __future__ import annotations

from collections.abc import Sequence

from collector.core.records import LogRecord, Span
from collector.receivers.handoff import ConsumeResult, Overloaded


class RecordingConsumer:
    """A ``SignalConsumer`` that keeps spans and log records, and can refuse or reject on
    request.

    ``overloaded``: how many next calls raise ``Overloaded``; ``reject_names``: spans
    (log records) with these names (event names) are rejected (partial success);
    ``crash``: raise a bug. ``calls`` counts calls of both kinds.
    """

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.records: list[LogRecord] = []
        self.calls = 0
        self.overloaded = 0
        self.reject_names: frozenset[str] = frozenset()
        self.crash = False

    def consume(self, spans: Sequence[Span]) -> ConsumeResult:
        self._called()
        kept = [span for span in spans if span.name not in self.reject_names]
        self.spans.extend(kept)
        rejected = len(spans) - len(kept)
        return ConsumeResult(len(kept), rejected, "trace over its span limit" if rejected else "")

    def consume_logs(self, records: Sequence[LogRecord]) -> ConsumeResult:
        self._called()
        kept = [record for record in records if record.event_name not in self.reject_names]
        self.records.extend(kept)
        rejected = len(records) - len(kept)
        return ConsumeResult(len(kept), rejected, "trace over its span limit" if rejected else "")

    def _called(self) -> None:
        self.calls += 1
        if self.crash:
            raise RuntimeError("consumer bug")
        if self.overloaded:
            self.overloaded -= 1
            raise Overloaded("evaluation queue full")
