"""Connections on the HTTP ports and the gRPC port cannot be held open at will
(issue 14, defect 4): slow or silent clients are closed, the number of open HTTP
connections is capped, and what is over the cap gets a retryable 503."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import pytest

from collector.config.settings import Admin, Listener, OtlpReceivers
from collector.daemon.admin import AdminServer
from collector.decode import AttributeSelector
from collector.receivers.grpc import GrpcReceiver
from collector.receivers.http import HttpReceiver, connection_limit
from collector.telemetry.registry import Telemetry

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

LOOPBACK = "127.0.0.1:0"
QUICK = {"idle_timeout": 0.3, "read_timeout": 0.3}


def receivers_config(**connections: Any) -> OtlpReceivers:
    return OtlpReceivers(
        grpc=Listener(endpoint=LOOPBACK),
        http=Listener(endpoint=LOOPBACK),
        connections=connections,  # type: ignore[arg-type]
    )


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (the socket's timeout bounds it)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def keep_alive_request(sock: socket.socket) -> bytes:
    """One complete request on a kept-alive connection; the start of its answer."""
    sock.sendall(b"GET /v1/traces HTTP/1.1\r\nHost: x\r\n\r\n")
    return sock.recv(65536)


@pytest.fixture
def http_for(
    start: Callable[[Any], Any], consumer: Any, telemetry: Telemetry
) -> Callable[..., HttpReceiver]:
    def _make(**connections: Any) -> HttpReceiver:
        receiver = HttpReceiver(
            receivers_config(**connections), consumer, AttributeSelector(), telemetry
        )
        return start(receiver)  # type: ignore[no-any-return]

    return _make


def test_a_connection_without_a_complete_header_is_closed(
    http_for: Callable[..., HttpReceiver],
) -> None:
    receiver = http_for(**QUICK)
    with connect(receiver.port) as half_open, connect(receiver.port) as slow_header:
        slow_header.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")  # and no more
        started = time.monotonic()
        assert read_all(half_open) == b""
        assert read_all(slow_header) == b""
        assert time.monotonic() - started < 5


def test_a_body_that_does_not_arrive_in_time_is_408(
    http_for: Callable[..., HttpReceiver], metric: Callable[..., float]
) -> None:
    receiver = http_for(**QUICK)
    with connect(receiver.port) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: 1000\r\n\r\nonly a little"
        )
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"Connection: close" in answer
    assert metric("evald_receiver_requests_failed_total", transport="http", status="408") == 1


def test_connections_over_the_limit_get_503_and_are_counted(
    http_for: Callable[..., HttpReceiver], metric: Callable[..., float]
) -> None:
    receiver = http_for(max_connections=3)
    held = [connect(receiver.port) for _ in range(3)]
    try:
        for sock in held:  # answered, so the server holds all three
            assert keep_alive_request(sock).startswith(b"HTTP/1.1 405 ")
        with connect(receiver.port) as extra:
            answer = read_all(extra)
        assert answer.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 1" in answer
        assert metric("evald_connections_refused_total", server="http") == 1
    finally:
        for sock in held:
            sock.close()
    assert _eventually_answered(receiver.port)  # room again once they are closed


def _eventually_answered(port: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with connect(port) as sock:
            if keep_alive_request(sock).startswith(b"HTTP/1.1 405 "):
                return True
    return False


def test_the_admin_endpoint_has_its_own_limits(
    start: Callable[[Any], Any], telemetry: Telemetry, metric: Callable[..., float]
) -> None:
    config = Admin(endpoint=LOOPBACK, max_connections=1, idle_timeout=0.3)
    admin = start(AdminServer(config, telemetry, lambda: True))
    with connect(admin.port) as first:
        first.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert first.recv(65536).startswith(b"HTTP/1.1 200 ")
        with connect(admin.port) as second:
            assert read_all(second).startswith(b"HTTP/1.1 503 ")
        assert read_all(first) == b""  # then closed once idle
    assert metric("evald_connections_refused_total", server="admin") == 1


def test_a_silent_grpc_connection_is_closed(
    start: Callable[[Any], Any], consumer: Any, telemetry: Telemetry
) -> None:
    receiver = start(
        GrpcReceiver(receivers_config(**QUICK), consumer, AttributeSelector(), telemetry)
    )
    with connect(receiver.port) as silent:
        started = time.monotonic()
        read_all(silent)  # no HTTP/2 preface: at most a GOAWAY, then closed
        assert time.monotonic() - started < 5


def test_grpc_connections_have_keepalive_idle_and_age_limits(consumer: Any) -> None:
    config = receivers_config(idle_timeout=120, max_age=600, keepalive=30)
    options = dict(GrpcReceiver(config, consumer, AttributeSelector(), Telemetry())._options())
    assert options["grpc.max_connection_idle_ms"] == 120_000
    assert options["grpc.max_connection_age_ms"] == 600_000
    assert options["grpc.keepalive_time_ms"] == 30_000
    assert options["grpc.keepalive_timeout_ms"] > 0
    assert options["grpc.max_connection_age_grace_ms"] > 0
    assert options["grpc.server_handshake_timeout_ms"] <= 120_000


def test_the_default_connection_limit_leaves_descriptors_for_the_rest() -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert connection_limit(50) == 50
    assert 1 <= connection_limit(None) <= max(1, soft // 4)
