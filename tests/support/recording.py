"""Shared test helpers (moved from conftest.py)."""

from __future__ import annotations

from collections.abc import Sequence

from collector.core.records import Span
from collector.receivers.handoff import ConsumeResult, Overloaded


class RecordingConsumer:
    """A ``SpanConsumer`` that keeps spans, and can refuse or reject on request.

    ``overloaded``: how many next calls raise ``Overloaded``; ``reject_names``: spans
    with these names are rejected (partial success); ``crash``: raise a bug.
    """

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.calls = 0
        self.overloaded = 0
        self.reject_names: frozenset[str] = frozenset()
        self.crash = False

    def consume(self, spans: Sequence[Span]) -> ConsumeResult:
        self.calls += 1
        if self.crash:
            raise RuntimeError("consumer bug")
        if self.overloaded:
            self.overloaded -= 1
            raise Overloaded("evaluation queue full")
        kept = [span for span in spans if span.name not in self.reject_names]
        self.spans.extend(kept)
        rejected = len(spans) - len(kept)
        return ConsumeResult(len(kept), rejected, "trace over its span limit" if rejected else "")
