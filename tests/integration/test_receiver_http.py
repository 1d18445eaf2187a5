"""OTLP/HTTP receiver over loopback: the real exporter, raw protobuf / JSON bodies, limits."""

from __future__ import annotations

import gzip
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from email.message import Message
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest
from google.rpc import status_pb2
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult
from support.retention import buffers_after, holders_after

from collector.config.settings import Listener, OtlpReceivers
from collector.decode import AttributeSelector
from collector.receivers.http import HttpReceiver
from collector.telemetry.registry import Telemetry

if TYPE_CHECKING:
    from support.recording import RecordingConsumer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
TOOL_SPAN = "execute_tool lookup_invoice"
FAILED = "evald_receiver_requests_failed_total"
TRACE_ID = "5B8EFFF798038103D269B633813FC60C"  # OTLP/JSON ids are case-insensitive hex
SPAN_ID = "EEE19B7EC3C1B174"


class Answer(NamedTuple):
    status: int
    headers: Message
    body: bytes


def make_spans() -> list[ReadableSpan]:
    tracer = TracerProvider(resource=Resource.create({"service.name": "svc"})).get_tracer("t")
    root = tracer.start_span("invoke_agent refund_agent")
    child = tracer.start_span(
        TOOL_SPAN,
        context=trace.set_span_in_context(root),
        attributes={"gen_ai.tool.name": "lookup_invoice", "invoice_id": 237},
    )
    child.end()
    root.end()
    return [child, root]  # type: ignore[list-item]


def protobuf_body() -> bytes:
    data: bytes = encode_spans(make_spans()).SerializeToString()
    return data


def json_body(trace_id: str = TRACE_ID, span_id: str = SPAN_ID, int_value: Any = "237") -> bytes:
    span = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": TOOL_SPAN,
        "kind": 1,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": 1700000001000000000,
        "attributes": [
            {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup_invoice"}},
            {"key": "invoice_id", "value": {"intValue": int_value}},
        ],
        "status": {"code": 2, "message": "boom"},
        "unknownField": "ignored",
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]}
    document = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
    return json.dumps(document).encode()


@pytest.fixture
def receiver_for(
    start: Callable[[Any], Any], consumer: RecordingConsumer, telemetry: Telemetry
) -> Callable[..., HttpReceiver]:
    def _receiver(**limits: Any) -> HttpReceiver:
        config = OtlpReceivers(http=Listener(endpoint="127.0.0.1:0"), **limits)
        return start(HttpReceiver(config, consumer, AttributeSelector(), telemetry))

    return _receiver


@pytest.fixture
def receiver(receiver_for: Callable[..., HttpReceiver]) -> HttpReceiver:
    return receiver_for()


@pytest.fixture
def post(receiver: HttpReceiver) -> Callable[..., Answer]:
    return lambda *args, **kwargs: send(receiver.port, *args, **kwargs)


def send(
    port: int,
    body: bytes | Iterable[bytes] | None,
    content_type: str | None = PROTOBUF,
    *,
    path: str = "/v1/traces",
    method: str = "POST",
    headers: dict[str, str] | None = None,
) -> Answer:
    """One HTTP request with urllib; error answers are returned, not raised."""
    all_headers = dict(headers or {})
    if content_type:
        all_headers["Content-Type"] = content_type
    url = f"http://127.0.0.1:{port}{path}"
    request = urllib.request.Request(url, data=body, headers=all_headers, method=method)  # type: ignore[arg-type]
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return Answer(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        with error:
            return Answer(error.code, error.headers, error.read())


def json_status(answer: Answer) -> dict[str, Any]:
    assert answer.headers["Content-Type"].startswith(JSON)
    status: dict[str, Any] = json.loads(answer.body)
    return status


def proto_status(answer: Answer) -> Any:
    assert answer.headers["Content-Type"] == PROTOBUF
    return status_pb2.Status.FromString(answer.body)


def export(port: int, **kwargs: Any) -> SpanExportResult:
    client = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces", **kwargs)
    try:
        return client.export(make_spans())
    finally:
        client.shutdown()


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_real_exporter_delivers_spans(
    receiver: HttpReceiver,
    consumer: RecordingConsumer,
    metric: Callable[..., float],
    compression: Compression,
) -> None:
    assert export(receiver.port, compression=compression, timeout=5) is SpanExportResult.SUCCESS

    tool = next(span for span in consumer.spans if span.name == TOOL_SPAN)
    assert tool.attributes == {"gen_ai.tool.name": "lookup_invoice", "invoice_id": 237}
    assert len(consumer.spans) == 2
    assert metric("evald_spans_received_total", transport="http") == 2


def test_protobuf_success_answers_empty_protobuf(post: Callable[..., Answer]) -> None:
    answer = post(protobuf_body())
    assert (answer.status, answer.headers["Content-Type"], answer.body) == (200, PROTOBUF, b"")


@pytest.mark.parametrize("int_value", ["237", 237], ids=["intValue-string", "intValue-number"])
def test_json_body_with_hex_ids_is_decoded(
    post: Callable[..., Answer], consumer: RecordingConsumer, int_value: Any
) -> None:
    answer = post(json_body(int_value=int_value), "application/json; charset=utf-8")

    assert (answer.status, answer.body) == (200, b"{}")
    assert answer.headers["Content-Type"].startswith(JSON)
    [span] = consumer.spans
    assert span.trace_id == bytes.fromhex(TRACE_ID) and span.span_id == bytes.fromhex(SPAN_ID)
    assert span.attributes["invoice_id"] == 237 and span.status_code == 2


def test_gzip_json_body(post: Callable[..., Answer], consumer: RecordingConsumer) -> None:
    answer = post(gzip.compress(json_body()), JSON, headers={"Content-Encoding": "gzip"})
    assert answer.status == 200 and len(consumer.spans) == 1


def test_partial_success_in_protobuf(
    post: Callable[..., Answer], consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    consumer.reject_names = frozenset({TOOL_SPAN})
    answer = post(protobuf_body())

    response = ExportTraceServiceResponse.FromString(answer.body)
    assert answer.status == 200
    assert response.partial_success.rejected_spans == 1
    assert response.partial_success.error_message == "trace over its span limit"
    assert metric("evald_spans_refused_total", transport="http", reason="rejected") == 1


def test_partial_success_in_json_for_all_zero_ids(
    post: Callable[..., Answer], metric: Callable[..., float]
) -> None:
    answer = post(json_body(trace_id="0" * 32), JSON)

    assert answer.status == 200
    partial = json.loads(answer.body)["partialSuccess"]
    assert partial["rejectedSpans"] == "1"  # int64 → decimal string (proto3 JSON)
    assert partial["errorMessage"] == "span with an empty or invalid trace_id"  # as protobuf
    assert metric("evald_spans_refused_total", transport="http", reason="invalid") == 1


DEEP_VALUE = b'{"arrayValue": {"values": [' * 200 + b"{}" + b"]}}" * 200


@pytest.mark.parametrize(
    "case",
    [
        (b"\xff\x00 certainly not protobuf", PROTOBUF, "not a valid ExportTraceServiceRequest"),
        (protobuf_body()[:-5], PROTOBUF, "not a valid ExportTraceServiceRequest"),
        (b'{"resourceSpans": [', JSON, "not valid JSON"),
        (json_body(trace_id="W47/95gDgQPSabYzgT/GDA=="), JSON, "not base64"),
        (json_body(int_value="PLACEHOLDER").replace(b'"PLACEHOLDER"', b"Infinity"), JSON,
         "attributes[1].value.intValue: Couldn't parse integer"),
        (json_body(int_value="PLACEHOLDER").replace(b'"PLACEHOLDER"', b"1e400"), JSON,
         "attributes[1].value.intValue"),
        (json_body(int_value="PLACEHOLDER").replace(b'{"intValue": "PLACEHOLDER"}', DEEP_VALUE),
         JSON, "attributes[1].value: Message too deep"),
        (json_body().replace(b'"svc"', b'"svc\\ud800"'), JSON,
         "resourceSpans[0].resource.attributes[0].value.stringValue: Unpaired surrogate"),
        (json_body().replace(b'"kind": 1', b'"kind": 1, "name": 5'), JSON,
         "resourceSpans[0].scopeSpans[0].spans[0].name"),
    ],
    ids=["random-bytes", "truncated-protobuf", "bad-json", "base64-ids", "infinity-int",
         "1e400-int", "nesting-200", "lone-surrogate", "wrong-type"],
)  # fmt: skip
def test_undecodable_body_is_400_with_status_and_server_keeps_serving(
    post: Callable[..., Answer],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
    case: tuple[bytes, str, str],
) -> None:
    body, content_type, message = case
    answer = post(body, content_type)

    assert answer.status == 400
    if content_type == JSON:
        status = json_status(answer)
        assert status["code"] == 3 and message in status["message"]
    else:
        status = proto_status(answer)
        assert status.code == 3 and message in status.message
    assert metric(FAILED, transport="http", status="400") == 1
    assert consumer.calls == 0
    assert post(protobuf_body()).status == 200


def test_unknown_content_type_is_415(post: Callable[..., Answer]) -> None:
    answer = post(b"hello", "text/plain")
    assert answer.status == 415
    assert b"application/x-protobuf" in answer.body  # plain text: the client speaks no OTLP


def test_unknown_content_encoding_is_415_naming_gzip(
    post: Callable[..., Answer], metric: Callable[..., float]
) -> None:
    answer = post(protobuf_body(), headers={"Content-Encoding": "br"})
    assert answer.status == 415 and answer.headers["Accept-Encoding"] == "gzip"
    assert "Content-Encoding" in proto_status(answer).message
    assert metric(FAILED, transport="http", status="415") == 1


def test_invalid_gzip_is_400(post: Callable[..., Answer]) -> None:
    truncated = gzip.compress(protobuf_body())[:-12]
    assert post(truncated, headers={"Content-Encoding": "gzip"}).status == 400
    assert post(b"not gzip", headers={"Content-Encoding": "gzip"}).status == 400


@pytest.fixture
def small_receiver(receiver_for: Callable[..., HttpReceiver]) -> HttpReceiver:
    return receiver_for(max_request_size="64KiB")


def chunks(total: int) -> Iterator[bytes]:
    for _ in range(total // 4096):
        yield bytes(4096)


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (bytes(100 * 1024), {}),
        (chunks(100 * 1024), {}),  # chunked: no Content-Length to refuse early
        (gzip.compress(bytes(16 * 1024**2)), {"Content-Encoding": "gzip"}),  # 16 KiB → 16 MiB
    ],
    ids=["content-length", "chunked", "gzip-bomb"],
)
def test_oversized_body_is_413(
    small_receiver: HttpReceiver,
    metric: Callable[..., float],
    body: Any,
    headers: dict[str, str],
) -> None:
    answer = send(small_receiver.port, body, headers=headers)

    assert answer.status == 413 and "limit" in proto_status(answer).message
    assert metric(FAILED, transport="http", status="413") == 1
    assert send(small_receiver.port, protobuf_body()).status == 200


def test_a_body_over_the_limit_is_released_when_refused(small_receiver: HttpReceiver) -> None:
    """Refused mid-read (chunked, no length to refuse first): the error kept in a local
    made a cycle through aiohttp's frames holding the body read so far (ADR 0027)."""

    def refused() -> None:
        assert send(small_receiver.port, chunks(100 * 1024)).status == 413

    assert buffers_after(60 * 1024, refused) == []


def test_a_body_left_mid_way_is_released(receiver_for: Callable[..., HttpReceiver]) -> None:
    """A client that leaves mid-body: aiohttp keeps the error on the request, and its
    traceback reached the request back, the partial body with it (ADR 0027)."""
    receiver = receiver_for()
    head = (
        b"POST /v1/traces HTTP/1.1\r\nHost: evald\r\nContent-Type: application/x-protobuf\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"%x\r\n" % 70_000 + bytes(70_000) + b"\r\n"

    def leave() -> None:
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as client:
            client.sendall(head + chunk)
            time.sleep(0.2)  # the server reads the chunk, then waits for the next one

    assert buffers_after(70_000, leave) == []


def test_wrong_method_is_405_and_other_paths_404(
    post: Callable[..., Answer], metric: Callable[..., float]
) -> None:
    answer = post(None, None, method="GET")
    assert answer.status == 405 and answer.headers["Allow"] == "POST"
    assert post(protobuf_body(), path="/v1/metrics").status == 404
    assert post(None, None, path="/", method="GET").status == 404
    assert metric(FAILED, transport="http", status="405") == 1
    assert metric(FAILED, transport="http", status="404") == 2


def test_overloaded_is_503_with_retry_after_and_retry_info(
    receiver_for: Callable[..., HttpReceiver],
    consumer: RecordingConsumer,
    metric: Callable[..., float],
) -> None:
    receiver = receiver_for(retry_after="2500ms")
    consumer.overloaded = 1

    answer = send(receiver.port, json_body(), JSON)

    assert answer.status == 503
    assert answer.headers["Retry-After"] == "3"  # whole seconds, rounded up
    status = json_status(answer)
    assert status["code"] == 14 and status["message"] == "evaluation queue full"
    assert status["details"] == [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2.500s"}
    ]
    assert metric("evald_spans_refused_total", transport="http", reason="overloaded") == 1
    assert metric(FAILED, transport="http", status="503") == 1


@pytest.mark.parametrize("overloaded", [0, 3], ids=["accepted", "refused"])
def test_a_request_is_released_when_it_is_answered(
    post: Callable[..., Answer], consumer: RecordingConsumer, overloaded: int
) -> None:
    """A refusal's traceback holds the frames the request passed through: kept in the
    answering frame, it made a cycle that only a cyclic collection freed (ADR 0027)."""
    payload = protobuf_body()
    consumer.overloaded = overloaded
    assert holders_after(payload, lambda: post(payload)) == []
    assert consumer.calls == 3


def test_real_exporter_retries_when_overloaded(
    receiver_for: Callable[..., HttpReceiver], consumer: RecordingConsumer
) -> None:
    receiver = receiver_for(retry_after=0)  # Retry-After: 0 → the exporter retries at once
    consumer.overloaded = 2
    assert export(receiver.port, timeout=5) is SpanExportResult.SUCCESS
    assert consumer.calls == 3 and len(consumer.spans) == 2


def test_real_exporter_does_not_retry_500(
    receiver: HttpReceiver, consumer: RecordingConsumer, metric: Callable[..., float]
) -> None:
    consumer.crash = True  # 500 is not retryable either (only 429/502/503/504)
    assert export(receiver.port, timeout=5) is SpanExportResult.FAILURE
    assert consumer.calls == 1
    assert metric(FAILED, transport="http", status="500") == 1


def test_unexpected_exception_is_500_and_serving_continues(
    post: Callable[..., Answer], consumer: RecordingConsumer
) -> None:
    consumer.crash = True
    answer = post(json_body(), JSON)
    assert answer.status == 500 and json_status(answer)["code"] == 13
    consumer.crash = False
    assert post(json_body(), JSON).status == 200
