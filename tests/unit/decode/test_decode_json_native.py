"""The compiled OTLP/JSON walk (``_wire.walk_json``) gives exactly the typed walk's records.

``decode_json_typed`` runs the compiled walk first and the msgspec + ``TypedWalker``
walk on whatever it leaves alone. Every test compares the two on the same bytes:
golden captures from real frameworks (which the compiled walk must read itself),
hand-written documents with the shapes JSON writers differ on (escapes, key order,
number spellings, nulls, duplicates), and, through ``test_fuzz_decoders``, generated
documents checked against protobuf's own JSON parser.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.paths import GOLDEN

from collector.core import interpreted
from collector.decode import AttributeSelector, DecodeError
from collector.decode import protobuf as pb_decoder
from collector.decode.common import KEEP_ALL
from collector.decode.otlp_json import decode_json
from collector.decode.otlp_json_structs import parse_request
from collector.decode.otlp_json_typed import TypedWalker
from collector.normalize.attribute_keys import ATTRIBUTE_SELECTOR
from collector.offline.readers import read_payloads

pytestmark = pytest.mark.skipif(
    interpreted.requested() or not pb_decoder.NATIVE_DECODER,
    reason="EVALD_INTERPRETED or a pure install: the compiled walker is not in use",
)

SELECTORS = {
    "keep_all": KEEP_ALL,
    "normalizer": ATTRIBUTE_SELECTOR,
    "short_values": AttributeSelector(["k", "s"], ["gen_ai."], max_value_size=3),
}
TRACE = "0102030405060708090a0b0c0d0e0f10"
SPAN, PARENT = "0102030405060708", "1112131415161718"


def native(
    data: bytes, selector: AttributeSelector, keep: Callable[[bytes], bool] | None = None
) -> Any:
    from collector.decode import _wire

    return _wire.walk_json(
        data,
        selector.keep_all,
        selector.keys,
        selector.prefixes,
        min(selector.max_value_size, sys.maxsize),
        keep,
        selector.suffixes,
    )


def native_reads(data: bytes, selector: AttributeSelector = KEEP_ALL) -> bool:
    """Whether the compiled walk reads ``data`` itself (no fallback)."""
    from collector.decode import _wire

    try:
        native(data, selector)
    except (_wire.Unusual, UnicodeDecodeError):
        return False
    return True


def typed(
    data: bytes, selector: AttributeSelector, keep: Callable[[bytes], bool] | None = None
) -> Any:
    return tuple(TypedWalker(selector, keep).batch(parse_request(data)))


def assert_same(data: bytes, keep: Callable[[bytes], bool] | None = None) -> None:
    """Where the compiled walk reads ``data``, it reads what the typed walk reads,
    types included (``repr``: ``True`` is not ``1``, a tuple not a list)."""
    for selector in SELECTORS.values():
        if native_reads(data, selector):
            assert repr(native(data, selector, keep)) == repr(typed(data, selector, keep))


def golden_json() -> list[Path]:
    return sorted(
        path
        for path in GOLDEN.glob("traces/*/*.json*")
        if not path.name.endswith(".expected.json") and ".logs." not in path.name
    )


@pytest.mark.parametrize("path", golden_json(), ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden_captures_are_read_natively_and_identically(path: Path) -> None:
    for payload in read_payloads(path):
        document = json.loads(payload.data)
        if "resourceSpans" not in document:
            continue  # a logs document: not this walk's
        for selector in SELECTORS.values():
            assert native_reads(payload.data, selector)
        assert_same(payload.data)
        assert_same(payload.data, keep=lambda trace_id: trace_id[-1] % 2 == 0)


def test_golden_captures_exist() -> None:
    assert len(golden_json()) >= 10  # the parametrized test above is not empty


def attribute(key: str, value: str) -> str:
    return f'{{"key": "{key}", "value": {value}}}'


def document(span: str, resource: str = "", scope: str = '"scope": {"name": "lib"}, ') -> bytes:
    service = attribute("service.name", '{"stringValue": "svc"}')
    resource_part = resource or f'"resource": {{"attributes": [{service}]}}, '
    return (
        f'{{"resourceSpans": [{{{resource_part}"scopeSpans": [{{{scope}"spans": [{span}]}}]}}]}}'
    ).encode()


def span(attributes: list[str] | None = None, extra: str = "", parent: bool = True) -> str:
    ids = f'"traceId": "{TRACE}", "spanId": "{SPAN}", '
    if parent:
        ids += f'"parentSpanId": "{PARENT}", '
    listed = ", ".join(attributes or [])
    times = '"startTimeUnixNano": "1", "endTimeUnixNano": "2"'
    return f'{{{ids}"name": "op", "kind": 3, {times}, "attributes": [{listed}]{extra}}}'


def _nested(levels: int) -> str:
    value = '{"stringValue": "x"}'
    for _ in range(levels):
        value = f'{{"arrayValue": {{"values": [{value}]}}}}'
    return value


READ = {
    "escapes": span(
        [attribute("gen_ai.x", r'{"stringValue": "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\u0000"}')]
    ),
    "utf-8": span([attribute("gen_ai.x", '{"stringValue": "héllo ✓ 😀"}')]),
    "non-ASCII key": span([attribute("clé", '{"stringValue": "v"}')]),
    "numbers": span(
        [
            attribute("i", '{"intValue": "-42"}'),
            attribute("j", '{"intValue": 42}'),
            attribute("k", '{"intValue": "9223372036854775807"}'),
            attribute("l", '{"intValue": -0}'),
            attribute("m", '{"intValue": "007"}'),
            attribute("d", '{"doubleValue": 1}'),
            attribute("e", '{"doubleValue": -0}'),
            attribute("f", '{"doubleValue": -0.0}'),
            attribute("g", '{"doubleValue": 1.5e3}'),
            attribute("h", '{"doubleValue": 1e-400}'),
            attribute("b", '{"boolValue": false}'),
        ]
    ),
    "nested": span(
        [
            attribute(
                "a",
                '{"arrayValue": {"values": '
                '[{"stringValue": "x"}, {"intValue": 1}, {"arrayValue": {}}]}}',
            ),
            attribute(
                "kv",
                '{"kvlistValue": {"values": '
                '[{"key": "in", "value": {"boolValue": true}}, {"key": "no"}]}}',
            ),
            attribute("empty", "{}"),
            '{"key": "novalue"}',
        ]
    ),
    "long values": span(
        [
            attribute("k", '{"stringValue": "abcdef"}'),
            attribute("s", '{"arrayValue": {"values": [{"stringValue": "long one"}]}}'),
            attribute("unwanted", '{"stringValue": "very long"}'),
        ]
    ),
    "enum names": span(
        extra=', "status": {"code": "STATUS_CODE_ERROR", "message": "boom"}'
    ).replace('"kind": 3', '"kind": "SPAN_KIND_CLIENT"'),
    "negative kind": span().replace('"kind": 3', '"kind": -1'),
    "numeric times": span().replace(
        '"startTimeUnixNano": "1"', '"startTimeUnixNano": 18446744073709551615'
    ),
    "attributes before ids": '{"attributes": [{"key": "gen_ai.a", "value": {"stringValue": "v"}}], '
    f'"name": "n", "parentSpanId": "{PARENT}", "spanId": "{SPAN}", "traceId": "{TRACE}"}}',
    "root": span([attribute("anything", '{"stringValue": "kept"}')], parent=False),
    "events": span(
        extra=', "events": [{"name": "exception", "timeUnixNano": "5", "attributes": '
        '[{"key": "exception.message", "value": {"stringValue": "bad"}}]}], "links": []'
    ),
    "zero ids": span().replace(TRACE, "0" * 32),
    "empty ids": span().replace(TRACE, "").replace(SPAN, ""),
    "upper-case hex": span().replace(TRACE, TRACE.upper()),
    "other fields": span(
        extra=', "traceState": "a=b", "flags": 257, "droppedAttributesCount": "3", '
        '"droppedEventsCount": 0, "droppedLinksCount": 0'
    ),
    "white space": span().replace(", ", " ,\n\t\r "),
    "links": span(
        extra=f', "links": [{{"traceId": "{TRACE}", "spanId": "{SPAN}", "flags": 256, '
        '"traceState": "a=b", "droppedAttributesCount": 0, "attributes": []}, {}]'
    ),
}


@pytest.mark.parametrize("shape", READ)
def test_shapes_read_natively_and_identically(shape: str) -> None:
    data = document(READ[shape])
    assert native_reads(data)
    assert_same(data)
    assert_same(data, keep=lambda trace_id: False)


def test_empty_and_minimal_documents() -> None:
    for data in (
        b"{}",
        b' {"resourceSpans": []} \n',
        b'{"resourceSpans": [{}]}',
        document(span(), resource="{}, ".replace("{}, ", ""), scope=""),
    ):
        assert native_reads(data)
        assert_same(data)


LEFT = {
    "null": span().replace('"kind": 3', '"kind": null'),
    "duplicate key": span().replace('"kind": 3', '"kind": 3, "kind": 2'),
    "lone surrogate": span([attribute("a", r'{"stringValue": "\ud800"}')]),
    "lone low surrogate": span([attribute("a", r'{"stringValue": "\udc00x"}')]),
    "bad escape": span([attribute("a", r'{"stringValue": "\x"}')]),
    "raw control character": span([attribute("a", '{"stringValue": "a\tb"}')]),
    "float integer": span([attribute("a", '{"intValue": 1.0}')]),
    "int64 overflow": span([attribute("a", '{"intValue": "9223372036854775808"}')]),
    "double overflow": span([attribute("a", '{"doubleValue": 1e400}')]),
    "special double": span([attribute("a", '{"doubleValue": "NaN"}')]),
    "bytes": span([attribute("a", '{"bytesValue": "AAEC"}')]),
    "two members": span([attribute("a", '{"stringValue": "x", "intValue": 1}')]),
    "unknown field": span(extra=', "somethingNew": 1'),
    "snake case": span().replace('"spanId"', '"span_id"'),
    "links": span(extra=', "links": [{"traceId": "00"}]'),
    "link attributes": span(extra=', "links": [{"attributes": [{"key": "k"}]}]'),
    "unknown link field": span(extra=', "links": [{"somethingNew": 1}]'),
    "short id": span().replace(SPAN, SPAN[:-2]),
    "escaped id": span().replace(SPAN, "\\u0030" + SPAN[1:]),
    "unknown enum name": span().replace('"kind": 3', '"kind": "SPAN_KIND_OTHER"'),
    "leading zero number": span().replace('"kind": 3', '"kind": 03'),
}


@pytest.mark.parametrize("shape", LEFT)
def test_shapes_left_to_the_typed_walk_decode_as_before(shape: str) -> None:
    data = document(LEFT[shape])
    assert not native_reads(data)
    assert_decoded_as_the_typed_walk_would(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"[]",
        b'{"resourceSpans": []} x',
        b'{"resourceLogs": []}',
        b'{"resourceSpans": [}',
        b'{"resourceSpans": [{"scopeSpans": [], "resource": {}}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [], "scope": {}}]}]}',
        document(span([attribute("a", '{"stringValue": "\u00ff"}')])).replace(
            "ÿ".encode(), b"\xff"
        ),
        document(span([attribute("deep", _nested(130))], parent=False)),
    ],
    ids=[
        "empty",
        "array",
        "trailing data",
        "logs",
        "malformed",
        "resource last",
        "scope last",
        "not UTF-8",
        "deep in a root span",
    ],
)
def test_documents_left_to_the_typed_walk_decode_as_before(data: bytes) -> None:
    assert not native_reads(data)
    assert_decoded_as_the_typed_walk_would(data)


def assert_decoded_as_the_typed_walk_would(data: bytes) -> None:
    """``decode_json`` (compiled walk first) and the same without it agree."""
    from collector.decode import otlp_json

    saved = getattr(otlp_json, "_wire")  # noqa: B009 - not exported: mypy
    for selector in SELECTORS.values():
        with_native = _outcome(lambda: decode_json(data, selector))  # noqa: B023
        setattr(otlp_json, "_wire", None)  # noqa: B010
        try:
            without = _outcome(lambda: decode_json(data, selector))  # noqa: B023
        finally:
            setattr(otlp_json, "_wire", saved)  # noqa: B010
        assert repr(with_native) == repr(without)


def _outcome(run: Callable[[], Any]) -> Any:
    try:
        return run()
    except DecodeError as exc:
        return f"DecodeError: {exc}"


def test_deep_values_stop_where_the_typed_walk_stops() -> None:
    for levels in (20, 29, 30, 31, 40):
        data = document(span([attribute("a", _nested(levels))]))
        assert_decoded_as_the_typed_walk_would(data)
        assert_same(data)


def test_an_absent_value_deep_in_kvlists_stops_where_the_typed_walk_stops() -> None:
    # The typed walk checks the depth of a KeyValue's value even when it is absent.
    for levels in (18, 19, 20, 21):
        value = '{"kvlistValue": {"values": [{"key": "x"}]}}'
        for _ in range(levels - 1):
            value = f'{{"kvlistValue": {{"values": [{{"key": "x", "value": {value}}}]}}}}'
        data = document(span([attribute("a", value)]))
        assert_decoded_as_the_typed_walk_would(data)
        assert_same(data)
