"""The first reading of an OTLP/JSON trace request: msgspec decodes straight into structs.

The walker of ``collector.decode.otlp_json`` reads a document msgspec parsed into
dicts and lists; most of its time went to building those dicts and looking fields
up in them, and to the cyclic garbage collector scanning them. Here msgspec decodes
the bytes into structs (``collector.decode.otlp_json_structs``: one per OTLP
message, GC-untracked), checking the JSON types of the hot fields (``key``,
``stringValue``, every message and list) in C; this module then reads them into
``Span`` records with the same checks as the dict walker, using the same
``json_fields`` functions for every other field.

It accepts a strict subset of what the dict walker accepts and reads it the same
way: anything else (a null where a message or string belongs, a field of an
unexpected JSON type, a document msgspec does not parse, a ``resourceLogs`` key,
anything the dict walker itself would be unsure of) raises ``Unsure`` and the caller
decodes the bytes again with the dict walker, which accepts, or hands over to the
reference path (``collector.decode.proto3_json``), which accepts or refuses naming
the field. Every known field of every message is declared (checked at import
against the protobuf descriptors), so none is silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import UNSET, UnsetType

from collector.core.records import AttrValue, Resource, Span, SpanEvent
from collector.decode import json_fields as f
from collector.decode.common import (
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    AttributeSelector,
    DecodedBatch,
    invalid_ids,
)
from collector.decode.json_fields import Unsure
from collector.decode.otlp_json_structs import (
    AnyValue,
    Event,
    KeyValue,
    Link,
    OtlpResource,
    OtlpSpan,
    Request,
    Scope,
)

# The dict walker's limits and names (collector.decode.otlp_json), repeated: importing
# that module here would be a cycle.
FAST_MAX_DEPTH = 64
_SPAN_ATTRIBUTE_DEPTH = 6  # request, resourceSpans, scopeSpans, span, keyValue, anyValue
_KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5,
}  # fmt: skip
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_UINT64_MAX = 2**64 - 1


class TypedWalker:
    """Turns one decoded ``Request`` into spans, or raises ``Unsure`` (also
    ``TypeError``, ``ValueError``, ``OverflowError``, ``binascii.Error`` from the
    field checks: the caller treats them alike)."""

    __slots__ = ("keep", "limit", "message", "rejected", "selector", "truncated", "wanted")

    def __init__(self, selector: AttributeSelector, keep: Callable[[bytes], bool] | None) -> None:
        self.selector = selector
        # The selector's verdict per key, remembered for the walk: keys repeat.
        self.wanted: dict[str, bool] | None = None if selector.keep_all else {}
        self.limit = selector.max_value_size
        self.keep = keep
        self.truncated = 0
        self.rejected = 0
        self.message = ""

    def batch(self, request: Request) -> DecodedBatch:
        if request.resource_logs is not UNSET:
            raise Unsure
        spans: list[Span] = []
        for resource_spans in request.resource_spans:
            f.text(resource_spans.schema_url)
            resource = self.resource(resource_spans.resource)
            for scope_spans in resource_spans.scope_spans:
                f.text(scope_spans.schema_url)
                scope_name = self.scope(scope_spans.scope)
                for raw in scope_spans.spans:
                    span = self.span(raw, resource, scope_name)
                    if span is not None:
                        spans.append(span)
        return DecodedBatch(spans, self.rejected, self.message, self.truncated)

    def resource(self, raw: OtlpResource | UnsetType) -> Resource:
        if raw is UNSET:
            return Resource("unknown_service", {})
        f.uint32(raw.dropped_attributes_count)
        f.empty_list(raw.entity_refs)
        attributes = self.attributes(raw.attributes, 5, True, True)
        service = attributes.get("service.name")
        return Resource(service if isinstance(service, str) else "unknown_service", attributes)

    def scope(self, raw: Scope | UnsetType) -> str:
        if raw is UNSET:
            return ""
        f.text(raw.version)
        f.uint32(raw.dropped_attributes_count)
        self.attributes(raw.attributes, 6, True, False)
        return f.text(raw.name)

    def span(self, raw: OtlpSpan, resource: Resource, scope_name: str) -> Span | None:
        """The span, or None if it is rejected (bad ids) or not kept; checked either way."""
        if raw.links:
            _check_links(raw.links)  # never read
        if raw.flags is not None:
            f.uint32(raw.flags)
        if raw.dropped_attributes_count is not None:
            f.uint32(raw.dropped_attributes_count)
        if raw.dropped_events_count is not None:
            f.uint32(raw.dropped_events_count)
        if raw.dropped_links_count is not None:
            f.uint32(raw.dropped_links_count)
        trace_id = _hex_id(raw.trace_id, TRACE_ID_BYTES)
        span_id = _hex_id(raw.span_id, SPAN_ID_BYTES)
        parent_id = _hex_id(raw.parent_span_id, SPAN_ID_BYTES)
        problem = invalid_ids(trace_id, span_id, parent_id)
        read = problem is None and (self.keep is None or self.keep(trace_id))
        status = raw.status
        if status is UNSET:
            code, message = 0, ""
        else:
            code, message = f.enum(status.code, _STATUS_NAMES), f.text(status.message)
        span = Span(
            trace_id,
            span_id,
            parent_id,
            raw.name,
            f.enum(raw.kind, _KIND_NAMES),
            _uint64(raw.start_time_unix_nano),
            _uint64(raw.end_time_unix_nano),
            code,
            message,
            # Roots keep every attribute: spec matching reads them.
            self.attributes(raw.attributes, _SPAN_ATTRIBUTE_DEPTH, not parent_id, read),
            self.events(raw.events, read) if raw.events else (),
            resource,
            scope_name,
        )
        if problem is not None:
            self.rejected += 1
            self.message = self.message or problem
        return span if read else None

    def events(self, events: list[Event], read: bool) -> tuple[SpanEvent, ...]:
        out = []
        for raw in events:
            f.uint32(raw.dropped_attributes_count)
            attributes = self.attributes(raw.attributes, 7, True, read)
            out.append(SpanEvent(f.text(raw.name), f.uint64(raw.time_unix_nano), attributes))
        return tuple(out)

    def attributes(
        self, kvs: list[KeyValue], depth: int, keep_all: bool, read: bool
    ) -> dict[str, AttrValue]:
        """The key/value list ``kvs`` whose values sit at message ``depth``; values not
        wanted (or all, without ``read``) are only checked, their truncation uncounted."""
        wanted = None if keep_all else self.wanted
        limit = self.limit
        out: dict[str, AttrValue] = {}
        for kv in kvs:
            key, raw = kv.key, kv.value
            if kv.key_strindex is not UNSET:
                raise Unsure
            # Inlined for the usual short string value: a call per attribute costs as
            # much as the rest of its reading.
            if (
                raw is not None
                and isinstance(text := raw.string_value, str)
                and len(text) <= limit
                and raw.int_value is UNSET
                and raw.bool_value is UNSET
                and raw.double_value is UNSET
                and raw.array_value is UNSET
                and raw.kvlist_value is UNSET
                and raw.bytes_value is UNSET
                and raw.string_value_strindex is UNSET
            ):
                if read and (
                    wanted is None
                    or wanted.get(key)
                    or (key not in wanted and _wants(wanted, key, self.selector))
                ):
                    out[key] = text
            elif read and (wanted is None or _wants(wanted, key, self.selector)):
                out[key] = self.value(raw, depth)
            elif raw is None or not _plain_string(raw):
                before = self.truncated
                self.value(raw, depth)
                self.truncated = before
        return out

    def value(self, raw: AnyValue | None, depth: int) -> AttrValue:
        """One ``AnyValue``: its one member, or None when it has none (or is absent)."""
        if depth > FAST_MAX_DEPTH:
            raise Unsure
        if raw is None:
            return None
        text = raw.string_value
        if isinstance(text, str):
            if not _plain_string(raw):
                raise Unsure  # two members: the reference path refuses them by name
            if len(text) > self.limit:
                self.truncated += 1
                return text[: self.limit]
            return text
        return self.other_value(raw, depth)

    def other_value(self, raw: AnyValue, depth: int) -> AttrValue:
        member = _other_member(raw)
        if member is None:
            return None
        name, item = member
        if name == "intValue":
            return f.int64(item)
        if name == "boolValue":
            return f.boolean(item)
        if name == "doubleValue":
            return f.double(item)
        if name == "bytesValue":
            return f.base64_bytes(item)
        if name == "arrayValue":
            return tuple([self.value(element, depth + 2) for element in item.values])
        return self.attributes(item.values, depth + 3, True, True)  # kvlist_value


def _check_links(links: list[Link]) -> None:
    """Links are checked, never read: ids of their size, no attributes (a link with
    some is left to the reference path, which validates them)."""
    for link in links:
        _hex_id(f.text(link.trace_id), TRACE_ID_BYTES)
        _hex_id(f.text(link.span_id), SPAN_ID_BYTES)
        f.text(link.trace_state)
        f.empty_list(link.attributes)
        f.uint32(link.dropped_attributes_count)
        f.uint32(link.flags)


def _hex_id(text: str, size: int) -> bytes:
    """``json_fields.hex_id`` for a value msgspec typed as a string."""
    if not text:
        return b""
    if len(text) == 2 * size and text.isascii():
        raw = bytes.fromhex(text)  # ValueError: the caller's Unsure
        if len(raw) == size:  # fromhex skips spaces
            return raw
    raise Unsure


def _uint64(value: Any) -> int:
    """``json_fields.uint64``, quicker for the usual string of digits (64-bit integers
    are strings in OTLP/JSON)."""
    if type(value) is str and value.isascii() and value.isdigit():
        number = int(value)
        if number <= _UINT64_MAX:
            return number
        raise Unsure
    return f.uint64(value)


def _wants(wanted: dict[str, bool], key: str, selector: AttributeSelector) -> bool:
    verdict = wanted.get(key)
    if verdict is None:
        verdict = wanted[key] = selector.wants(key)
    return verdict


def _plain_string(raw: AnyValue) -> bool:
    """Whether ``raw`` holds a string and no other member."""
    return (
        raw.string_value is not UNSET
        and raw.int_value is UNSET
        and raw.bool_value is UNSET
        and raw.double_value is UNSET
        and raw.array_value is UNSET
        and raw.kvlist_value is UNSET
        and raw.bytes_value is UNSET
        and raw.string_value_strindex is UNSET
    )


def _other_member(raw: AnyValue) -> tuple[str, Any] | None:
    """The one member of a non-string ``AnyValue`` and its value; None when empty.

    ``Unsure`` for two members, a null one, or ``stringValueStrindex``.
    """
    if raw.string_value_strindex is not UNSET:
        raise Unsure
    # Attribute by attribute (no getattr loop): most values are ints.
    found: tuple[str, Any] | None = None
    if (item := raw.int_value) is not UNSET:
        found = ("intValue", item)
    if (item := raw.double_value) is not UNSET:
        found = _one(found, "doubleValue", item)
    if (item := raw.array_value) is not UNSET:
        found = _one(found, "arrayValue", item)
    if (item := raw.bool_value) is not UNSET:
        found = _one(found, "boolValue", item)
    if (item := raw.kvlist_value) is not UNSET:
        found = _one(found, "kvlistValue", item)
    if (item := raw.bytes_value) is not UNSET:
        found = _one(found, "bytesValue", item)
    if found is not None and found[1] is None:
        raise Unsure
    return found


def _one(found: tuple[str, Any] | None, name: str, item: Any) -> tuple[str, Any]:
    if found is not None:
        raise Unsure
    return name, item
