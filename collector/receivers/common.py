"""What both OTLP receivers share: decode once, hand over, count, refuse.

A transport handler reads the payload, calls ``Ingest.export`` and turns the outcome
into its own wire answer: a ``PartialSuccess`` (gRPC OK / HTTP 200) or an
``ExportError`` whose ``Refusal`` picks the status code (see the table in
``collector/receivers/__init__.py``). ``Ingest`` does all the counting so the two
transports count identically.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

from collector.core.clock import Clock, MonotonicClock
from collector.decode import AttributeSelector, DecodedBatch, DecodeError
from collector.receivers.handoff import ConsumeResult, Overloaded, SpanConsumer
from collector.receivers.own_output import without_own_output
from collector.telemetry.registry import Telemetry

Decoder = Callable[[bytes, AttributeSelector], DecodedBatch]

_log = logging.getLogger("collector.receivers")


class Refusal(Enum):
    """Why a whole request was refused; each transport maps it to a status code."""

    INVALID = "invalid"  # undecodable payload or body encoding: never retry
    OVERLOADED = "overloaded"  # the pipeline is full: retry after ``retry_after_s``
    TOO_LARGE = "too_large"  # over max_request_size (after decompression)
    UNSUPPORTED = "unsupported"  # HTTP: unknown Content-Type or Content-Encoding
    NOT_FOUND = "not_found"  # HTTP: a path other than /v1/traces
    METHOD = "method"  # HTTP: not POST
    UNAUTHENTICATED = "unauthenticated"  # no or a wrong bearer token (receivers.otlp.auth)
    TIMEOUT = (
        "timeout"  # HTTP: the body did not arrive within receivers.otlp.connections.read_timeout
    )
    INTERNAL = "internal"  # a bug on our side; logged with its traceback


class ExportError(Exception):
    """The request gets an error answer; nothing of it was kept."""

    def __init__(self, refusal: Refusal, message: str, retry_after_s: float = 0.0) -> None:
        super().__init__(message)
        self.refusal = refusal
        self.message = message
        self.retry_after_s = retry_after_s


class PartialSuccess(NamedTuple):
    """The OK answer: ``rejected == 0`` and no message means full success."""

    rejected: int = 0
    message: str = ""


class RateLimitedLog:
    """Emits at most one record per ``key`` every ``interval`` seconds.

    Bad clients retry; one log line per failed request would flood the log. Records
    dropped in between are counted and reported with the next emitted one.
    """

    def __init__(
        self, logger: logging.Logger, interval: float = 30.0, clock: Clock | None = None
    ) -> None:
        self._logger = logger
        self._interval = interval
        self._clock = clock or MonotonicClock()
        self._next: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def log(
        self, key: str, level: int, message: str, exc_info: BaseException | None = None
    ) -> bool:
        """Log ``message`` unless ``key`` was logged recently; True if it was emitted."""
        now = self._clock.now()
        if now < self._next.get(key, now):
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return False
        self._next[key] = now + self._interval
        suppressed = self._suppressed.pop(key, 0)
        if suppressed:
            message = f"{message} ({suppressed} similar since the last report)"
        self._logger.log(level, "%s", message, exc_info=exc_info)
        return True


class Ingest:
    """Decode a payload once, hand its spans to the consumer, count the outcome.

    Runs on the event loop thread: ``consumer.consume`` is synchronous and quick.
    ``transport`` is the ``transport`` label (``grpc`` / ``http``).
    """

    def __init__(
        self,
        transport: str,
        consumer: SpanConsumer,
        selector: AttributeSelector,
        telemetry: Telemetry,
        retry_after_s: float,
        *,
        log: RateLimitedLog | None = None,
    ) -> None:
        self.transport = transport
        self._consumer = consumer
        self._selector = selector
        self._telemetry = telemetry
        self._retry_after_s = retry_after_s
        self._log = log or RateLimitedLog(_log)
        ingest = telemetry.ingest
        self._received = ingest.spans_received.labels(transport=transport)
        self._invalid = ingest.spans_refused.labels(transport=transport, reason="invalid")
        self._rejected = ingest.spans_refused.labels(transport=transport, reason="rejected")
        self._overloaded = ingest.spans_refused.labels(transport=transport, reason="overloaded")
        self._own_output = ingest.spans_dropped.labels(transport=transport, reason="own_output")

    def export(self, decode: Decoder, payload: bytes) -> PartialSuccess:
        """Decode and consume ``payload``; raise ``ExportError`` if nothing was kept."""
        try:
            batch = decode(payload, self._selector)
        except DecodeError as exc:
            raise ExportError(Refusal.INVALID, str(exc)) from exc
        batch = self._without_own_output(batch)
        result = self._consume(batch)
        self._count(batch, result)
        return PartialSuccess(
            batch.rejected + result.rejected, _join(batch.message, result.message)
        )

    def _without_own_output(self, batch: DecodedBatch) -> DecodedBatch:
        # evald's own exports routed back here: accepted (no retry), counted, not assembled.
        spans, own = without_own_output(batch.spans)
        if not own:
            return batch
        self._own_output.inc(own)
        return batch._replace(spans=spans)

    def _consume(self, batch: DecodedBatch) -> ConsumeResult:
        if not batch.spans:  # an empty request is a success (OTLP spec)
            return ConsumeResult(0)
        try:
            return self._consumer.consume(batch.spans)
        except Overloaded as exc:
            # Invalid spans and truncations are counted when the retry is accepted.
            self._overloaded.inc(len(batch.spans))
            raise ExportError(Refusal.OVERLOADED, str(exc), self._retry_after_s) from exc

    def _count(self, batch: DecodedBatch, result: ConsumeResult) -> None:
        self._received.inc(result.accepted)
        if batch.rejected:
            self._invalid.inc(batch.rejected)
        if result.rejected:
            self._rejected.inc(result.rejected)
        if batch.truncated_values:
            self._telemetry.ingest.attribute_values_truncated.inc(batch.truncated_values)

    def refused(self, status: str, refusal: ExportError) -> None:
        """Count an error answer (``status`` is the transport's code) and maybe log it."""
        self._telemetry.ingest.requests_failed.labels(transport=self.transport, status=status).inc()
        self._log.log(
            f"{status}:{refusal.refusal.value}",
            logging.WARNING,
            f"OTLP/{self.transport} export refused with {status}: {refusal.message}",
        )

    def crashed(self, status: str, exc: BaseException) -> ExportError:
        """Count and log an unexpected exception; the refusal to answer with."""
        self._telemetry.ingest.requests_failed.labels(transport=self.transport, status=status).inc()
        self._log.log(
            f"{status}:{type(exc).__name__}",
            logging.ERROR,
            f"OTLP/{self.transport} export failed unexpectedly: {exc!r}",
            exc_info=exc,
        )
        return ExportError(Refusal.INTERNAL, "internal error; see the evald log")


def _join(first: str, second: str) -> str:
    return "; ".join(part for part in (first, second) if part)
