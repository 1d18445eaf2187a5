"""OTLP/gRPC receiver over loopback, driven by the real OpenTelemetry exporter and raw calls."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from support.retention import holders_after
from support.sdk_spans import TOOL_SPAN, make_spans

from collector.config.settings import Listener, OtlpReceivers
from collector.decode import AttributeSelector
from collector.receivers.grpc import GrpcReceiver
from collector.telemetry.registry import Telemetry

if TYPE_CHECKING:
    from support.recording import RecordingConsumer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
RECEIVED = "evald_spans_received_total"
REFUSED = "evald_spans_refused_total"
FAILED = "evald_receiver_requests_failed_total"


@pytest.fixture
def receiver_for(
    start: Callable[[Any], Any], consumer: RecordingConsumer, telemetry: Telemetry
) -> Callable[..., GrpcReceiver]:
    """``receiver_for(**limits)`` starts a receiver on a free loopback port."""

    def _receiver(selector: AttributeSelector | None = None, **limits: Any) -> GrpcReceiver:
        config = OtlpReceivers(grpc=Listener(endpoint="127.0.0.1:0"), **limits)
        return start(GrpcReceiver(config, consumer, selector or AttributeSelector(), telemetry))

    return _receiver


@pytest.fixture
def receiver(receiver_for: Callable[..., GrpcReceiver]) -> GrpcReceiver:
    return receiver_for()


@pytest.fixture
def call(receiver: GrpcReceiver) -> Iterator[Callable[..., bytes]]:
    """``call(payload)`` sends raw bytes to Export; returns the raw response."""
    with grpc.insecure_channel(f"127.0.0.1:{receiver.port}") as channel:
        export = channel.unary_unary(EXPORT)

        def _call(payload: bytes, **kwargs: Any) -> bytes:
            response: bytes = export(payload, timeout=10, **kwargs)
            return response

        yield _call


def exporter(port: int, **kwargs: Any) -> OTLPSpanExporter:
    return OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True, **kwargs)


def export(port: int, spans: list[ReadableSpan], **kwargs: Any) -> SpanExportResult:
    client = exporter(port, **kwargs)
    try:
        return client.export(spans)
    finally:
        client.shutdown()


def rpc_error(call: Callable[..., bytes], payload: bytes) -> Any:
    with pytest.raises(grpc.RpcError) as info:
        call(payload)
    return info.value


def raw_error(port: int, payload: bytes, method: str = EXPORT) -> Any:
    """The ``grpc.RpcError`` of one call on a fresh channel."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        return rpc_error(lambda data: channel.unary_unary(method)(data, timeout=10), payload)


def request_bytes(spans: list[ReadableSpan]) -> bytes:
    data: bytes = encode_spans(spans).SerializeToString()
    return data


@pytest.mark.parametrize("compression", [grpc.Compression.NoCompression, grpc.Compression.Gzip])
def test_real_exporter_delivers_spans(
    receiver: GrpcReceiver,
    consumer: RecordingConsumer,
    metric: Callable[..., float],
    compression: grpc.Compression,
) -> None:
    spans = make_spans()

    assert export(receiver.port, spans, compression=compression) is SpanExportResult.SUCCESS

    child, root = sorted(consumer.spans, key=lambda span: span.name != TOOL_SPAN)
    assert child.trace_id == spans[0].context.trace_id.to_bytes(16, "big")
    assert child.span_id == spans[0].context.span_id.to_bytes(8, "big")
    assert child.parent_span_id == root.span_id and root.parent_span_id == b""
    assert child.attributes == {"gen_ai.tool.name": "lookup_invoice", "invoice_id": 237, "ok": True}
    assert child.resource.service_name == "music-store-bot"
    assert metric(RECEIVED, transport="grpc") == 2


def test_tracer_provider_with_simple_processor(
    receiver: GrpcReceiver, consumer: RecordingConsumer
) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "svc"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter(receiver.port, timeout=5)))
    make_spans(provider)
    provider.shutdown()
    assert sorted(span.name for span in consumer.spans) == [TOOL_SPAN, "invoke_agent refund_agent"]


def test_full_success_leaves_partial_success_unset(call: Callable[..., bytes]) -> None:
    response = ExportTraceServiceResponse.FromString(call(request_bytes(make_spans())))
    assert not response.HasField("partial_success")


def test_a_request_is_released_when_its_call_ends(call: Callable[..., bytes]) -> None:
    """grpc.aio's message iterator, left open, held every request until a cyclic
    collection, which the front makes rarely (ADR 0027)."""
    payload = request_bytes(make_spans())
    assert holders_after(payload, lambda: call(payload)) == []


@pytest.mark.parametrize("failure", ["overloaded", "crash"])
def test_a_refused_request_is_released_when_its_call_ends(
    call: Callable[..., bytes], consumer: RecordingConsumer, failure: str
) -> None:
    """The refusal's traceback holds the frames the request passed through: kept in the
    answering frame, it made a cycle (ADR 0027)."""
    payload = request_bytes(make_spans())
    consumer.overloaded, consumer.crash = (3, False) if failure == "overloaded" else (0, True)
    # The crash is logged with its traceback: written, as the daemon's handler does, not
    # kept, as pytest's log capture would keep it (and the frames with it).
    receivers_log = logging.getLogger("collector.receivers")
    handler = logging.StreamHandler(io.StringIO())
    receivers_log.addHandler(handler)
    receivers_log.propagate = False
    try:
        assert holders_after(payload, lambda: rpc_error(call, payload)) == []
    finally:
        receivers_log.propagate = True
        receivers_log.removeHandler(handler)
    assert consumer.calls == 3
    assert failure == "overloaded" or "export failed unexpectedly" in handler.stream.getvalue()


def test_empty_request_succeeds_without_consuming(
    call: Callable[..., bytes], consumer: RecordingConsumer
) -> None:
    assert call(b"") == b""
    assert consumer.calls == 0


def test_partial_success_counts_decoder_and_consumer_rejections(
    call: Callable[..., bytes], consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    consumer.reject_names = frozenset({TOOL_SPAN})
    request = encode_spans(make_spans())
    request.resource_spans[0].scope_spans[0].spans.add(name="no ids")  # invalid: empty ids

    response = ExportTraceServiceResponse.FromString(call(request.SerializeToString()))

    assert response.partial_success.rejected_spans == 2
    assert "trace_id" in response.partial_success.error_message
    assert "span limit" in response.partial_success.error_message
    assert [span.name for span in consumer.spans] == ["invoke_agent refund_agent"]
    assert metric(RECEIVED, transport="grpc") == 1
    assert metric(REFUSED, transport="grpc", reason="invalid") == 1
    assert metric(REFUSED, transport="grpc", reason="rejected") == 1


def test_real_exporter_does_not_retry_partial_success(
    receiver: GrpcReceiver, consumer: RecordingConsumer
) -> None:
    consumer.reject_names = frozenset({TOOL_SPAN})
    assert export(receiver.port, make_spans(), timeout=5) is SpanExportResult.SUCCESS
    assert consumer.calls == 1


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"\xff\x00 certainly not protobuf \x13\x37", id="random-bytes"),
        pytest.param(request_bytes(make_spans())[:-7], id="truncated"),
    ],
)
def test_undecodable_payload_is_invalid_argument_and_server_keeps_serving(
    call: Callable[..., bytes],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
    payload: bytes,
) -> None:
    error = rpc_error(call, payload)

    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid ExportTraceServiceRequest" in error.details()
    assert metric(FAILED, transport="grpc", status="INVALID_ARGUMENT") == 1
    assert consumer.calls == 0
    call(request_bytes(make_spans()))
    assert len(consumer.spans) == 2


def test_overloaded_is_unavailable_with_retry_info(
    receiver_for: Callable[..., GrpcReceiver],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
) -> None:
    receiver = receiver_for(retry_after="2500ms")
    consumer.overloaded = 1
    error = raw_error(receiver.port, request_bytes(make_spans()))

    assert error.code() is grpc.StatusCode.UNAVAILABLE
    assert error.details() == "evaluation queue full"
    trailers = dict(error.trailing_metadata())
    delay = error_details_pb2.RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"])
    assert delay.retry_delay.ToMilliseconds() == 2500
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    assert status.code == grpc.StatusCode.UNAVAILABLE.value[0]
    detail = error_details_pb2.RetryInfo()
    assert status.details[0].Unpack(detail) and detail.retry_delay.ToMilliseconds() == 2500
    assert metric(REFUSED, transport="grpc", reason="overloaded") == 2
    assert metric(FAILED, transport="grpc", status="UNAVAILABLE") == 1
    assert metric(RECEIVED, transport="grpc") == 0


def test_real_exporter_retries_when_overloaded(
    receiver_for: Callable[..., GrpcReceiver], consumer: RecordingConsumer
) -> None:
    receiver = receiver_for(retry_after=0)  # RetryInfo 0 s: the exporter retries at once
    consumer.overloaded = 2

    assert export(receiver.port, make_spans(), timeout=5) is SpanExportResult.SUCCESS
    assert consumer.calls == 3 and len(consumer.spans) == 2


def test_real_exporter_gives_up_at_its_deadline_when_overload_persists(
    receiver_for: Callable[..., GrpcReceiver], consumer: RecordingConsumer
) -> None:
    receiver = receiver_for(retry_after="100ms")
    consumer.overloaded = 1_000

    assert export(receiver.port, make_spans(), timeout=0.5) is SpanExportResult.FAILURE
    assert consumer.calls > 1 and consumer.spans == []


@pytest.mark.parametrize("compression", [grpc.Compression.NoCompression, grpc.Compression.Gzip])
def test_oversized_request_is_resource_exhausted(
    receiver_for: Callable[..., GrpcReceiver],
    consumer: RecordingConsumer,
    compression: grpc.Compression,
) -> None:
    receiver = receiver_for(max_request_size="64KiB")
    with grpc.insecure_channel(f"127.0.0.1:{receiver.port}", compression=compression) as channel:
        export_call = channel.unary_unary(EXPORT)
        with pytest.raises(grpc.RpcError) as info:
            export_call(bytes(1024**2), timeout=10)  # 1 MiB of zeros: ~1 KiB gzipped
        assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
        export_call(request_bytes(make_spans()), timeout=10)
    assert consumer.calls == 1


def test_unknown_method_is_unimplemented(receiver: GrpcReceiver) -> None:
    error = raw_error(receiver.port, b"", EXPORT.replace("Trace", "Metrics"))
    assert error.code() is grpc.StatusCode.UNIMPLEMENTED


def test_unexpected_exception_is_internal_logged_once_and_serving_continues(
    call: Callable[..., bytes],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    consumer.crash = True
    with caplog.at_level(logging.ERROR, logger="collector.receivers"):
        for _ in range(3):
            assert rpc_error(call, request_bytes(make_spans())).code() is grpc.StatusCode.INTERNAL

    assert metric(FAILED, transport="grpc", status="INTERNAL") == 3
    [record] = caplog.records  # rate-limited: one record for three failures
    assert record.exc_info is not None and "consumer bug" in str(record.exc_info[1])
    consumer.crash = False
    call(request_bytes(make_spans()))
    assert len(consumer.spans) == 2


def test_truncated_attribute_values_are_counted(
    receiver_for: Callable[..., GrpcReceiver],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
) -> None:
    receiver = receiver_for(selector=AttributeSelector(max_value_size=4))
    assert export(receiver.port, make_spans(), timeout=5) is SpanExportResult.SUCCESS
    assert metric("evald_attribute_values_truncated_total") >= 1  # "lookup_invoice", …
    assert any(span.attributes.get("gen_ai.tool.name") == "look" for span in consumer.spans)


def test_payload_built_by_hand_is_decoded(
    call: Callable[..., bytes], consumer: RecordingConsumer
) -> None:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes(range(1, 17)), bytes(range(1, 9)), "s"
    call(request.SerializeToString())
    assert consumer.spans[0].trace_id == bytes(range(1, 17))
