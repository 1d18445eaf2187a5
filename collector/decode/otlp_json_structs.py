"""The structs msgspec decodes an OTLP/JSON trace request into (``parse_request``).

One ``msgspec.Struct`` per OTLP message, GC-untracked, every field of its protobuf
descriptor declared (checked at import: a field the protocol adds cannot be ignored
silently). Read by ``collector.decode.otlp_json_typed`` (docs/adr/0021-replay-throughput.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from collector.decode.json_fields import Unsure


# Scalar fields read rarely are ``Any`` (null included) and checked by the same
# ``json_fields`` function as in the dict walker; UNSET means absent.
class AnyValue(Struct, gc=False, rename="camel"):
    string_value: str | UnsetType = UNSET
    bool_value: Any = UNSET
    int_value: Any = UNSET
    double_value: Any = UNSET
    array_value: ArrayValue | UnsetType = UNSET
    kvlist_value: KeyValueList | UnsetType = UNSET
    bytes_value: Any = UNSET
    string_value_strindex: Any = UNSET


class KeyValue(Struct, gc=False, rename="camel"):
    key: str = ""
    value: AnyValue | None = None
    key_strindex: Any = UNSET


class ArrayValue(Struct, gc=False, rename="camel"):
    values: list[AnyValue] = []


class KeyValueList(Struct, gc=False, rename="camel"):
    values: list[KeyValue] = []


class Status(Struct, gc=False, rename="camel"):
    message: Any = None
    code: Any = None


class Event(Struct, gc=False, rename="camel"):
    time_unix_nano: Any = None
    name: Any = None
    attributes: list[KeyValue] = []
    dropped_attributes_count: Any = None


class Link(Struct, gc=False, rename="camel"):
    """Links are checked, never read (``otlp_json_typed``): one with attributes takes
    the dict walker's road (and the reference path's, which validates them)."""

    trace_id: Any = None
    span_id: Any = None
    trace_state: Any = None
    attributes: Any = None
    dropped_attributes_count: Any = None
    flags: Any = None


class OtlpSpan(Struct, gc=False, rename="camel"):
    trace_id: str = ""  # hot strings typed: checked by msgspec, a null takes the dict road
    span_id: str = ""
    trace_state: str = ""
    parent_span_id: str = ""
    flags: Any = None
    name: str = ""
    kind: Any = None
    start_time_unix_nano: Any = None
    end_time_unix_nano: Any = None
    attributes: list[KeyValue] = []
    dropped_attributes_count: Any = None
    events: list[Event] = []
    dropped_events_count: Any = None
    links: list[Link] = []
    dropped_links_count: Any = None
    status: Status | UnsetType = UNSET


class Scope(Struct, gc=False, rename="camel"):
    name: Any = None
    version: Any = None
    attributes: list[KeyValue] = []
    dropped_attributes_count: Any = None


class OtlpResource(Struct, gc=False, rename="camel"):
    attributes: list[KeyValue] = []
    dropped_attributes_count: Any = None
    entity_refs: Any = None


class ScopeSpans(Struct, gc=False, rename="camel"):
    scope: Scope | UnsetType = UNSET
    spans: list[OtlpSpan] = []
    schema_url: Any = None


class ResourceSpans(Struct, gc=False, rename="camel"):
    resource: OtlpResource | UnsetType = UNSET
    scope_spans: list[ScopeSpans] = []
    schema_url: Any = None


class Request(Struct, gc=False, rename="camel"):
    resource_spans: list[ResourceSpans] = []
    resource_logs: Any = UNSET  # a logs document: not this reader's


_DECLARED: dict[type[Struct], Any] = {
    Request: ExportTraceServiceRequest,
    ResourceSpans: trace_pb2.ResourceSpans,
    ScopeSpans: trace_pb2.ScopeSpans,
    OtlpSpan: trace_pb2.Span,
    Event: trace_pb2.Span.Event,
    Link: trace_pb2.Span.Link,
    Status: trace_pb2.Status,
    KeyValue: common_pb2.KeyValue,
    AnyValue: common_pb2.AnyValue,
    ArrayValue: common_pb2.ArrayValue,
    KeyValueList: common_pb2.KeyValueList,
    Scope: common_pb2.InstrumentationScope,
    OtlpResource: resource_pb2.Resource,
}
for _struct, _message in _DECLARED.items():
    _known = {field.json_name for field in _message.DESCRIPTOR.fields}
    _declared = {field.encode_name for field in msgspec.structs.fields(_struct)}
    if not _known <= _declared:
        raise RuntimeError(
            f"collector.decode.otlp_json_typed: {_struct.__name__} lacks the fields "
            f"{sorted(_known - _declared)} of {_message.DESCRIPTOR.name}"
        )

_decode_request: Callable[[bytes | str], Request] = msgspec.json.Decoder(Request).decode


def parse_request(data: bytes | str) -> Request:
    """``data`` decoded into the structs; ``Unsure`` for anything msgspec refuses, and
    for text that is not valid UTF-8 (msgspec skips unknown keys and their values
    without checking it; the reference path refuses it)."""
    if not data.isascii():
        try:
            data.decode("utf-8") if isinstance(data, bytes) else data.encode("utf-8")
        except UnicodeError:
            raise Unsure from None
    try:
        return _decode_request(data)
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError
        raise Unsure from None
