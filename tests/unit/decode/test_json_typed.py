"""The typed OTLP/JSON reader (msgspec structs) reads exactly what the dict walker reads,
and hands every document it is not sure of back to it (docs/adr/0021-replay-throughput.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.agent_runs import SPAN_ID, TRACE_ID, json_span
from support.paths import GOLDEN

from collector.decode import AttributeSelector, DecodedBatch, DecodeError, decode_json
from collector.decode.common import KEEP_ALL
from collector.decode.logs_json import parse_json
from collector.decode.otlp_json import decode_json_document, decode_json_typed
from collector.normalize import ATTRIBUTE_SELECTOR

SELECTORS = (KEEP_ALL, ATTRIBUTE_SELECTOR, AttributeSelector((), (), max_value_size=4))


def body(*spans: dict[str, Any], resource: Any = None, scope: Any = None) -> bytes:
    scope_spans = {"scope": scope or {"name": "lib"}, "spans": list(spans)}
    resource = resource or {"attributes": [attribute("service.name", {"stringValue": "svc"})]}
    document = {"resourceSpans": [{"resource": resource, "scopeSpans": [scope_spans]}]}
    return json.dumps(document).encode()


def attribute(key: Any, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value}


def span(**fields: Any) -> dict[str, Any]:
    """A root span without the NaN of ``json_span`` (NaN != NaN: records would differ)."""
    return json_span(**{"attributes": [attribute("n", {"intValue": 7})], **fields})


def child(**fields: Any) -> dict[str, Any]:
    return span(**{"parentSpanId": SPAN_ID.hex(), "spanId": "02" * 8, **fields})


def dict_walker(data: bytes, selector: AttributeSelector, keep: Any = None) -> DecodedBatch:
    return decode_json_document(parse_json(data), selector, keep=keep)


EVERY_KIND = [
    attribute("s", {"stringValue": "a long enough string"}),
    attribute("gen_ai.tool.name", {"stringValue": "lookup"}),
    attribute("i", {"intValue": "-5"}),
    attribute("j", {"intValue": 7}),
    attribute("d", {"doubleValue": 1.5}),
    attribute("inf", {"doubleValue": "-Infinity"}),
    attribute("b", {"boolValue": True}),
    attribute("bytes", {"bytesValue": "AAE="}),
    attribute("a", {"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "x"}, {}]}}),
    attribute("kv", {"kvlistValue": {"values": [attribute("k", {"boolValue": False})]}}),
    attribute("empty", {}),
    {"key": "no value"},
    {"value": {"stringValue": "keyless"}},
    attribute("unknown member", {"stringValue": "v", "somethingElse": 1}),
]


def every_kind_document() -> bytes:
    event = {"timeUnixNano": "5", "name": "exception", "attributes": EVERY_KIND}
    return body(
        span(attributes=EVERY_KIND, kind="SPAN_KIND_SERVER", status={"code": 2}),
        child(attributes=EVERY_KIND, events=[event], flags=256, traceState="a=b"),
        child(spanId="03" * 8, traceId="00" * 16),  # rejected: an all-zero trace id
    )


@pytest.mark.parametrize(
    "path", sorted(GOLDEN.glob("traces/*/*.jsonl")), ids=lambda p: f"{p.parent.name}/{p.stem}"
)
def test_golden_traces_read_as_the_dict_walker_reads_them(path: Path) -> None:
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    for line in lines:
        if b'"resourceSpans"' not in line:
            continue
        for selector in SELECTORS:
            typed = decode_json_typed(line, selector)
            assert typed is not None, "a golden trace left to the slower path"
            assert typed == dict_walker(line, selector)


@pytest.mark.parametrize("selector", SELECTORS, ids=["keep-all", "normalizer", "tiny-values"])
def test_every_value_kind_and_span_field(selector: AttributeSelector) -> None:
    data = every_kind_document()
    typed = decode_json_typed(data, selector)
    assert typed is not None
    assert typed == dict_walker(data, selector)
    assert typed.rejected == 1 and typed.message
    assert len(typed.spans) == 2


def test_the_keep_filter_skips_spans_as_the_dict_walker_does() -> None:
    other = "ab" * 16
    data = body(span(), child(traceId=other, attributes=EVERY_KIND))
    typed = decode_json_typed(data, ATTRIBUTE_SELECTOR, keep=lambda trace_id: trace_id == TRACE_ID)
    assert typed == dict_walker(data, ATTRIBUTE_SELECTOR, lambda t: t == TRACE_ID)
    assert typed is not None and [span.trace_id for span in typed.spans] == [TRACE_ID]


def test_links_are_checked_and_read_as_the_dict_walker_reads_them() -> None:
    link = {"traceId": "ab" * 16, "spanId": "cd" * 8, "flags": 256, "traceState": "a=b"}
    data = body(span(links=[link, {"traceId": "ab" * 16, "attributes": []}]))
    typed = decode_json_typed(data, KEEP_ALL)
    assert typed is not None and len(typed.spans) == 1
    assert typed == dict_walker(data, KEEP_ALL)


@pytest.mark.parametrize(
    "document",
    [
        body(span(attributes=[attribute(None, {"intValue": 1})])),  # null: a typed string
        body(span(attributes=[attribute("s", {"stringValue": None})])),
        body(span(links=[{"traceId": "ab" * 16, "attributes": [attribute("k", {"intValue": 1})]}])),
        body(span(links=[{"traceId": "ab" * 15, "spanId": "cd" * 8}])),  # short: the reference
        body(span(attributes=[attribute("two", {"stringValue": "a", "intValue": 1})])),
        body(span(attributes=[attribute("null", {"intValue": None})])),
        body(span(attributes=[{"key": "k", "keyStrindex": 1}])),
        body(span(attributes=[attribute("x", {"stringValueStrindex": 1})])),
        body(span(attributes=[attribute("i", {"intValue": 1.0})])),
        body(span(startTimeUnixNano="1e3")),
        body(span(events=[None])),
        b'{"resourceSpans": [], "resourceLogs": []}',
        b'{"resourceSpans": [], "\xb8nknown": 1}',  # not UTF-8 in a key msgspec skips
        b'{"resourceSpans": [], "unknown": "\xff"}',
        b"[]",
        b"{",
    ],
)
def test_documents_it_is_not_sure_of_go_to_the_dict_walker(document: bytes) -> None:
    assert decode_json_typed(document, KEEP_ALL) is None
    # decode_json then decides as the dict walker (and its reference path) does.
    assert outcome(lambda: decode_json(document)) == outcome(
        lambda: dict_walker(document, KEEP_ALL)
    )


def outcome(decode: Callable[[], DecodedBatch]) -> DecodedBatch | str:
    try:
        return decode()
    except DecodeError as exc:
        return f"refused: {exc}"


def test_values_nested_past_the_walkers_depth_go_to_the_reference() -> None:
    deep: dict[str, Any] = {"intValue": 1}
    for _ in range(40):
        deep = {"arrayValue": {"values": [deep]}}
    data = body(span(attributes=[attribute("deep", deep)]))
    assert decode_json_typed(data, KEEP_ALL) is None
    (decoded,) = decode_json(data).spans
    assert isinstance(decoded.attributes["deep"], tuple)
