"""OTLP/gRPC ``LogsService/Export`` over loopback, driven by the SDK's real log exporter and
raw calls: the same limits, partial success and retryable refusals as traces."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from pydantic import SecretStr
from support.otlp_logs import logs_request, pb_log
from support.sdk_logs import DETAILS, SERVICE, make_log_records
from support.sdk_spans import TOOL_SPAN, make_spans

from collector.config.settings import Listener, OtlpReceivers
from collector.decode import AttributeSelector
from collector.receivers.grpc import GrpcReceiver
from collector.receivers.own_output import EVALUATION_OUTPUT, OUTPUT_ATTRIBUTE
from collector.receivers.security import ReceiverSecurity
from collector.telemetry.registry import Telemetry

if TYPE_CHECKING:
    from support.recording import RecordingConsumer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
RECEIVED = "evald_log_records_received_total"
REFUSED = "evald_log_records_refused_total"
DROPPED = "evald_log_records_dropped_total"
FAILED = "evald_receiver_requests_failed_total"


@pytest.fixture
def receiver_for(
    start: Callable[[Any], Any], consumer: RecordingConsumer, telemetry: Telemetry
) -> Callable[..., GrpcReceiver]:
    """``receiver_for(**limits)`` starts a receiver on a free loopback port."""

    def _receiver(**limits: Any) -> GrpcReceiver:
        config = OtlpReceivers(grpc=Listener(endpoint="127.0.0.1:0"), **limits)
        return start(GrpcReceiver(config, consumer, AttributeSelector(), telemetry))

    return _receiver


@pytest.fixture
def receiver(receiver_for: Callable[..., GrpcReceiver]) -> GrpcReceiver:
    return receiver_for()


def export(port: int, records: list[ReadableLogRecord], **kwargs: Any) -> LogRecordExportResult:
    client = OTLPLogExporter(endpoint=f"127.0.0.1:{port}", insecure=True, **kwargs)
    try:
        return client.export(records)
    finally:
        client.shutdown()


def call(port: int, payload: bytes) -> bytes:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        response: bytes = channel.unary_unary(EXPORT)(payload, timeout=10)
        return response


def rpc_error(port: int, payload: bytes) -> Any:
    with pytest.raises(grpc.RpcError) as info:
        call(port, payload)
    return info.value


@pytest.mark.parametrize("compression", [grpc.Compression.NoCompression, grpc.Compression.Gzip])
def test_real_exporter_delivers_records_and_no_trace_id_ones_are_counted(
    receiver: GrpcReceiver,
    consumer: RecordingConsumer,
    metric: Callable[..., float],
    compression: grpc.Compression,
) -> None:
    spans = make_spans()
    records = make_log_records(spans)

    assert export(receiver.port, records, compression=compression) is LogRecordExportResult.SUCCESS

    child, root = sorted(consumer.records, key=lambda r: r.attributes["span.name"] != TOOL_SPAN)
    assert child.trace_id == spans[0].context.trace_id.to_bytes(16, "big")
    assert child.span_id == spans[0].context.span_id.to_bytes(8, "big")
    assert root.span_id == spans[1].context.span_id.to_bytes(8, "big")
    assert child.event_name == DETAILS
    assert child.body == {"note": f"about {TOOL_SPAN}"}
    assert child.time_unix_nano > 0  # the SDK sets only the observed time
    assert child.resource.service_name == SERVICE
    assert metric(RECEIVED, transport="grpc") == 2
    assert metric(DROPPED, transport="grpc", reason="no_trace_id") == 1
    assert consumer.spans == []


def test_partial_success_counts_decoder_and_consumer_rejections(
    receiver: GrpcReceiver, consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    consumer.reject_names = frozenset({"over"})
    request = logs_request(pb_log(event_name="kept"), pb_log(event_name="over"))
    request.resource_logs[0].scope_logs[0].log_records.append(pb_log(span_id=b"\x01"))

    response = ExportLogsServiceResponse.FromString(
        call(receiver.port, request.SerializeToString())
    )

    assert response.partial_success.rejected_log_records == 2
    assert "invalid span_id" in response.partial_success.error_message
    assert "span limit" in response.partial_success.error_message
    assert [record.event_name for record in consumer.records] == ["kept"]
    assert metric(RECEIVED, transport="grpc") == 1
    assert metric(REFUSED, transport="grpc", reason="invalid") == 1
    assert metric(REFUSED, transport="grpc", reason="rejected") == 1


def test_full_success_leaves_partial_success_unset(receiver: GrpcReceiver) -> None:
    response = call(receiver.port, logs_request(pb_log()).SerializeToString())
    assert not ExportLogsServiceResponse.FromString(response).HasField("partial_success")


def test_a_request_of_records_without_trace_id_only_is_a_success_without_consuming(
    receiver: GrpcReceiver, consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    assert call(receiver.port, logs_request(pb_log(trace_id=b"")).SerializeToString()) == b""
    assert consumer.calls == 0
    assert metric(DROPPED, transport="grpc", reason="no_trace_id") == 1


def test_evalds_own_log_records_are_dropped_and_counted(
    receiver: GrpcReceiver, consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    own = logs_request(pb_log(), **{OUTPUT_ATTRIBUTE: EVALUATION_OUTPUT})
    assert call(receiver.port, own.SerializeToString()) == b""
    assert consumer.records == []
    assert metric(DROPPED, transport="grpc", reason="own_output") == 1


def test_undecodable_payload_is_invalid_argument(
    receiver: GrpcReceiver, consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    error = rpc_error(receiver.port, b"\xff\x00 certainly not protobuf")
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid ExportLogsServiceRequest" in error.details()
    assert metric(FAILED, transport="grpc", status="INVALID_ARGUMENT") == 1
    assert consumer.calls == 0


def test_overloaded_is_unavailable_with_retry_info(
    receiver_for: Callable[..., GrpcReceiver],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
) -> None:
    receiver = receiver_for(retry_after="2500ms")
    consumer.overloaded = 1
    error = rpc_error(receiver.port, logs_request(pb_log(), pb_log()).SerializeToString())

    assert error.code() is grpc.StatusCode.UNAVAILABLE
    trailers = dict(error.trailing_metadata())
    delay = error_details_pb2.RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"])
    assert delay.retry_delay.ToMilliseconds() == 2500
    assert metric(REFUSED, transport="grpc", reason="overloaded") == 2
    assert metric(RECEIVED, transport="grpc") == 0


def test_real_exporter_retries_when_overloaded(
    receiver_for: Callable[..., GrpcReceiver], consumer: RecordingConsumer
) -> None:
    receiver = receiver_for(retry_after=0)
    consumer.overloaded = 2
    records = make_log_records(make_spans())
    assert export(receiver.port, records, timeout=5) is LogRecordExportResult.SUCCESS
    assert consumer.calls == 3 and len(consumer.records) == 2


def test_oversized_request_is_resource_exhausted(
    receiver_for: Callable[..., GrpcReceiver], consumer: RecordingConsumer
) -> None:
    receiver = receiver_for(max_request_size="64KiB")
    big = logs_request(pb_log(body="x" * 100_000)).SerializeToString()
    assert rpc_error(receiver.port, big).code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert consumer.calls == 0


def test_the_logs_service_is_serving_on_the_health_service(receiver: GrpcReceiver) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{receiver.port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        request = health_pb2.HealthCheckRequest(
            service="opentelemetry.proto.collector.logs.v1.LogsService"
        )
        answer = stub.Check(request, timeout=5)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_a_bearer_token_guards_the_logs_service(
    start: Callable[[Any], Any],
    consumer: RecordingConsumer,
    telemetry: Telemetry,
    metric: Callable[..., float],
) -> None:
    config = OtlpReceivers(grpc=Listener(endpoint="127.0.0.1:0"))
    security = ReceiverSecurity(token=SecretStr("s3cret"))
    receiver = start(GrpcReceiver(config, consumer, AttributeSelector(), telemetry, security))
    records = make_log_records(make_spans())

    assert export(receiver.port, records, timeout=5) is LogRecordExportResult.FAILURE
    assert metric(FAILED, transport="grpc", status="UNAUTHENTICATED") == 1
    assert consumer.calls == 0
    headers = {"authorization": "Bearer s3cret"}
    assert export(receiver.port, records, headers=headers) is LogRecordExportResult.SUCCESS
    assert len(consumer.records) == 2
