"""Decoders: protobuf and OTLP/JSON give the same typed spans; bad input is refused clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from support.agent_runs import (
    PARENT_ID,
    TRACE_ID,
    json_request,
    json_span,
    pb_span,
    request,
)
from support.paths import GOLDEN

from collector.core.records import Span
from collector.decode import AttributeSelector, DecodeError, decode_json, decode_protobuf

GOLDEN = GOLDEN / "traces"


@pytest.mark.parametrize(
    "path",
    sorted(p for p in GOLDEN.glob("*/*.pb") if not p.name.endswith(".logs.pb")),
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_protobuf_and_json_forms_decode_to_identical_spans(path: Path) -> None:
    # (a list per span id: an exporter may send one span twice, as Mastra's Laminar
    # exporter does with a failed tool call's span)
    from_pb: dict[bytes, list[Span]] = {}
    for span in decode_protobuf(path.read_bytes()).spans:
        from_pb.setdefault(span.span_id, []).append(span)
    from_json = [
        span
        for line in path.with_suffix(".jsonl").read_bytes().splitlines()
        for span in decode_json(line).spans
    ]
    assert len(from_json) == sum(map(len, from_pb.values())) > 0
    for span in from_json:
        assert span in from_pb[span.span_id]


def test_every_anyvalue_kind_is_converted() -> None:
    array = AnyValue()
    array.array_value.values.extend([AnyValue(int_value=1), AnyValue(string_value="a")])
    kvlist = AnyValue()
    kvlist.kvlist_value.values.append(KeyValue(key="k", value=AnyValue(bool_value=True)))
    span = pb_span(
        s=AnyValue(string_value="x"),
        i=AnyValue(int_value=-3),
        d=AnyValue(double_value=1.5),
        b=AnyValue(bytes_value=b"\x00\x01"),
        a=array,
        kv=kvlist,
        empty=AnyValue(),
    )
    (decoded,) = decode_protobuf(request(span).SerializeToString()).spans
    assert dict(decoded.attributes) == {
        "s": "x", "i": -3, "d": 1.5, "b": b"\x00\x01", "a": (1, "a"), "kv": {"k": True},
        "empty": None,
    }  # fmt: skip
    assert decoded.resource.service_name == "svc"
    assert decoded.scope_name == "scope"


def test_selector_skips_unwanted_attributes_of_child_spans_only() -> None:
    selector = AttributeSelector(keys=["gen_ai.tool.name"], prefixes=["tool."])
    child = pb_span(
        **{
            "gen_ai.tool.name": AnyValue(string_value="refund"),
            "tool.x": AnyValue(int_value=1),
            "logfire.json_schema": AnyValue(string_value="{}"),
        }
    )
    root = pb_span(**{"deployment.environment": AnyValue(string_value="prod")})
    root.span_id, root.parent_span_id = PARENT_ID, b""
    spans = decode_protobuf(request(child, root).SerializeToString(), selector).spans
    assert dict(spans[0].attributes) == {"gen_ai.tool.name": "refund", "tool.x": 1}
    assert dict(spans[1].attributes) == {"deployment.environment": "prod"}  # roots keep all


def test_selector_keeps_keys_by_their_ending_in_every_walk() -> None:
    """Suffixes (``normalize.evidence``) are kept in any namespace, by the compiled walk
    (its cached per-key verdict included) and by the reference reading alike."""
    selector = AttributeSelector(keys=["k"], prefixes=[], suffixes=[".tool.name"])
    child = pb_span(
        **{
            "acme.tool.name": AnyValue(string_value="refund"),
            "acme.tool.names": AnyValue(string_value="no"),
            "k": AnyValue(int_value=1),
        }
    )
    root = pb_span(**{"deployment.environment": AnyValue(string_value="prod")})
    root.span_id, root.parent_span_id = PARENT_ID, b""
    for _ in range(2):  # the second time from the walker's key cache
        spans = decode_protobuf(request(child, root).SerializeToString(), selector).spans
        assert dict(spans[0].attributes) == {"acme.tool.name": "refund", "k": 1}
    plain = AttributeSelector(keys=["k"], prefixes=[])  # the same keys, no suffixes: not kept
    spans = decode_protobuf(request(child, root).SerializeToString(), plain).spans
    assert dict(spans[0].attributes) == {"k": 1}


def test_long_strings_are_truncated_and_counted() -> None:
    span = pb_span(big=AnyValue(string_value="x" * 100), small=AnyValue(string_value="y"))
    batch = decode_protobuf(request(span).SerializeToString(), AttributeSelector(max_value_size=10))
    assert batch.spans[0].attributes["big"] == "x" * 10
    assert batch.truncated_values == 1


def test_spans_with_empty_or_zero_ids_are_rejected_individually() -> None:
    good, no_trace, zero_span = pb_span(), pb_span(), pb_span()
    no_trace.trace_id = b""
    zero_span.span_id = bytes(8)
    batch = decode_protobuf(request(good, no_trace, zero_span).SerializeToString())
    assert len(batch.spans) == 1
    assert batch.rejected == 2
    assert "trace_id" in batch.message


@pytest.mark.parametrize(
    "payload",
    [b"\xff\xff\xff\xff\xff", request(pb_span()).SerializeToString()[:-7]],
    ids=["random", "truncated"],
)
def test_undecodable_protobuf_raises(payload: bytes) -> None:
    with pytest.raises(DecodeError, match="ExportTraceServiceRequest"):
        decode_protobuf(payload)


def test_json_ints_as_strings_or_numbers_hex_ids_and_unknown_fields() -> None:
    (span,) = decode_json(json_request(json_span())).spans
    assert span.trace_id == TRACE_ID and span.parent_span_id == b""
    assert span.start_unix_nano == 1_700_000_000_000_000_000
    assert span.end_unix_nano == 1_700_000_001_000_000_000
    assert span.attributes["n"] == 7 and span.attributes["m"] == 8
    assert span.status_code == 2 and span.status_message == "boom"
    assert span.resource.service_name == "unknown_service"


def test_json_base64_ids_are_refused_with_the_field_path() -> None:
    base64_id = "AQIDBAUGBwgJCgsMDQ4PEA=="
    with pytest.raises(DecodeError, match=r"spans\[0\]\.traceId: .* not 32 hex digits"):
        decode_json(json_request(json_span(traceId=base64_id)))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "top level"),
        (json_request(json_span(attributes=[{"key": 5, "value": {}}])), r"spans\[0\]"),
        (json_request(json_span(startTimeUnixNano="soon")), r"spans\[0\]"),
        (b'{"resourceSpans": [{"scopeSpans": 5}]}', r"resourceSpans\[0\]"),
    ],
)
def test_malformed_json_raises_decode_error(body: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        decode_json(body)


def test_json_all_zero_ids_are_rejected_not_fatal() -> None:
    batch = decode_json(json_request(json_span(), json_span(spanId="0" * 16)))
    assert len(batch.spans) == 1 and batch.rejected == 1
