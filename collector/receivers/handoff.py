"""The hand-off between receivers and the pipeline (the Collector's ``ConsumeTraces`` /
``ConsumeLogs``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from collector.core.records import LogRecord, Span


class Overloaded(Exception):
    """Retryable refusal: the pipeline is full; the sender should retry later.

    Receivers answer gRPC ``UNAVAILABLE`` / HTTP 503 with ``Retry-After``.
    No span or record of the refused request was kept.
    """

    def __init__(self, message: str, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ConsumeResult(NamedTuple):
    """How many spans (or log records) were kept and, for the rest, why not (partial success)."""

    accepted: int
    rejected: int = 0
    message: str = ""


class SpanConsumer(Protocol):
    """Takes decoded spans from a receiver."""

    def consume(self, spans: Sequence[Span]) -> ConsumeResult:
        """Accept ``spans`` synchronously and quickly (no I/O, no evaluation).

        Returns how many were accepted; spans refused individually (e.g. a trace over
        its span limit) are reported as ``rejected`` with a message. Raises
        ``Overloaded`` when nothing can be accepted now; then nothing was kept.
        """
        ...


class LogConsumer(Protocol):
    """Takes decoded log records (each with a trace id) from a receiver."""

    def consume_logs(self, records: Sequence[LogRecord]) -> ConsumeResult:
        """Accept ``records`` as ``SpanConsumer.consume`` accepts spans: synchronously,
        with the same partial success, and ``Overloaded`` when nothing can be kept now."""
        ...


class SignalConsumer(SpanConsumer, LogConsumer, Protocol):
    """What the OTLP receivers hand over to: both signals (``Pipeline`` in the daemon)."""
