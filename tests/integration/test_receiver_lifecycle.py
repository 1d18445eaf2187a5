"""Lifecycle contract of the network components, and the receivers' building blocks."""

from __future__ import annotations

import contextlib
import gzip
import logging
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

from collector.config.settings import Admin, Listener, OtlpReceivers
from collector.core.clock import ManualClock
from collector.daemon.admin import AdminServer
from collector.decode import AttributeSelector
from collector.receivers.common import ExportError, RateLimitedLog, Refusal
from collector.receivers.grpc import SERVICE, GrpcReceiver
from collector.receivers.http import HttpReceiver, gunzip
from collector.telemetry.registry import Telemetry

if TYPE_CHECKING:
    from support.loop import LoopThread, RecordingConsumer

pytestmark = pytest.mark.timeout(30)

Factory = Callable[[str, "RecordingConsumer", Telemetry], Any]


def grpc_receiver(endpoint: str, consumer: RecordingConsumer, telemetry: Telemetry) -> Any:
    config = OtlpReceivers(grpc=Listener(endpoint=endpoint))
    return GrpcReceiver(config, consumer, AttributeSelector(), telemetry)


def http_receiver(endpoint: str, consumer: RecordingConsumer, telemetry: Telemetry) -> Any:
    config = OtlpReceivers(http=Listener(endpoint=endpoint))
    return HttpReceiver(config, consumer, AttributeSelector(), telemetry)


def admin_server(endpoint: str, consumer: RecordingConsumer, telemetry: Telemetry) -> Any:
    return AdminServer(Admin(endpoint=endpoint), telemetry, lambda: True)


COMPONENTS = pytest.mark.parametrize(
    "factory", [grpc_receiver, http_receiver, admin_server], ids=["grpc", "http", "admin"]
)


def can_connect(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return True
    except ConnectionRefusedError:
        return False


@pytest.mark.integration
@COMPONENTS
def test_shutdown_before_start_twice_and_restart(
    factory: Factory,
    loop_thread: LoopThread,
    consumer: RecordingConsumer,
    telemetry: Telemetry,
) -> None:
    component = factory("127.0.0.1:0", consumer, telemetry)
    loop_thread.run(component.shutdown(1.0))  # before start: nothing to do
    with pytest.raises(RuntimeError, match="not started"):
        _ = component.port

    for _ in range(2):  # start → shutdown → start again
        loop_thread.run(component.start())
        port = component.port
        assert port > 0 and can_connect(port)
        loop_thread.run(component.shutdown(1.0))
        loop_thread.run(component.shutdown(1.0))  # twice is harmless
        assert not can_connect(port)


@pytest.mark.integration
@COMPONENTS
def test_start_twice_is_refused_and_busy_port_is_an_os_error(
    factory: Factory,
    start: Callable[[Any], Any],
    loop_thread: LoopThread,
    consumer: RecordingConsumer,
    telemetry: Telemetry,
) -> None:
    running = start(factory("127.0.0.1:0", consumer, telemetry))
    with pytest.raises(RuntimeError, match="already started"):
        loop_thread.run(running.start())

    clash = factory(f"127.0.0.1:{running.port}", consumer, telemetry)
    with pytest.raises(OSError, match=f"127.0.0.1:{running.port}"):
        loop_thread.run(clash.start())
    loop_thread.run(clash.shutdown(1.0))


def zeros_gzipped(size: int) -> bytes:
    """gzip of ``size`` zero bytes, built without holding ``size`` bytes."""
    deflater = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1024**2)
    parts = [deflater.compress(chunk) for _ in range(size // len(chunk))]
    return b"".join([*parts, deflater.flush()])


@pytest.mark.integration
def test_open_health_watch_streams_do_not_hold_shutdown(
    loop_thread: LoopThread, consumer: RecordingConsumer, telemetry: Telemetry
) -> None:
    # A Watch stream never ends by itself: before, server.stop waited the whole grace.
    receiver = grpc_receiver("127.0.0.1:0", consumer, telemetry)
    loop_thread.run(receiver.start())
    seen: list[Any] = []
    watching = threading.Event()
    with grpc.insecure_channel(f"127.0.0.1:{receiver.port}") as channel:
        stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())

        def read() -> None:
            try:
                for reply in stream:
                    seen.append(reply.status)
                    watching.set()
            except grpc.RpcError as exc:
                seen.append(exc.code())

        reader = threading.Thread(target=read)
        reader.start()
        assert watching.wait(10)
        started = time.monotonic()
        loop_thread.run(receiver.shutdown(20.0))
        took = time.monotonic() - started
        reader.join(10)
    assert took < 5.0
    assert not reader.is_alive()  # the stream ended
    assert seen[0] == health_pb2.HealthCheckResponse.SERVING
    ended = (health_pb2.HealthCheckResponse.NOT_SERVING, grpc.StatusCode.UNAVAILABLE)
    assert seen[-1] in ended


class ThrottledProxy:
    """A loopback TCP proxy that forwards client bytes at ``bytes_per_s``."""

    def __init__(self, target_port: int, bytes_per_s: int) -> None:
        self._target_port = target_port
        self._bytes_per_s = bytes_per_s
        self._forwarded = 0  # client bytes passed on so far
        self._changed = threading.Condition()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def wait_forwarded(self, count: int, timeout: float = 30) -> bool:
        """True once ``count`` client bytes went through, False at ``timeout``."""
        with self._changed:
            return self._changed.wait_for(lambda: self._forwarded >= count, timeout)

    def _pump(self, source: socket.socket, sink: socket.socket, slow: bool) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(4096):
                sink.sendall(data)
                if slow:
                    with self._changed:
                        self._forwarded += len(data)
                        self._changed.notify_all()
                    time.sleep(len(data) / self._bytes_per_s)  # the throttle itself
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self._listener.accept()
                server = socket.create_connection(("127.0.0.1", self._target_port))
                threading.Thread(
                    target=self._pump, args=(client, server, True), daemon=True
                ).start()
                threading.Thread(
                    target=self._pump, args=(server, client, False), daemon=True
                ).start()


@pytest.mark.integration
def test_an_export_still_uploading_at_shutdown_gets_the_grace(
    loop_thread: LoopThread, consumer: RecordingConsumer, telemetry: Telemetry
) -> None:
    # Found by review: a first fix ended the grace once no export *handler* ran, and
    # cut off a request whose body was still arriving (gRPC calls the handler after).
    receiver = grpc_receiver("127.0.0.1:0", consumer, telemetry)
    loop_thread.run(receiver.start())
    proxy = ThrottledProxy(receiver.port, 1_000_000)
    port = proxy.port
    big = KeyValue(key="big", value=AnyValue(string_value="x" * 2_000_000))
    span = PbSpan(trace_id=b"\1" * 16, span_id=b"\2" * 8, name="s", attributes=[big])
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])]
    ).SerializeToString()
    outcome: list[Any] = []

    def export() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_unary(f"/{SERVICE}/Export")
            try:
                call(request, timeout=30)
                outcome.append("OK")
            except grpc.RpcError as exc:
                outcome.append(exc.code())

    sender = threading.Thread(target=export)
    sender.start()
    assert proxy.wait_forwarded(len(request) // 3)  # about a third of the body is through
    loop_thread.run(receiver.shutdown(10.0), timeout=30)
    sender.join(30)
    assert outcome == ["OK"]
    assert len(consumer.spans) == 1


def test_gunzip_bomb_never_allocates_past_the_limit() -> None:
    bomb = zeros_gzipped(256 * 1024**2)  # ~1 MiB that inflates to 256 MiB
    tracemalloc.start()
    try:
        with pytest.raises(ExportError) as info:
            gunzip(bomb, limit=1024**2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.refusal is Refusal.TOO_LARGE
    assert peak < 4 * 1024**2


def test_gunzip_accepts_exactly_the_limit_and_several_members() -> None:
    assert gunzip(gzip.compress(b"a" * 100), limit=100) == b"a" * 100
    assert gunzip(gzip.compress(b"ab") + gzip.compress(b"cd"), limit=4) == b"abcd"
    with pytest.raises(ExportError) as info:
        gunzip(gzip.compress(b"ab") + gzip.compress(b"cde"), limit=4)
    assert info.value.refusal is Refusal.TOO_LARGE


def test_rate_limited_log_reports_what_it_suppressed(caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock()
    log = RateLimitedLog(logging.getLogger("test.ratelimit"), interval=10, clock=clock)
    with caplog.at_level(logging.WARNING, logger="test.ratelimit"):
        assert log.log("400", logging.WARNING, "bad request")
        assert not log.log("400", logging.WARNING, "bad request")
        assert log.log("503", logging.WARNING, "overloaded")  # other keys are independent
        clock.advance(10)
        assert log.log("400", logging.WARNING, "bad request")
    assert [record.getMessage() for record in caplog.records] == [
        "bad request",
        "overloaded",
        "bad request (1 similar since the last report)",
    ]
