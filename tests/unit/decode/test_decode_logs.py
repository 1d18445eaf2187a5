"""Log decoders: protobuf and OTLP/JSON give the same ``LogRecord``s; records without a
trace id are dropped and counted, malformed ones rejected alone; bad payloads refused."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from support.otlp_logs import SPAN_ID, TRACE_ID, any_value, logs_request, otlp_json, pb_log

from collector.core.records import LogRecord, Resource
from collector.decode import (
    AttributeSelector,
    DecodedLogs,
    DecodeError,
    decode_logs_json,
    decode_logs_protobuf,
)

Decode = Callable[[ExportLogsServiceRequest, AttributeSelector], DecodedLogs]


def via_protobuf(request: ExportLogsServiceRequest, selector: AttributeSelector) -> DecodedLogs:
    return decode_logs_protobuf(request.SerializeToString(), selector)


def via_json(request: ExportLogsServiceRequest, selector: AttributeSelector) -> DecodedLogs:
    return decode_logs_json(otlp_json(request), selector)


both = pytest.mark.parametrize("decode", [via_protobuf, via_json], ids=["protobuf", "json"])


def decode_one(
    decode: Decode, selector: AttributeSelector | None = None, **fields: object
) -> LogRecord:
    batch = decode(logs_request(pb_log(**fields)), selector or AttributeSelector())  # type: ignore[arg-type]
    (record,) = batch.records
    return record


@both
def test_a_record_becomes_a_log_record(decode: Decode) -> None:
    record = decode_one(
        decode,
        event_name="gen_ai.user.message",
        time=5,
        observed=9,
        body={"content": "hi"},
        gen_ai__system="openai",
    )
    assert record == LogRecord(
        TRACE_ID,
        SPAN_ID,
        "gen_ai.user.message",
        5,
        {"gen_ai.system": "openai"},
        {"content": "hi"},
        Resource("svc", {"service.name": "svc"}),
        "scope",
    )


@both
@pytest.mark.parametrize(
    ("body", "decoded"),
    [
        ({"content": "hi", "n": 2}, {"content": "hi", "n": 2}),
        ("plain text", "plain text"),
        ([1, "a"], (1, "a")),
        (b"\x00\x01", b"\x00\x01"),
        (2.5, 2.5),
        (None, None),
        ({"message": {"role": "assistant", "tool_calls": [{"id": "c1"}]}},
         {"message": {"role": "assistant", "tool_calls": ({"id": "c1"},)}}),
    ],
    ids=["kvlist", "string", "array", "bytes", "double", "absent", "nested"],
)  # fmt: skip
def test_every_body_kind_is_decoded(decode: Decode, body: object, decoded: object) -> None:
    assert decode_one(decode, body=body).body == decoded


def test_an_empty_body_is_none() -> None:
    record = pb_log()
    record.body.CopyFrom(any_value(None))  # set, but holding no value
    assert decode_logs_protobuf(logs_request(record).SerializeToString()).records[0].body is None
    document = json.loads(otlp_json(logs_request(pb_log())))
    document["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["body"] = {}
    assert decode_logs_json(json.dumps(document)).records[0].body is None


@both
@pytest.mark.parametrize(
    ("field", "attribute", "name"),
    [
        ("gen_ai.choice", "ignored", "gen_ai.choice"),
        ("", "gen_ai.user.message", "gen_ai.user.message"),
        ("", None, ""),
    ],
    ids=["event_name-field", "event.name-attribute", "none"],
)
def test_the_event_name_falls_back_to_the_attribute(
    decode: Decode, field: str, attribute: str | None, name: str
) -> None:
    attributes = {} if attribute is None else {"event__name": attribute}
    record = decode_one(decode, event_name=field, **attributes)
    assert record.event_name == name
    if attribute is not None:
        assert record.attributes["event.name"] == attribute  # kept whatever the selector


@both
@pytest.mark.parametrize(("time", "observed", "expected"), [(5, 9, 5), (0, 9, 9), (0, 0, 0)])
def test_the_time_falls_back_to_the_observed_time(
    decode: Decode, time: int, observed: int, expected: int
) -> None:
    assert decode_one(decode, time=time, observed=observed).time_unix_nano == expected


@both
@pytest.mark.parametrize("trace_id", [b"", bytes(16)], ids=["empty", "all-zero"])
def test_records_without_a_trace_id_are_dropped_and_counted(
    decode: Decode, trace_id: bytes
) -> None:
    request = logs_request(pb_log(trace_id=trace_id), pb_log(), pb_log(trace_id=trace_id))
    batch = decode(request, AttributeSelector())
    assert [record.trace_id for record in batch.records] == [TRACE_ID]
    assert (batch.no_trace_id, batch.rejected, batch.message) == (2, 0, "")


def test_a_json_record_without_trace_id_key_is_dropped_and_counted() -> None:
    document = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"eventName": "e"}]}]}]}
    batch = decode_logs_json(json.dumps(document))
    assert (batch.records, batch.no_trace_id) == ([], 1)


@both
@pytest.mark.parametrize("span_id", [b"", bytes(8)], ids=["empty", "all-zero"])
def test_a_record_without_span_id_keeps_its_trace(decode: Decode, span_id: bytes) -> None:
    record = decode_one(decode, span_id=span_id)
    assert (record.trace_id, record.span_id) == (TRACE_ID, b"")


@pytest.mark.parametrize(
    ("ids", "problem"),
    [({"trace_id": b"\x01" * 8}, "trace_id"), ({"span_id": b"\x01" * 4}, "span_id")],
    ids=["short-trace-id", "short-span-id"],
)
def test_protobuf_records_with_malformed_ids_are_rejected_alone(
    ids: dict[str, bytes], problem: str
) -> None:
    request = logs_request(pb_log(**ids), pb_log())  # type: ignore[arg-type]
    batch = decode_logs_protobuf(request.SerializeToString())
    assert len(batch.records) == 1 and batch.rejected == 1
    assert batch.message == f"log record with an invalid {problem}"


@pytest.mark.parametrize(
    ("key", "value"),
    [("traceId", "0102"), ("traceId", "not hex at all, not hex at all!"), ("spanId", "zz" * 8)],
)
def test_json_ids_that_are_not_hex_make_the_request_invalid(key: str, value: str) -> None:
    # As for spans: OTLP/JSON is validated as protobuf's JSON mapping (400 naming the field).
    document = json.loads(otlp_json(logs_request(pb_log(), pb_log())))
    document["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0][key] = value
    with pytest.raises(DecodeError, match=rf"logRecords\[0\]\.{key}: .* hex"):
        decode_logs_json(json.dumps(document))


def test_json_ids_are_case_insensitive_hex() -> None:
    document = json.loads(otlp_json(logs_request(pb_log())))
    record = document["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    record["traceId"], record["spanId"] = TRACE_ID.hex().upper(), SPAN_ID.hex().upper()
    (decoded,) = decode_logs_json(json.dumps(document)).records
    assert (decoded.trace_id, decoded.span_id) == (TRACE_ID, SPAN_ID)


@both
def test_a_narrow_selector_keeps_every_record_attribute(decode: Decode) -> None:
    """A record is read as a span event, whose attributes are kept whole; a record may
    name a call's id beside its arguments under any key (``normalize.call_records``)."""
    selector = AttributeSelector(keys=["mine"], prefixes=["custom."])
    record = decode_one(
        decode,
        selector,
        body={"anything": "kept whole"},
        gen_ai__input__messages="[]",
        event__name="e",
        mine=1,
        custom__x=2,
        http__method="GET",
    )
    assert dict(record.attributes) == {
        "gen_ai.input.messages": "[]", "event.name": "e", "mine": 1, "custom.x": 2,
        "http.method": "GET",
    }  # fmt: skip
    assert record.body == {"anything": "kept whole"}


@both
def test_long_values_are_truncated_and_counted(decode: Decode) -> None:
    selector = AttributeSelector(keys=[], max_value_size=4)
    request = logs_request(pb_log(body={"content": "abcdefgh"}, gen_ai__x="123456"))
    batch = decode(request, selector)
    (record,) = batch.records
    assert (record.body, record.attributes) == ({"content": "abcd"}, {"gen_ai.x": "1234"})
    assert batch.truncated_values == 2


def test_keep_skips_the_records_of_other_traces_uncounted() -> None:
    other = bytes(range(2, 18))
    request = logs_request(pb_log(), pb_log(trace_id=other), pb_log(trace_id=b""))
    keep = {TRACE_ID}.__contains__
    for batch in (
        decode_logs_protobuf(request.SerializeToString(), keep=keep),
        decode_logs_json(otlp_json(request), keep=keep),
    ):
        assert [r.trace_id for r in batch.records] == [TRACE_ID]
        assert (batch.rejected, batch.no_trace_id) == (0, 1)


def test_resources_and_scopes_are_shared_by_their_records() -> None:
    request = logs_request(pb_log(), pb_log(), service="agent", **{"deployment.environment": "x"})
    first, second = decode_logs_protobuf(request.SerializeToString()).records
    assert first.resource is second.resource
    assert first.resource == Resource(
        "agent", {"service.name": "agent", "deployment.environment": "x"}
    )
    assert first.scope_name == "scope"


@pytest.mark.parametrize(
    "payload", [b"\xff\x00 certainly not protobuf", b"\x0a\x05\x0a\x03"], ids=["junk", "truncated"]
)
def test_undecodable_protobuf_is_refused(payload: bytes) -> None:
    with pytest.raises(DecodeError, match="not a valid ExportLogsServiceRequest"):
        decode_logs_protobuf(payload)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "top level"),
        (b'{"resourceLogs": [{"scopeLogs": [{"logRecords": [7]}]}]}',
         "resourceLogs[0].scopeLogs[0].logRecords[0]"),
        (b'{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "%s", "eventName": 3}]}]}]}'
         % TRACE_ID.hex().encode(), "eventName"),
    ],
    ids=["invalid", "not-an-object", "record-not-an-object", "bad-event-name"],
)  # fmt: skip
def test_malformed_json_is_refused_naming_the_path(payload: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message.replace("[", r"\[")):
        decode_logs_json(payload)


def test_an_empty_request_has_no_records() -> None:
    assert decode_logs_protobuf(b"") == DecodedLogs([])
    assert decode_logs_json(b"{}") == DecodedLogs([])
