"""The bytes of export requests being received or decoded, bounded across both receivers.

Twelve concurrent 60 MiB bodies took the daemon to 848 MB over HTTP and 1.3 GB over
gRPC (issue 14). Each request now reserves its size before its body is read (HTTP:
``Content-Length``, or ``max_request_size`` for a chunked body until its size is
known) or as soon as it is (gRPC, whose core reads the message before the handler
sees it; HTTP/2 flow control bounds what it buffers). Beyond
``receivers.otlp.max_in_flight_bytes`` the request is refused as overloaded: OTLP's
retryable refusal (503 + ``Retry-After`` / ``UNAVAILABLE`` + ``RetryInfo``). A
request no larger than ``max_request_size`` always fits when nothing else is in
flight (the config checks ``max_request_size <= max_in_flight_bytes``).

Used from the event loop thread only: no lock.
"""

from __future__ import annotations

from prometheus_client import Gauge

from collector.config.settings import OtlpReceivers
from collector.telemetry.registry import Telemetry

IN_FLIGHT_FULL = "too many request bytes in flight (receivers.otlp.max_in_flight_bytes)"


def in_flight_budget(config: OtlpReceivers, telemetry: Telemetry) -> InFlightBytes:
    """The budget of ``config.max_in_flight_bytes``, shown in ``telemetry``."""
    return InFlightBytes(config.max_in_flight_bytes, telemetry.ingest.bytes_in_flight)


class InFlightBytes:
    """A budget of ``limit`` bytes; ``gauge`` shows what is reserved."""

    def __init__(self, limit: int, gauge: Gauge | None = None) -> None:
        self.limit = limit
        self.used = 0
        self._gauge = gauge

    def reserve(self, size: int) -> Reservation | None:
        """``size`` bytes, or None if they do not fit now."""
        if self.used + size > self.limit:
            return None
        self._add(size)
        return Reservation(self, size)

    def _add(self, delta: int) -> None:
        self.used += delta
        if self._gauge is not None:
            self._gauge.set(self.used)


class Reservation:
    """Bytes held for one request until ``release`` (safe twice)."""

    def __init__(self, budget: InFlightBytes, size: int) -> None:
        self._budget = budget
        self.size = size

    def shrink(self, size: int) -> None:
        """Hold only ``size`` bytes from now on (the body turned out smaller)."""
        if size < self.size:
            self._budget._add(size - self.size)
            self.size = size

    def release(self) -> None:
        self._budget._add(-self.size)
        self.size = 0
