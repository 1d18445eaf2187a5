"""evald's way out over OTLP: the SDK's batch processors, with every item counted.

One ``Channel`` per signal (spans, log records)::

    submit ─► budget (bounded) ─► SDK Batch*Processor (own worker thread, batches)
           ─► counting exporter ─► OTLP exporter (gRPC or HTTP; retries inside ``timeout``)

The SDK's batch processors drop silently when their queue is full. The budget
refuses an item before that can happen, so each item ends counted exactly once in
``evald_otlp_export_items_total{signal, outcome}``: ``sent``, ``failed`` (the
exporter gave up) or ``dropped`` (no room, or still queued when shutdown's deadline
passed). ``submit`` never blocks: a dead backend costs at most ``max_queue_size``
queued items per signal, never ingestion.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

import grpc
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans
from opentelemetry.sdk._logs import ReadableLogRecord, ReadWriteLogRecord
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    LogRecordExporter,
    LogRecordExportResult,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from collector.config.settings import OtlpOutput
from collector.telemetry.registry import Telemetry

# The part of a close's budget kept for stopping the SDK's batch processor after the
# flush (a gRPC export returns at once once its exporter is closed; an HTTP request in
# flight does not, and is left to finish on its daemon thread).
_STOP_GRACE_S = 1.0

ItemT = TypeVar("ItemT")


class Budget:
    """Items handed to a batch processor and not yet taken by its exporter. Thread-safe."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._pending = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Reserve room for one item; False when the processor's queue could be full."""
        with self._lock:
            if self._pending >= self._capacity:
                return False
            self._pending += 1
            return True

    def release(self, count: int) -> int:
        """``count`` items left the queue (the exporter got them); returns how many of
        them were still reserved (fewer once ``drain`` counted the rest)."""
        with self._lock:
            released = min(count, self._pending)
            self._pending -= released
            return released

    def drain(self) -> int:
        """Forget what is still reserved and return how much that was."""
        with self._lock:
            pending, self._pending = self._pending, 0
            return pending


class Counts:
    """The ``evald_otlp_export_items_total`` series of one signal."""

    def __init__(self, telemetry: Telemetry, signal: str) -> None:
        items = telemetry.results.otlp_export_items
        self.sent = items.labels(signal, "sent")
        self.failed = items.labels(signal, "failed")
        self.dropped = items.labels(signal, "dropped")


class Accounting:
    """What both counting exporters share: release the budget, count, stop on close.

    Once closed, batches are not sent any more but counted as dropped: shutdown
    must not wait for retries against a dead backend.
    """

    def __init__(self, budget: Budget, counts: Counts, shutdown: Callable[[], None]) -> None:
        self._budget = budget
        self._counts = counts
        self._shutdown = shutdown
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._in_flight: dict[int, int] = {}  # export call -> items, while it sends
        self._calls = 0

    def export(self, count: int, send: Callable[[], bool]) -> bool:
        released = self._budget.release(count)
        if self._closed.is_set():
            # Only what drain() has not counted yet: an HTTP export that outlived
            # close() lets the SDK go on through its queue afterwards.
            self._counts.dropped.inc(released)
            return False
        with self._lock:
            self._calls += 1
            call = self._calls
            self._in_flight[call] = count
        sent = False
        try:
            sent = send()
        finally:  # an exporter that raises (instead of returning FAILURE) failed too
            with self._lock:
                counted_at_close = self._in_flight.pop(call, None) is None
            if not counted_at_close:  # else abandoned at close: counted as dropped
                (self._counts.sent if sent else self._counts.failed).inc(count)
        return sent

    def close(self) -> None:
        """Stop sending; interrupts the inner exporter's retries. Idempotent."""
        if not self._closed.is_set():
            self._closed.set()
            self._shutdown()

    def abandon_in_flight(self) -> None:
        """Count exports still sending (an HTTP request outliving close) as dropped,
        now, and never again when they return: a process about to exit reports them."""
        with self._lock:
            abandoned = sum(self._in_flight.values())
            self._in_flight.clear()
        self._counts.dropped.inc(abandoned)


class CountingSpanExporter(SpanExporter):
    def __init__(self, inner: SpanExporter, accounting: Accounting) -> None:
        self._inner, self._accounting = inner, accounting

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        sent = self._accounting.export(
            len(spans), lambda: self._inner.export(spans) is SpanExportResult.SUCCESS
        )
        return SpanExportResult.SUCCESS if sent else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._accounting.close()


class CountingLogExporter(LogRecordExporter):
    def __init__(self, inner: LogRecordExporter, accounting: Accounting) -> None:
        self._inner, self._accounting = inner, accounting

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        sent = self._accounting.export(
            len(batch), lambda: self._inner.export(batch) is LogRecordExportResult.SUCCESS
        )
        return LogRecordExportResult.SUCCESS if sent else LogRecordExportResult.FAILURE

    def shutdown(self) -> None:
        self._accounting.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # nothing buffered here


class _Processor(Protocol):
    def force_flush(self, timeout_millis: int = ...) -> bool: ...
    def shutdown(self) -> None: ...


class Channel(Generic[ItemT]):
    """One signal's bounded, non-blocking way out. ``submit`` from any thread."""

    def __init__(
        self,
        processor: _Processor,
        emit: Callable[[ItemT], None],
        accounting: Accounting,
        budget: Budget,
        counts: Counts,
    ) -> None:
        self._processor, self._emit = processor, emit
        self._accounting, self._budget, self._counts = accounting, budget, counts
        self._closed = False

    def submit(self, item: ItemT) -> None:
        """Queue ``item`` for export, or count it as dropped if there is no room."""
        if self._closed or not self._budget.take():
            self._counts.dropped.inc()
            return
        self._emit(item)

    def close_by(self, deadline: float) -> None:
        """Export what is queued until ``deadline`` (``time.monotonic``) less the time
        kept for stopping, then stop; what is left is counted as dropped, each item
        once. Returns by ``deadline``. Safe to call twice.

        The SDK's ``force_flush`` and ``shutdown`` ignore timeouts, so both run in a
        helper thread that closing the exporter releases.
        """
        if self._closed:
            return
        self._closed = True
        flusher = threading.Thread(
            target=self._processor.force_flush, name="evald-otlp-flush", daemon=True
        )
        flusher.start()
        flusher.join(max(0.0, deadline - _STOP_GRACE_S - time.monotonic()))
        self._accounting.close()  # anything not sent by now is counted as dropped
        stopper = threading.Thread(
            target=self._processor.shutdown, name="evald-otlp-stop", daemon=True
        )
        stopper.start()
        stopper.join(max(0.0, deadline - time.monotonic()))
        self._counts.dropped.inc(self._budget.drain())
        self._accounting.abandon_in_flight()


def span_channel(config: OtlpOutput, telemetry: Telemetry) -> Channel[ReadableSpan]:
    """The channel for evaluation and forwarded spans."""
    budget, counts = Budget(config.max_queue_size), Counts(telemetry, "spans")
    inner = _span_exporter(config)
    accounting = Accounting(budget, counts, inner.shutdown)
    processor = BatchSpanProcessor(
        CountingSpanExporter(inner, accounting),
        max_queue_size=config.max_queue_size,
        max_export_batch_size=config.max_export_batch_size,
        schedule_delay_millis=config.schedule_delay * 1000,
    )
    return Channel(processor, processor.on_end, accounting, budget, counts)


def log_channel(config: OtlpOutput, telemetry: Telemetry) -> Channel[ReadWriteLogRecord]:
    """The channel for ``gen_ai.evaluation.result`` log records."""
    budget, counts = Budget(config.max_queue_size), Counts(telemetry, "logs")
    inner = _log_exporter(config)
    accounting = Accounting(budget, counts, inner.shutdown)
    processor = BatchLogRecordProcessor(
        CountingLogExporter(inner, accounting),
        max_queue_size=config.max_queue_size,
        max_export_batch_size=config.max_export_batch_size,
        schedule_delay_millis=config.schedule_delay * 1000,
    )
    return Channel(processor, processor.on_emit, accounting, budget, counts)


def _span_exporter(config: OtlpOutput) -> SpanExporter:
    endpoint = _endpoint(config)
    if config.protocol == "grpc":
        return GrpcSpans(endpoint, headers=config.headers, timeout=config.timeout,
                         compression=_grpc_compression(config))  # fmt: skip
    return HttpSpans(f"{endpoint}/v1/traces", headers=config.headers, timeout=config.timeout,
                     compression=_http_compression(config))  # fmt: skip


def _log_exporter(config: OtlpOutput) -> LogRecordExporter:
    endpoint = _endpoint(config)
    if config.protocol == "grpc":
        return GrpcLogs(endpoint, headers=config.headers, timeout=config.timeout,
                        compression=_grpc_compression(config))  # fmt: skip
    return HttpLogs(f"{endpoint}/v1/logs", headers=config.headers, timeout=config.timeout,
                    compression=_http_compression(config))  # fmt: skip


def _endpoint(config: OtlpOutput) -> str:
    if config.endpoint is None:
        raise ValueError("outputs.otlp.endpoint is not set")
    return config.endpoint.rstrip("/")


def _grpc_compression(config: OtlpOutput) -> grpc.Compression:
    return grpc.Compression.Gzip if config.compression == "gzip" else grpc.Compression.NoCompression


def _http_compression(config: OtlpOutput) -> HttpCompression:
    return HttpCompression.Gzip if config.compression == "gzip" else HttpCompression.NoCompression
