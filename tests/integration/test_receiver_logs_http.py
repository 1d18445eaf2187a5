"""OTLP/HTTP ``POST /v1/logs`` over loopback: the SDK's real log exporter, raw protobuf and
OTLP/JSON bodies, gzip, and the same limits and refusals as ``/v1/traces``."""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from email.message import Message
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from pydantic import SecretStr
from support.otlp_logs import SPAN_ID, TRACE_ID, logs_request, otlp_json, pb_log
from support.sdk_logs import DETAILS, make_log_records
from support.sdk_spans import make_spans

from collector.config.settings import Listener, OtlpReceivers
from collector.decode import AttributeSelector
from collector.receivers.http import HttpReceiver
from collector.receivers.security import ReceiverSecurity
from collector.telemetry.registry import Telemetry

if TYPE_CHECKING:
    from support.recording import RecordingConsumer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
RECEIVED = "evald_log_records_received_total"
REFUSED = "evald_log_records_refused_total"
DROPPED = "evald_log_records_dropped_total"
FAILED = "evald_receiver_requests_failed_total"


class Answer(NamedTuple):
    status: int
    headers: Message
    body: bytes


@pytest.fixture
def receiver_for(
    start: Callable[[Any], Any], consumer: RecordingConsumer, telemetry: Telemetry
) -> Callable[..., HttpReceiver]:
    def _receiver(security: ReceiverSecurity | None = None, **limits: Any) -> HttpReceiver:
        config = OtlpReceivers(http=Listener(endpoint="127.0.0.1:0"), **limits)
        return start(HttpReceiver(config, consumer, AttributeSelector(), telemetry, security))

    return _receiver


@pytest.fixture
def receiver(receiver_for: Callable[..., HttpReceiver]) -> HttpReceiver:
    return receiver_for()


def send(
    port: int,
    body: bytes | None,
    content_type: str = PROTOBUF,
    *,
    method: str = "POST",
    headers: dict[str, str] | None = None,
) -> Answer:
    """One request to ``/v1/logs``; error answers are returned, not raised."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/logs",
        data=body,
        headers={"Content-Type": content_type, **(headers or {})},
        method=method,
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return Answer(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        with error:
            return Answer(error.code, error.headers, error.read())


def export(port: int, records: list[ReadableLogRecord], **kwargs: Any) -> LogRecordExportResult:
    client = OTLPLogExporter(endpoint=f"http://127.0.0.1:{port}/v1/logs", **kwargs)
    try:
        return client.export(records)
    finally:
        client.shutdown()


def protobuf_body(*kept: str) -> bytes:
    data: bytes = logs_request(*(pb_log(event_name=name) for name in kept)).SerializeToString()
    return data


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_real_exporter_delivers_records(
    receiver: HttpReceiver,
    consumer: RecordingConsumer,
    metric: Callable[..., float],
    compression: Compression,
) -> None:
    spans = make_spans()
    result = export(receiver.port, make_log_records(spans), compression=compression)

    assert result is LogRecordExportResult.SUCCESS
    assert {record.span_id for record in consumer.records} == {
        span.context.span_id.to_bytes(8, "big") for span in spans
    }
    assert {record.event_name for record in consumer.records} == {DETAILS}
    assert metric(RECEIVED, transport="http") == 2
    assert metric(DROPPED, transport="http", reason="no_trace_id") == 1


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_json_bodies_are_decoded_and_answered_in_json(
    receiver: HttpReceiver, consumer: RecordingConsumer, gzipped: bool
) -> None:
    body = otlp_json(logs_request(pb_log(event_name="gen_ai.user.message", body={"content": "hi"})))
    headers = {"Content-Encoding": "gzip"} if gzipped else {}
    answer = send(receiver.port, gzip.compress(body) if gzipped else body, JSON, headers=headers)

    assert (answer.status, answer.body) == (200, b"{}")
    assert answer.headers["Content-Type"].startswith(JSON)
    (record,) = consumer.records
    assert (record.trace_id, record.span_id, record.body) == (TRACE_ID, SPAN_ID, {"content": "hi"})


def test_json_partial_success_names_rejected_log_records(
    receiver: HttpReceiver, consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    consumer.reject_names = frozenset({"over"})
    answer = send(receiver.port, otlp_json(logs_request(pb_log(), pb_log(event_name="over"))), JSON)

    assert answer.status == 200
    assert json.loads(answer.body) == {
        "partialSuccess": {"rejectedLogRecords": "1", "errorMessage": "trace over its span limit"}
    }
    assert metric(REFUSED, transport="http", reason="rejected") == 1


def test_protobuf_partial_success_is_an_export_logs_service_response(
    receiver: HttpReceiver, consumer: RecordingConsumer
) -> None:
    request = logs_request(pb_log(), pb_log(trace_id=b"\x01" * 3))
    answer = send(receiver.port, request.SerializeToString())

    assert answer.status == 200 and answer.headers["Content-Type"] == PROTOBUF
    response = ExportLogsServiceResponse.FromString(answer.body)
    assert response.partial_success.rejected_log_records == 1
    assert response.partial_success.error_message == "log record with an invalid trace_id"
    assert len(consumer.records) == 1


def test_overloaded_is_503_with_retry_after(
    receiver_for: Callable[..., HttpReceiver],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
) -> None:
    receiver = receiver_for(retry_after="1500ms")
    consumer.overloaded = 1
    answer = send(receiver.port, protobuf_body("a", "b"))

    assert answer.status == 503 and answer.headers["Retry-After"] == "2"
    assert status_pb2.Status.FromString(answer.body).message == "evaluation queue full"
    assert metric(REFUSED, transport="http", reason="overloaded") == 2
    assert metric(FAILED, transport="http", status="503") == 1
    assert send(receiver.port, protobuf_body("a", "b")).status == 200
    assert len(consumer.records) == 2


def test_undecodable_body_is_400(
    receiver: HttpReceiver, consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    answer = send(receiver.port, b"{not json", JSON)
    assert answer.status == 400
    assert "not valid JSON" in json.loads(answer.body)["message"]
    assert metric(FAILED, transport="http", status="400") == 1
    assert consumer.calls == 0


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_oversized_body_is_413(
    receiver_for: Callable[..., HttpReceiver], consumer: RecordingConsumer, gzipped: bool
) -> None:
    receiver = receiver_for(max_request_size="64KiB")
    body = logs_request(pb_log(body="x" * 100_000)).SerializeToString()
    headers = {"Content-Encoding": "gzip"} if gzipped else {}
    answer = send(receiver.port, gzip.compress(body) if gzipped else body, headers=headers)
    assert answer.status == 413 and consumer.calls == 0


def test_only_post_is_allowed(receiver: HttpReceiver) -> None:
    answer = send(receiver.port, None, method="GET")
    assert answer.status == 405 and answer.headers["Allow"] == "POST"


def test_a_bearer_token_guards_logs_too(
    receiver_for: Callable[..., HttpReceiver],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
) -> None:
    receiver = receiver_for(ReceiverSecurity(token=SecretStr("s3cret")))
    records = make_log_records(make_spans())

    answer = send(receiver.port, protobuf_body("a"))
    assert answer.status == 401 and answer.headers["WWW-Authenticate"] == 'Bearer realm="evald"'
    assert export(receiver.port, records, timeout=5) is LogRecordExportResult.FAILURE
    assert metric(FAILED, transport="http", status="401") == 2
    assert consumer.calls == 0
    headers = {"Authorization": "Bearer s3cret"}
    assert export(receiver.port, records, headers=headers) is LogRecordExportResult.SUCCESS
    assert len(consumer.records) == 2
