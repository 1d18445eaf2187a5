"""OTLP/JSON (``application/json``, the Collector file exporter) → ``Span`` records.

OTLP/JSON is the proto3 JSON mapping with deviations (the opentelemetry-proto
repository's specification): ids are hex strings, enums are integers, 64-bit
integers may be strings or numbers, unknown fields are ignored. What is valid is
what protobuf's own JSON parser accepts, with those deviations
(``collector.decode.proto3_json``, the reference reading).

Four paths give the same records (docs/adr/0016-hardening.md). The compiled walk
(``_wire.walk_json``, docs/adr/0024-json-walker-and-collector.md) reads the usual
documents' bytes straight into records; what it leaves alone, and everything in a
pure install, goes to the typed walk (``collector.decode.otlp_json_typed``,
docs/adr/0021-replay-throughput.md), where msgspec decodes the bytes into typed
structs; what that is not sure of is parsed again
into dicts for the second, which walks a document msgspec parsed (so every string
is valid Unicode and every number finite) directly into ``Span`` records, checking
the type of every known field it meets; whatever it cannot vouch for (a wrong type,
an integer as a float, a null in a oneof, links with attributes, deep nesting, a
document only the ``json`` module parses) goes to the reference path, which accepts it
or raises ``DecodeError`` naming the field. Links are checked by every path, read by
none.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from collector.core.records import AttrValue, Resource, Span, SpanEvent
from collector.decode import json_fields as f
from collector.decode.common import (
    KEEP_ALL,
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    AttributeSelector,
    DecodedBatch,
    DecodeError,
    invalid_ids,
)
from collector.decode.json_fields import Unsure
from collector.decode.otlp_json_structs import parse_request
from collector.decode.otlp_json_typed import TypedWalker
from collector.decode.proto3_json import parse_message
from collector.decode.protobuf import _wire, compiled_walk, walk_parsed

_fast_loads: Callable[[bytes | str], Any] = msgspec.json.Decoder().decode
# Message depth as json_format counts it (the request is 1); deeper values are left
# to the reference path, which refuses past its limit of 100.
_FAST_MAX_DEPTH = 64
_SPAN_ATTRIBUTE_DEPTH = 6  # request, resourceSpans, scopeSpans, span, keyValue, anyValue
_KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5,
}  # fmt: skip
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_MISSING = object()
UNSURE = (Unsure, TypeError, ValueError, AttributeError, OverflowError, binascii.Error)
"""What the fast readers raise for a document they do not vouch for."""

_REQUEST = f.Shape(ExportTraceServiceRequest, {"resourceSpans"})
_RESOURCE_SPANS = f.Shape(
    trace_pb2.ResourceSpans, {"resource", "scopeSpans"}, {"schemaUrl": f.text}
)
_SCOPE_SPANS = f.Shape(trace_pb2.ScopeSpans, {"scope", "spans"}, {"schemaUrl": f.text})
_LINK = f.Shape(
    trace_pb2.Span.Link,
    set(),
    {
        "traceId": lambda value: f.hex_id(value, TRACE_ID_BYTES),
        "spanId": lambda value: f.hex_id(value, SPAN_ID_BYTES),
        "traceState": f.text,
        "attributes": f.empty_list,  # a link with some takes the reference path
        "droppedAttributesCount": f.uint32,
        "flags": f.uint32,
    },
)


def _check_links(value: Any) -> None:
    for link in f.messages(value):
        _LINK.check(link)


_SPAN_REST: dict[str, Callable[[Any], object]] = {
    "traceState": f.text,
    "flags": f.uint32,
    "droppedAttributesCount": f.uint32,
    "droppedEventsCount": f.uint32,
    "droppedLinksCount": f.uint32,
    "links": _check_links,  # checked, never read
}
_SPAN = f.Shape(
    trace_pb2.Span,
    {"traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano",
     "endTimeUnixNano", "attributes", "events", "status"},
    _SPAN_REST,
)  # fmt: skip
_EVENT = f.Shape(
    trace_pb2.Span.Event,
    {"timeUnixNano", "name", "attributes"},
    {"droppedAttributesCount": f.uint32},
)
_STATUS = f.Shape(trace_pb2.Status, {"message", "code"})
_KEY_VALUE = f.Shape(common_pb2.KeyValue, {"key", "value"})
_VALUES = f.Shape(common_pb2.ArrayValue, {"values"})  # ArrayValue and KeyValueList alike


class _Walker:
    """Turns one msgspec-parsed OTLP/JSON document into spans, or raises ``Unsure``."""

    def __init__(self, selector: AttributeSelector, keep: Callable[[bytes], bool] | None) -> None:
        self.selector = selector
        self.keep = keep
        self.truncated = 0
        self.rejected = 0
        self.message = ""

    def request(self, document: dict[str, Any]) -> list[Span]:
        _REQUEST.check(document)
        spans: list[Span] = []
        for resource_spans in f.messages(document.get("resourceSpans")):
            _RESOURCE_SPANS.check(resource_spans)
            resource = self.resource(f.message(resource_spans.get("resource")))
            for scope_spans in f.messages(resource_spans.get("scopeSpans")):
                _SCOPE_SPANS.check(scope_spans)
                scope_name = self.scope(f.message(scope_spans.get("scope")))
                for raw in f.messages(scope_spans.get("spans")):
                    span = self.span(raw, resource, scope_name)
                    if span is not None:
                        spans.append(span)
        return spans

    def resource(self, raw: Mapping[str, Any]) -> Resource:
        f.RESOURCE.check(raw)
        attributes = self.attributes(raw.get("attributes"), 5, keep_all=True)
        service = attributes.get("service.name")
        return Resource(service if isinstance(service, str) else "unknown_service", attributes)

    def scope(self, raw: Mapping[str, Any]) -> str:
        f.SCOPE.check(raw)
        self.attributes(raw.get("attributes"), 6, keep_all=True, read=False)
        return f.text(raw.get("name"))

    def span(self, raw: Mapping[str, Any], resource: Resource, scope_name: str) -> Span | None:
        """The span, or None if it is rejected (bad ids) or not kept; checked either way:
        one wrong field refuses the whole request, as json_format would."""
        _SPAN.check(raw)
        trace_id = f.hex_id(raw.get("traceId"), TRACE_ID_BYTES)
        span_id = f.hex_id(raw.get("spanId"), SPAN_ID_BYTES)
        parent_id = f.hex_id(raw.get("parentSpanId"), SPAN_ID_BYTES)
        problem = invalid_ids(trace_id, span_id, parent_id)
        read = problem is None and (self.keep is None or self.keep(trace_id))
        status = f.message(raw.get("status"))
        _STATUS.check(status)
        span = Span(
            trace_id,
            span_id,
            parent_id,
            f.text(raw.get("name")),
            f.enum(raw.get("kind"), _KIND_NAMES),
            f.uint64(raw.get("startTimeUnixNano")),
            f.uint64(raw.get("endTimeUnixNano")),
            f.enum(status.get("code"), _STATUS_NAMES),
            f.text(status.get("message")),
            # Roots keep every attribute: spec matching reads them.
            self.attributes(
                raw.get("attributes"), _SPAN_ATTRIBUTE_DEPTH, keep_all=not parent_id, read=read
            ),
            self.events(f.messages(raw.get("events")), read),
            resource,
            scope_name,
        )
        if problem is not None:
            self.rejected += 1
            self.message = self.message or problem
        return span if read else None

    def events(self, events: list[dict[str, Any]], read: bool) -> tuple[SpanEvent, ...]:
        if not events:
            return ()
        out = []
        for raw in events:
            _EVENT.check(raw)
            attributes = self.attributes(raw.get("attributes"), 7, keep_all=True, read=read)
            name, time = f.text(raw.get("name")), f.uint64(raw.get("timeUnixNano"))
            out.append(SpanEvent(name, time, attributes))
        return tuple(out)

    def attributes(
        self, kvs: Any, depth: int, *, keep_all: bool, read: bool = True
    ) -> dict[str, AttrValue]:
        """The key/value list ``kvs`` whose values sit at message ``depth``.

        Values the selector does not want (or all, without ``read``) are only checked
        (their truncation is not counted).
        """
        wants = None if keep_all or self.selector.keep_all else self.selector.wants
        out: dict[str, AttrValue] = {}
        for kv in f.messages(kvs):
            # Inlined for the usual {"key": "…", "value": {…}}: a call per attribute
            # costs as much as the rest of its reading.
            key = kv.get("key")
            raw = kv.get("value", _MISSING)
            if type(key) is not str or len(kv) != 2 or raw is _MISSING:
                _KEY_VALUE.check(kv)
                key, raw = f.text(key), kv.get("value")
            if read and (wants is None or wants(key)):
                out[key] = self.value(raw, depth)
            elif not (type(raw) is dict and len(raw) == 1 and type(raw.get("stringValue")) is str):
                before = self.truncated
                self.value(raw, depth)
                self.truncated = before
        return out

    def value(self, raw: Any, depth: int) -> AttrValue:
        """One ``AnyValue``; ``Unsure`` for anything but exactly one non-null member."""
        if depth > _FAST_MAX_DEPTH:
            raise Unsure
        if type(raw) is dict and len(raw) == 1:
            ((member, item),) = raw.items()
            if item is None:
                raise Unsure
        else:
            member, item = f.one_member(raw)
        if member == "stringValue":
            if type(item) is not str:
                raise Unsure
            limit = self.selector.max_value_size
            if len(item) > limit:
                self.truncated += 1
                return item[:limit]
            return item
        if member == "intValue":
            return f.int64(item)
        if member == "boolValue":
            return f.boolean(item)
        return self.other_value(member, item, depth)

    def other_value(self, member: str | None, item: Any, depth: int) -> AttrValue:
        """The rarer ``AnyValue`` members (``value`` reads strings, ints, booleans)."""
        if member == "doubleValue":
            return f.double(item)
        if member == "arrayValue":
            values = f.message(item)
            _VALUES.check(values)
            items = f.messages(values.get("values"))
            return tuple([self.value(element, depth + 2) for element in items])
        if member == "kvlistValue":
            values = f.message(item)
            _VALUES.check(values)
            return self.attributes(values.get("values"), depth + 3, keep_all=True)
        if member == "bytesValue":
            return f.base64_bytes(item)
        if member in f.ANY_KNOWN:
            raise Unsure  # a member the walker does not read (stringValueStrindex)
        return None  # an empty AnyValue, or only unknown fields


def decode_json_document(
    document: Any,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedBatch:
    """Decode an already-parsed OTLP/JSON ``ExportTraceServiceRequest`` / ``TracesData``.

    ``document`` must come from ``msgspec`` or be plain JSON values; it may be
    changed. Raises ``DecodeError`` naming the first malformed field. ``keep``
    filters spans by trace id, as in ``decode_protobuf``.
    """
    if not isinstance(document, dict):
        raise DecodeError("the top level must be a JSON object with resourceSpans")
    walker = _Walker(selector, keep)
    try:
        spans = walker.request(document)
    except UNSURE:
        return _reference(document, selector, keep)
    return DecodedBatch(spans, walker.rejected, walker.message, walker.truncated)


def decode_json(
    data: bytes | str,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedBatch:
    """Decode an OTLP/JSON request body.

    Raises ``DecodeError`` for invalid JSON or a document protobuf's JSON mapping
    refuses (the message names the field). Spans with empty or all-zero ids are
    rejected individually.
    """
    typed = decode_json_typed(data, selector, keep=keep)
    if typed is not None:
        return typed
    try:
        document = _fast_loads(data)
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        # What msgspec refuses (NaN, 1e400, lone surrogates, UTF-16 bodies, a BOM) the
        # json module may parse; the reference path then judges every value.
        return _reference(_slow_loads(data), selector, keep)
    return decode_json_document(document, selector, keep=keep)


def decode_json_typed(
    data: bytes | str,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedBatch | None:
    """``decode_json``'s fast reading of ``data``, or None when it is not sure of the
    document (then ``decode_json`` decides); never raises ``DecodeError``.

    The compiled walk (``_wire.walk_json``) reads the usual documents; what it leaves
    alone, and everything without it, msgspec and ``TypedWalker`` read. ``keep`` must
    be a pure function: it may be asked twice about a span (once by each walk).
    """
    if _wire is not None and not isinstance(data, str):
        walked = compiled_walk(_wire.walk_json, data, selector, keep)
        if walked is not None:
            return walked  # (else a shape the compiled walk leaves to the typed one)
    try:
        return TypedWalker(selector, keep).batch(parse_request(data))
    except UNSURE:
        return None


def _slow_loads(data: bytes | str) -> Any:
    try:
        return json.loads(data)
    except RecursionError:
        raise DecodeError("not valid JSON: nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(f"not valid JSON: {exc}") from exc


def _reference(
    document: Any, selector: AttributeSelector, keep: Callable[[bytes], bool] | None
) -> DecodedBatch:
    if not isinstance(document, dict):
        raise DecodeError("the top level must be a JSON object with resourceSpans")
    request = parse_message(document, ExportTraceServiceRequest)
    return walk_parsed(request, selector, keep)
