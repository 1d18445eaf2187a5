"""OTLP/JSON is validated as proto3 JSON (protobuf's ``json_format`` with OTLP's
deviations): what it refuses is a ``DecodeError`` naming the field, never another
exception; what it accepts reads as it does (issue 14, defects 1, 6 and 7)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.agent_runs import SPAN_ID, json_span

from collector.decode import DecodeError, decode_json

SPAN_PATH = r"resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]"


def body(*spans: dict[str, Any], resource: Any = None, scope: Any = None) -> bytes:
    scope_spans = {"scope": scope or {}, "spans": list(spans)}
    document = {"resourceSpans": [{"resource": resource or {}, "scopeSpans": [scope_spans]}]}
    return json.dumps(document).encode()


def attribute(key: Any, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value}


def service(name: str) -> dict[str, Any]:
    return {"attributes": [attribute("service.name", {"stringValue": name})]}


def child(**fields: Any) -> dict[str, Any]:
    return json_span(parentSpanId=SPAN_ID.hex(), spanId="02" * 8, **fields)


# --- defect 1: lone surrogates ------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (body(json_span(), resource=service("x\ud800")), r"resource\.attributes\[0\]"),
        (body(json_span(name="x\udc00")), rf"{SPAN_PATH}\.name"),
        (body(json_span(attributes=[attribute("k\ud800", {})])), rf"{SPAN_PATH}\.attributes"),
        (
            body(json_span(attributes=[attribute("gen_ai.agent.name", {"stringValue": "\ud800"})])),
            rf"{SPAN_PATH}\.attributes\[0\]\.value\.stringValue",
        ),
        (body(json_span(), scope={"name": "s\udfff"}), r"scopeSpans\[0\]\.scope\.name"),
    ],
)
def test_lone_surrogates_are_refused_naming_the_field(document: bytes, where: str) -> None:
    assert b"\\ud" in document  # json.dumps escapes them: "x\ud800" on the wire
    with pytest.raises(DecodeError, match=rf"{where}.*: Unpaired surrogate"):
        decode_json(document)


def test_paired_surrogates_and_surrogates_in_unknown_fields_are_fine() -> None:
    document = body(json_span(name="\ud83d\ude00", unknown="\ud800"), resource=service("bot"))
    (span,) = decode_json(document).spans
    assert span.name == "😀" and span.resource.service_name == "bot"


# --- defect 6: numbers that are not numbers, deep nesting ------------------------------


@pytest.mark.parametrize("literal", ["Infinity", "-Infinity", "NaN", "1e400", "-1e400"])
@pytest.mark.parametrize("field", ["startTimeUnixNano", "endTimeUnixNano"])
def test_non_finite_numbers_in_integer_fields_are_refused(literal: str, field: str) -> None:
    document = body(json_span(**{field: "PLACEHOLDER"}))
    document = document.replace(b'"PLACEHOLDER"', literal.encode())
    with pytest.raises(DecodeError, match=rf"{SPAN_PATH}\.{field}: "):
        decode_json(document)


@pytest.mark.parametrize("literal", ["Infinity", "1e400"])
def test_non_finite_numbers_in_values_are_refused(literal: str) -> None:
    document = body(json_span(attributes=[attribute("n", {"intValue": 0})]))
    document = document.replace(b'"intValue": 0', f'"intValue": {literal}'.encode())
    with pytest.raises(DecodeError, match=rf"{SPAN_PATH}\.attributes\[0\]\.value\.intValue"):
        decode_json(document)


def nested(levels: int) -> str:
    """An ``AnyValue`` of ``levels`` arrays around an int, as JSON text."""
    return '{"arrayValue": {"values": [' * levels + '{"intValue": 1}' + "]}}" * levels


def with_value(value: str) -> bytes:
    document = body(json_span(attributes=[attribute("deep", "PLACEHOLDER")]))
    return document.replace(b'"PLACEHOLDER"', value.encode())


@pytest.mark.parametrize("levels", [60, 250, 500, 2_000])
def test_deeply_nested_values_are_refused(levels: int) -> None:
    with pytest.raises(DecodeError, match=r"(attributes.*too deep|nested too deeply)"):
        decode_json(with_value(nested(levels)))


@pytest.mark.parametrize("levels", [500, 5_000, 200_000])
def test_deeply_nested_json_is_refused(levels: int) -> None:
    document = b'{"resourceSpans": [], "x": ' + b"[" * levels + b"]" * levels + b"}"
    try:
        batch = decode_json(document)
    except DecodeError as exc:
        assert "nested too deeply" in str(exc)
    else:  # an unknown field nested within the parsers' limits is ignored
        assert batch.spans == [] and levels < 1000


def test_values_nested_within_the_limit_are_read() -> None:
    (span,) = decode_json(with_value(nested(40))).spans
    value = span.attributes["deep"]
    for _ in range(40):
        assert isinstance(value, tuple)
        (value,) = value
    assert value == 1


# --- defect 7: wrong types, per proto3 JSON ---------------------------------------------


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (body(json_span(name=5)), rf"{SPAN_PATH}\.name"),
        (body(json_span(name=["x"])), rf"{SPAN_PATH}\.name"),
        (body(json_span(events=[{"name": 7}])), rf"{SPAN_PATH}\.events\[0\]\.name"),
        (body(json_span(), scope={"name": False}), r"scopeSpans\[0\]\.scope\.name"),
        (body(json_span(attributes=[attribute("b", {"boolValue": "false"})])), "boolValue"),
        (body(json_span(startTimeUnixNano=-1)), rf"{SPAN_PATH}\.startTimeUnixNano"),
        (body(json_span(startTimeUnixNano="1.5")), rf"{SPAN_PATH}\.startTimeUnixNano"),
        (body(json_span(endTimeUnixNano=2.5)), rf"{SPAN_PATH}\.endTimeUnixNano"),
        (body(json_span(endTimeUnixNano=str(2**64))), rf"{SPAN_PATH}\.endTimeUnixNano"),
        (body(json_span(attributes=[attribute("i", {"intValue": 2**63})])), "intValue"),
        (body(json_span(attributes=[attribute("i", {"intValue": True})])), "intValue"),
        (body(json_span(kind=2**31)), rf"{SPAN_PATH}\.kind"),
        (body(json_span(status={"code": [2]})), rf"{SPAN_PATH}\.status\.code"),
        (body(json_span(attributes=[attribute(5, {"stringValue": "v"})])), r"\.key"),
        (body(child(attributes=[attribute(5, {"stringValue": "v"})])), r"\.key"),
        (
            body(json_span(attributes=[attribute("two", {"stringValue": "a", "intValue": 1})])),
            "oneof",
        ),
        (body(json_span(events=[None])), rf"{SPAN_PATH}\.events"),
        (body(json_span(traceId=5)), rf"{SPAN_PATH}\.traceId"),
    ],
)
def test_wrong_types_are_refused_naming_the_field(document: bytes, where: str) -> None:
    with pytest.raises(DecodeError, match=where):
        decode_json(document)


def test_a_wrong_type_in_a_span_that_is_not_kept_still_refuses_the_request() -> None:
    # A child span's attribute the selector does not read is checked all the same.
    document = body(json_span(), child(attributes=[attribute("x", {"intValue": "abc"})]))
    with pytest.raises(DecodeError, match=r"spans\[1\]\.attributes\[0\]\.value\.intValue"):
        decode_json(document)


def test_what_proto3_json_accepts_reads_as_it_does() -> None:
    span = json_span(
        name=None,  # null: the default
        startTimeUnixNano="1e3",  # an integer in exponent form
        endTimeUnixNano=2000.0,  # an integral float
        kind="SPAN_KIND_CLIENT",
        attributes=[
            attribute("b", {"boolValue": False}),
            attribute("i", {"intValue": "-5"}),
            attribute("d", {"doubleValue": "-Infinity"}),
            {"value": {"stringValue": "keyless"}},  # key: the default ""
        ],
        status={"code": "STATUS_CODE_OK", "message": None},
    )
    (decoded,) = decode_json(body(span)).spans
    assert decoded.name == "" and decoded.kind == 3 and decoded.status_code == 1
    # An unknown enum name is ignored like an unknown field (the field keeps its default).
    (unknown_kind,) = decode_json(body(json_span(kind="SERVER"))).spans
    assert unknown_kind.kind == 0
    assert (decoded.start_unix_nano, decoded.end_unix_nano) == (1000, 2000)
    assert dict(decoded.attributes) == {"b": False, "i": -5, "d": float("-inf"), "": "keyless"}


def test_links_are_validated_though_not_read() -> None:
    link = {
        "traceId": "ab" * 16,
        "spanId": "cd" * 8,
        "attributes": [attribute("k", {"intValue": 1})],
    }
    (span,) = decode_json(body(json_span(links=[link]))).spans
    assert span.name == "root"
    with pytest.raises(DecodeError, match=r"links\[0\]\.spanId"):
        decode_json(body(json_span(links=[link | {"spanId": "short"}])))
