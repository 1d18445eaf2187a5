"""What both OTLP receivers share: decode once, hand over, count, refuse.

A transport handler reads the payload, calls ``Ingest.export`` (traces) or
``Ingest.export_logs`` (logs) and turns the outcome into its own wire answer: a
``PartialSuccess`` (gRPC OK / HTTP 200) or an ``ExportError`` whose ``Refusal`` picks
the status code (see the table in ``collector/receivers/__init__.py``). ``Ingest``
does all the counting so the two transports, and the two signals, count identically.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from enum import Enum
from typing import NamedTuple, Protocol, TypeVar

from prometheus_client import Counter

from collector.core.clock import Clock, MonotonicClock
from collector.core.records import LogRecord, Span
from collector.decode import AttributeSelector, DecodedBatch, DecodedLogs, DecodeError
from collector.decode.log_records import NO_TRACE_ID
from collector.receivers.handoff import ConsumeResult, Overloaded, SignalConsumer
from collector.receivers.metrics import IngestMetrics
from collector.receivers.own_output import without_own_output
from collector.telemetry.registry import Telemetry

Decoder = Callable[[bytes, AttributeSelector], DecodedBatch]
LogDecoder = Callable[[bytes, AttributeSelector], DecodedLogs]
_Decoded = TypeVar("_Decoded", DecodedBatch, DecodedLogs)
_Item = TypeVar("_Item", Span, LogRecord)

_log = logging.getLogger("collector.receivers")


class Signal(Enum):
    """The OTLP signals the receivers take (the value is the OTLP/HTTP path's last part)."""

    TRACES = "traces"
    LOGS = "logs"


class Refusal(Enum):
    """Why a whole request was refused; each transport maps it to a status code."""

    INVALID = "invalid"  # undecodable payload or body encoding: never retry
    OVERLOADED = "overloaded"  # the pipeline is full: retry after ``retry_after_s``
    TOO_LARGE = "too_large"  # over max_request_size (after decompression)
    UNSUPPORTED = "unsupported"  # HTTP: unknown Content-Type or Content-Encoding
    NOT_FOUND = "not_found"  # HTTP: a path other than /v1/traces and /v1/logs
    METHOD = "method"  # HTTP: not POST
    UNAUTHENTICATED = "unauthenticated"  # no or a wrong bearer token (receivers.otlp.auth)
    TIMEOUT = (
        "timeout"  # HTTP: the body did not arrive within receivers.otlp.connections.read_timeout
    )
    INTERNAL = "internal"  # a bug on our side; logged with its traceback


class ExportError(Exception):
    """The request gets an error answer; nothing of it was kept."""

    def __init__(self, refusal: Refusal, message: str, retry_after_s: float = 0.0) -> None:
        message = encodable(message)
        super().__init__(message)
        self.refusal = refusal
        self.message = message
        self.retry_after_s = retry_after_s


def without_frames(refusal: ExportError) -> ExportError:
    """The same refusal, with no traceback or chained exception: what a receiver keeps to
    answer with. The caught one's traceback holds the frames it was raised through, the
    request's bytes among them, and the receiver's frame holding it would make a cycle
    that only a cyclic collection frees: rare in the front (ADR 0027)."""
    return ExportError(refusal.refusal, refusal.message, refusal.retry_after_s)


class PartialSuccess(NamedTuple):
    """The OK answer: ``rejected == 0`` and no message means full success."""

    rejected: int = 0
    message: str = ""


class Forward(Protocol):
    """Where a receiver hands a request's payload instead of decoding it here:
    ``evald serve``'s front process, which splits it between its workers (ADR 0018).
    Returns the request's ``PartialSuccess`` or raises ``ExportError``."""

    async def __call__(
        self, signal: Signal, as_json: bool, transport: str, payload: bytes
    ) -> PartialSuccess: ...


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


class _Counters:
    """One signal's series for one transport (``labels()`` is resolved once)."""

    __slots__ = ("invalid", "overloaded", "own_output", "received", "rejected")

    def __init__(
        self, received: Counter, refused: Counter, dropped: Counter, transport: str
    ) -> None:
        self.received = received.labels(transport=transport)
        self.invalid = refused.labels(transport=transport, reason="invalid")
        self.rejected = refused.labels(transport=transport, reason="rejected")
        self.overloaded = refused.labels(transport=transport, reason="overloaded")
        self.own_output = dropped.labels(transport=transport, reason="own_output")

    @classmethod
    def spans(cls, ingest: IngestMetrics, transport: str) -> _Counters:
        return cls(ingest.spans_received, ingest.spans_refused, ingest.spans_dropped, transport)

    @classmethod
    def logs(cls, ingest: IngestMetrics, transport: str) -> _Counters:
        return cls(
            ingest.log_records_received,
            ingest.log_records_refused,
            ingest.log_records_dropped,
            transport,
        )


class Ingest:
    """Decode a payload once, hand its spans or log records to the consumer, count the
    outcome.

    Runs on the event loop thread: the consumer is synchronous and quick.
    ``transport`` is the ``transport`` label (``grpc`` / ``http``). Log records
    without a trace id are accepted but cannot join a trace: they are dropped and
    counted (``evald_log_records_dropped_total{reason="no_trace_id"}``), not reported
    to the sender, whose logs may well include ordinary application logs.
    """

    def __init__(
        self,
        transport: str,
        consumer: SignalConsumer,
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
        self._spans = _Counters.spans(ingest, transport)
        self._logs = _Counters.logs(ingest, transport)
        self._no_trace_id = ingest.log_records_dropped.labels(
            transport=transport, reason=NO_TRACE_ID
        )

    def export(self, decode: Decoder, payload: bytes) -> PartialSuccess:
        """Decode and consume a traces ``payload``; ``ExportError`` if nothing was kept."""
        batch = self._decode(decode, payload)
        spans = self._without_own_output(batch.spans, self._spans)
        result = self._consume(self._consumer.consume, spans, self._spans)
        self._count(self._spans, result, batch.rejected, batch.truncated_values)
        return PartialSuccess(
            batch.rejected + result.rejected, _join(batch.message, result.message)
        )

    def export_logs(self, decode: LogDecoder, payload: bytes) -> PartialSuccess:
        """Decode and consume a logs ``payload``; ``ExportError`` if nothing was kept."""
        logs = self._decode(decode, payload)
        records = self._without_own_output(logs.records, self._logs)
        result = self._consume(self._consumer.consume_logs, records, self._logs)
        self._count(self._logs, result, logs.rejected, logs.truncated_values)
        if logs.no_trace_id:
            self._no_trace_id.inc(logs.no_trace_id)
        return PartialSuccess(logs.rejected + result.rejected, _join(logs.message, result.message))

    def _decode(
        self, decode: Callable[[bytes, AttributeSelector], _Decoded], payload: bytes
    ) -> _Decoded:
        try:
            return decode(payload, self._selector)
        except DecodeError as exc:
            raise ExportError(Refusal.INVALID, str(exc)) from exc

    @staticmethod
    def _without_own_output(items: list[_Item], counters: _Counters) -> list[_Item]:
        # evald's own exports routed back here: accepted (no retry), counted, not assembled.
        kept, own = without_own_output(items)
        if own:
            counters.own_output.inc(own)
        return kept

    def _consume(
        self,
        consume: Callable[[Sequence[_Item]], ConsumeResult],
        items: list[_Item],
        counters: _Counters,
    ) -> ConsumeResult:
        if not items:  # an empty request is a success (OTLP spec)
            return ConsumeResult(0)
        try:
            return consume(items)
        except Overloaded as exc:
            # Invalid items and truncations are counted when the retry is accepted.
            counters.overloaded.inc(len(items))
            raise ExportError(Refusal.OVERLOADED, str(exc), self._retry_after_s) from exc

    def _count(
        self, counters: _Counters, result: ConsumeResult, invalid: int, truncated: int
    ) -> None:
        counters.received.inc(result.accepted)
        if invalid:
            counters.invalid.inc(invalid)
        if result.rejected:
            counters.rejected.inc(result.rejected)
        if truncated:
            self._telemetry.ingest.attribute_values_truncated.inc(truncated)

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


def encodable(message: str) -> str:
    """``message`` with what UTF-8 cannot encode (lone surrogates) as ``\\udXXX`` escapes.

    Error messages name the offending field or value, so they can echo a client's lone
    surrogate; an answer carrying it would fail to encode and turn a 400 into a 500.
    """
    if message.isascii():
        return message
    return message.encode("utf-8", "backslashreplace").decode("utf-8")


def _join(first: str, second: str) -> str:
    return encodable("; ".join(part for part in (first, second) if part))
