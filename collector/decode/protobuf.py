"""Binary OTLP (``application/x-protobuf``, gRPC) → ``Span`` records.

The compiled walker ``collector.decode._wire`` (the normal install) validates each
payload as upb would and reads the records from the wire bytes; a payload it is not
sure of (invalid ones among them), and every payload when it is not built, is parsed
by upb, which refuses it or yields a message read through upb's Python objects. Both
give the same records and the same verdicts (``tests/unit/decode/test_decode_native.py``,
the decoder fuzz test); the walker is ~6x faster (docs/adr/0011-compiled-hot-path.md),
and parsing once instead of by upb first saves a fifth of decoding
(docs/adr/0021-replay-throughput.md). Either way each attribute value the selector
does not want is never turned into a Python object.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from google.protobuf.message import DecodeError as ProtobufDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.core.records import AttrValue, Resource, Span, SpanEvent
from collector.decode.common import (
    KEEP_ALL,
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    AttributeSelector,
    DecodedBatch,
    DecodeError,
)
from collector.decode.common import invalid_ids as _invalid_ids

_wire: ModuleType | None
try:
    from collector.decode import _wire  # compiled at install (setup.py)
except ImportError:  # built without a C compiler: the upb walk does everything
    _wire = None

NATIVE_DECODER: bool = _wire is not None
"""True when the compiled walker is in use (``evald_build_info{decoder}``)."""


def compiled_walk(
    walk: Callable[..., tuple[list[Span], int, str, int]],
    data: Any,
    selector: AttributeSelector,
    keep: Callable[[bytes], bool] | None,
) -> DecodedBatch | None:
    """The batch of ``walk`` (``_wire.walk``, binary, or ``_wire.walk_json``) over
    ``data`` with ``selector``'s settings, or None for a payload the walk leaves to the
    reference reading (``Unusual``, text that is not UTF-8: valid or not, see _wire.pyx)."""
    assert _wire is not None  # callers ask only when the walker is built
    try:
        spans, rejected, message, truncated = walk(
            data,
            selector.keep_all,
            selector.keys,
            selector.prefixes,
            min(selector.max_value_size, sys.maxsize),  # a C ssize_t in the walker
            keep,
            selector.suffixes,
        )
    except (_wire.Unusual, UnicodeDecodeError):
        return None
    return DecodedBatch(spans, rejected, message, truncated)


_ZERO_TRACE_ID = bytes(TRACE_ID_BYTES)
_ZERO_SPAN_ID = bytes(SPAN_ID_BYTES)


class _Truncations:
    """Counts values cut to the size limit while one request is decoded."""

    __slots__ = ("count", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0

    def cut(self, text: str) -> str:
        if len(text) <= self.limit:
            return text
        self.count += 1
        return text[: self.limit]


def _value(value: Any, cuts: _Truncations) -> AttrValue:
    text: str = value.string_value
    if text:  # non-empty: the oneof holds a string (other members read as "")
        return cuts.cut(text)
    which = value.WhichOneof("value")
    if which == "string_value":
        return text
    if which == "int_value":
        return int(value.int_value)
    if which == "bool_value":
        return bool(value.bool_value)
    if which == "double_value":
        return float(value.double_value)
    if which == "array_value":
        return tuple(_value(item, cuts) for item in value.array_value.values)
    if which == "kvlist_value":
        return {kv.key: _value(kv.value, cuts) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return bytes(value.bytes_value)
    return None  # empty AnyValue, or the profiles-only string_value_strindex


def _selected(kvs: Any, selector: AttributeSelector, cuts: _Truncations) -> dict[str, AttrValue]:
    # The selector test and the string case are inlined: a function call per
    # attribute costs more than either, and most values are short strings.
    keep_all, keys, prefixes = selector.keep_all, selector.keys, selector.prefixes
    suffixes = selector.suffixes
    limit = cuts.limit
    out: dict[str, AttrValue] = {}
    for kv in kvs:
        key = kv.key
        if keep_all or key in keys or key.startswith(prefixes) or key.endswith(suffixes):
            value = kv.value
            text = value.string_value  # "" unless the oneof holds a non-empty string
            out[key] = text if text and len(text) <= limit else _value(value, cuts)
    return out


def _events(events: Any, cuts: _Truncations) -> tuple[SpanEvent, ...]:
    # Event attributes are few and their keys are not namespaced (Strands puts
    # tool arguments under `content`), so they are always kept whole.
    return tuple(
        SpanEvent(event.name, event.time_unix_nano, _selected(event.attributes, KEEP_ALL, cuts))
        for event in events
    )


def _resource(resource_spans: Any, cuts: _Truncations) -> Resource:
    attributes = _selected(resource_spans.resource.attributes, KEEP_ALL, cuts)
    service = attributes.get("service.name")
    return Resource(service if isinstance(service, str) else "unknown_service", attributes)


def decode_protobuf(
    data: bytes,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedBatch:
    """Decode a binary ``ExportTraceServiceRequest`` / ``TracesData``.

    Raises ``DecodeError`` if ``data`` is not a valid protobuf message. Spans with
    empty or malformed ids are rejected individually and counted in the batch.
    ``keep``, if given, is asked with each valid span's trace id; spans it refuses
    are skipped before their attributes are converted, and not counted (replay
    workers each take a share of the traces this way). It must be a pure function:
    it may be asked twice about a span (when the walker hands a payload back to upb).
    """
    if _wire is not None:
        walked = compiled_walk(_wire.walk, data, selector, keep)
        if walked is not None:
            return walked
    try:
        request = ExportTraceServiceRequest.FromString(data)
    except (ProtobufDecodeError, RuntimeError, ValueError) as exc:
        raise DecodeError(f"not a valid ExportTraceServiceRequest: {exc}") from exc
    return walk_parsed(request, selector, keep)


def walk_parsed(
    request: ExportTraceServiceRequest,
    selector: AttributeSelector = KEEP_ALL,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedBatch:
    """The records of an already parsed request, read through upb's Python objects.

    The reference behaviour the compiled walker reproduces.
    """
    cuts = _Truncations(selector.max_value_size)
    spans: list[Span] = []
    rejected = 0
    message = ""
    for resource_spans in request.resource_spans:
        resource = _resource(resource_spans, cuts)
        for scope_spans in resource_spans.scope_spans:
            scope_name = scope_spans.scope.name
            for span in scope_spans.spans:
                trace_id, span_id, parent_id = span.trace_id, span.span_id, span.parent_span_id
                problem = _invalid_ids(trace_id, span_id, parent_id)
                if problem is not None:
                    rejected += 1
                    message = message or problem
                    continue
                if keep is not None and not keep(trace_id):
                    continue
                status = span.status
                spans.append(
                    Span(
                        trace_id,
                        span_id,
                        parent_id,
                        span.name,
                        span.kind,
                        span.start_time_unix_nano,
                        span.end_time_unix_nano,
                        status.code,
                        status.message,
                        # Roots keep every attribute: spec matching reads them.
                        _selected(span.attributes, selector if parent_id else KEEP_ALL, cuts),
                        _events(span.events, cuts) if span.events else (),
                        resource,
                        scope_name,
                    )
                )
    return DecodedBatch(spans, rejected, message, cuts.count)
