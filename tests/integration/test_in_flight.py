"""Request bytes in flight are bounded across both receivers, and a refused request is
never read (issue 14, defect 5)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from pydantic import SecretStr
from support.agent_runs import pb_span, request

from collector.config.settings import Config, ConfigError, Listener, OtlpReceivers, load_config
from collector.decode import AttributeSelector
from collector.receivers.grpc import GrpcReceiver
from collector.receivers.http import HttpReceiver
from collector.receivers.inflight import in_flight_budget
from collector.receivers.security import ReceiverSecurity
from collector.telemetry.registry import Telemetry

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
HELD = 500_000  # bytes each held request announces


def config(**overrides: Any) -> OtlpReceivers:
    return OtlpReceivers(
        grpc=Listener(endpoint="127.0.0.1:0"),
        http=Listener(endpoint="127.0.0.1:0"),
        **{"max_in_flight_bytes": "1MiB", "max_request_size": "512KiB"} | overrides,
    )


@pytest.fixture
def receivers(
    start: Callable[[Any], Any], consumer: Any, telemetry: Telemetry
) -> tuple[GrpcReceiver, HttpReceiver]:
    otlp = config()
    shared = in_flight_budget(otlp, telemetry)
    args = (otlp, consumer, AttributeSelector(), telemetry)
    grpc_receiver = start(GrpcReceiver(*args, in_flight=shared))
    http_receiver = start(HttpReceiver(*args, in_flight=shared))
    return grpc_receiver, http_receiver


def hold_body(port: int, announced: int = HELD) -> socket.socket:
    """A POST whose headers announce ``announced`` bytes, of which a few are sent."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        b"Content-Length: %d\r\n\r\nsome" % announced
    )
    return sock


def post(port: int, body: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def wait_for(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def a_body(size: int) -> bytes:
    span = pb_span()
    span.attributes.add(key="pad").value.string_value = "x" * size
    return bytes(request(span).SerializeToString())


def test_bodies_beyond_the_budget_get_the_retryable_refusal_before_being_read(
    receivers: tuple[GrpcReceiver, HttpReceiver], metric: Callable[..., float]
) -> None:
    _, http_receiver = receivers
    held = [hold_body(http_receiver.port), hold_body(http_receiver.port)]
    try:
        assert wait_for(lambda: metric("evald_receiver_bytes_in_flight") == 2 * HELD)
        answer = post(http_receiver.port, a_body(100_000))
        assert answer.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 1" in answer
        status = status_pb2.Status.FromString(answer.split(b"\r\n\r\n", 1)[1])
        assert "max_in_flight_bytes" in status.message
        # An empty body reserves nothing: it is answered even with the budget full.
        assert post(http_receiver.port, b"").startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in held:
            sock.close()
    assert wait_for(lambda: metric("evald_receiver_bytes_in_flight") == 0)
    assert post(http_receiver.port, a_body(100_000)).startswith(b"HTTP/1.1 200 ")


def test_grpc_shares_the_budget_and_refuses_with_retry_info(
    receivers: tuple[GrpcReceiver, HttpReceiver], metric: Callable[..., float]
) -> None:
    grpc_receiver, http_receiver = receivers
    held = [hold_body(http_receiver.port, 450_000) for _ in range(2)]
    try:
        assert wait_for(lambda: metric("evald_receiver_bytes_in_flight") == 900_000)
        with grpc.insecure_channel(f"127.0.0.1:{grpc_receiver.port}") as channel:
            export = channel.unary_unary(EXPORT)
            with pytest.raises(grpc.RpcError) as refused:
                export(a_body(200_000), timeout=10)
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        trailers = dict(refused.value.trailing_metadata() or ())
        assert "google.rpc.retryinfo-bin" in trailers
        assert (
            metric("evald_receiver_requests_failed_total", transport="grpc", status="UNAVAILABLE")
            == 1
        )
    finally:
        for sock in held:
            sock.close()


def test_grpc_checks_the_token_before_reading_the_message(
    start: Callable[[Any], Any], consumer: Any, telemetry: Telemetry
) -> None:
    security = ReceiverSecurity(token=SecretStr("right"))
    receiver = start(GrpcReceiver(config(), consumer, AttributeSelector(), telemetry, security))
    never = threading.Event()

    def no_message() -> Iterator[bytes]:
        never.wait(20)  # the message never comes: only the metadata was sent
        yield b""

    with grpc.insecure_channel(f"127.0.0.1:{receiver.port}") as channel:
        call = channel.stream_unary(EXPORT)
        try:
            with pytest.raises(grpc.RpcError) as refused:
                call(no_message(), metadata=[("authorization", "Bearer wrong")], timeout=5)
        finally:
            never.set()
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED


def test_max_request_size_must_fit_the_in_flight_budget(tmp_path: Any) -> None:
    path = tmp_path / "evald.yaml"
    path.write_text("receivers: {otlp: {max_request_size: 64MiB, max_in_flight_bytes: 32MiB}}\n")
    with pytest.raises(ConfigError, match="max_request_size must not exceed max_in_flight_bytes"):
        load_config(path)


def test_the_defaults_let_eight_largest_requests_in_flight() -> None:
    otlp = Config().receivers.otlp
    assert otlp.max_request_size == 16 * 1024**2
    assert otlp.max_in_flight_bytes == 8 * otlp.max_request_size
    ExportTraceServiceRequest.FromString(a_body(10))  # the helper makes valid requests
