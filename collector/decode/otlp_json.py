"""OTLP/JSON (``application/json``, the Collector file exporter) → ``Span`` records.

OTLP/JSON is the proto3 JSON mapping with deviations (the opentelemetry-proto
repository's specification): ids are hex strings, enums are integers, 64-bit
integers may be strings or numbers, unknown fields are ignored. The document is
walked directly into ``Span`` records; nothing is converted twice.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable
from typing import Any

import msgspec

from collector.core.records import AttrValue, Resource, Span, SpanEvent
from collector.decode.common import (
    KEEP_ALL,
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    AttributeSelector,
    DecodedBatch,
    DecodeError,
)

_ZERO_TRACE_ID = bytes(TRACE_ID_BYTES)
_ZERO_SPAN_ID = bytes(SPAN_ID_BYTES)
_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
# Enum names are not valid OTLP/JSON, but some serializers (protobuf's
# MessageToJson) write them; accepting them costs nothing.
_KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5,
}  # fmt: skip
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_fast_loads: Callable[[bytes | str], Any] = msgspec.json.Decoder().decode


class _SpanRejected(Exception):
    """A span that is well-formed JSON but semantically invalid (e.g. all-zero id)."""


class _SpanSkipped(Exception):
    """A valid span that the caller's ``keep`` filter does not want."""


def _hex_id(value: Any, size: int, field: str, *, optional: bool = False) -> bytes:
    if value in (None, "") and optional:
        return b""
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a hex string")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raw = b""
    if len(raw) != size:
        raise ValueError(
            f"{field} {value[:48]!r} is not {size * 2} hex digits "
            "(OTLP/JSON encodes ids as hex, not base64)"
        )
    return raw


def _int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    return int(value) if value is not None else 0


def _enum(value: Any, names: dict[str, int]) -> int:
    if isinstance(value, str) and value in names:
        return names[value]
    return _int(value)


class _Walker:
    """Turns one parsed OTLP/JSON document into spans; holds per-request counters."""

    def __init__(
        self, selector: AttributeSelector, keep: Callable[[bytes], bool] | None = None
    ) -> None:
        self.selector = selector
        self.keep = keep
        self.truncated = 0

    def value(self, value: Any) -> AttrValue:
        if not isinstance(value, dict) or not value:
            return None
        if "stringValue" in value:
            text = value["stringValue"]
            if not isinstance(text, str):
                raise ValueError("stringValue must be a string")
            if len(text) > self.selector.max_value_size:
                self.truncated += 1
                return text[: self.selector.max_value_size]
            return text
        if "intValue" in value:
            return _int(value["intValue"])
        if "boolValue" in value:
            return bool(value["boolValue"])
        if "doubleValue" in value:
            number = value["doubleValue"]
            return _SPECIAL_DOUBLES[number] if isinstance(number, str) else float(number)
        if "arrayValue" in value:
            return tuple(self.value(item) for item in value["arrayValue"].get("values") or ())
        if "kvlistValue" in value:
            return self.attributes(value["kvlistValue"].get("values"), keep_all=True)
        if "bytesValue" in value:
            return base64.b64decode(value["bytesValue"], validate=True)
        return None

    def attributes(self, kvs: Any, *, keep_all: bool = False) -> dict[str, AttrValue]:
        if not kvs:
            return {}
        wants = None if keep_all or self.selector.keep_all else self.selector.wants
        out: dict[str, AttrValue] = {}
        for kv in kvs:
            key = kv["key"]
            if wants is None or wants(key):
                out[key] = self.value(kv.get("value"))
        return out

    def events(self, events: Any) -> tuple[SpanEvent, ...]:
        return tuple(
            SpanEvent(
                event.get("name", ""),
                _int(event.get("timeUnixNano")),
                self.attributes(event.get("attributes"), keep_all=True),
            )
            for event in events
        )

    def span(self, raw: dict[str, Any], resource: Resource, scope_name: str) -> Span:
        trace_id = _hex_id(raw.get("traceId"), TRACE_ID_BYTES, "traceId")
        span_id = _hex_id(raw.get("spanId"), SPAN_ID_BYTES, "spanId")
        parent_id = _hex_id(raw.get("parentSpanId"), SPAN_ID_BYTES, "parentSpanId", optional=True)
        if trace_id == _ZERO_TRACE_ID or span_id == _ZERO_SPAN_ID:
            raise _SpanRejected("span with an all-zero trace_id or span_id")
        if self.keep is not None and not self.keep(trace_id):
            raise _SpanSkipped
        status = raw.get("status") or {}
        events = raw.get("events")
        return Span(
            trace_id,
            span_id,
            parent_id,
            raw.get("name", ""),
            _enum(raw.get("kind"), _KIND_NAMES),
            _int(raw.get("startTimeUnixNano")),
            _int(raw.get("endTimeUnixNano")),
            _enum(status.get("code"), _STATUS_NAMES),
            status.get("message", ""),
            # Roots keep every attribute: spec matching reads them.
            self.attributes(raw.get("attributes"), keep_all=not parent_id),
            self.events(events) if events else (),
            resource,
            scope_name,
        )

    def resource(self, raw: Any) -> Resource:
        attributes = self.attributes((raw or {}).get("attributes"), keep_all=True)
        service = attributes.get("service.name")
        return Resource(service if isinstance(service, str) else "unknown_service", attributes)


def decode_json_document(
    document: Any,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedBatch:
    """Decode an already-parsed OTLP/JSON ``ExportTraceServiceRequest`` / ``TracesData``.

    Raises ``DecodeError`` naming the JSON path of the first malformed element.
    ``keep`` filters spans by trace id, as in ``decode_protobuf``.
    """
    if not isinstance(document, dict):
        raise DecodeError("the top level must be a JSON object with resourceSpans")
    walker = _Walker(selector, keep)
    spans: list[Span] = []
    rejected = 0
    message = ""
    path = "resourceSpans"
    try:
        for i, resource_spans in enumerate(document.get("resourceSpans") or ()):
            path = f"resourceSpans[{i}]"
            resource = walker.resource(resource_spans.get("resource"))
            for j, scope_spans in enumerate(resource_spans.get("scopeSpans") or ()):
                scope_name = (scope_spans.get("scope") or {}).get("name", "")
                for k, raw in enumerate(scope_spans.get("spans") or ()):
                    path = f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
                    try:
                        span = walker.span(raw, resource, scope_name)
                    except _SpanRejected as exc:
                        rejected += 1
                        message = message or str(exc)
                    except _SpanSkipped:
                        pass
                    else:
                        spans.append(span)
    except (TypeError, ValueError, KeyError, AttributeError, binascii.Error) as exc:
        raise DecodeError(f"{path}: {exc}") from exc
    return DecodedBatch(spans, rejected, message, walker.truncated)


def decode_json(
    data: bytes | str,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedBatch:
    """Decode an OTLP/JSON request body.

    Raises ``DecodeError`` for invalid JSON or a malformed document (the message
    names the JSON path). Spans with all-zero ids are rejected individually.
    """
    try:
        document = _loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(f"not valid JSON: {exc}") from exc
    return decode_json_document(document, selector, keep=keep)


def _loads(data: bytes | str) -> Any:
    """``json.loads(data)``: by msgspec (1.5x faster on whole request bodies, the
    same values wherever it accepts the text), else by the standard library, which
    decides what msgspec refuses (NaN, UTF-16 bodies, lone surrogates) and words
    the error (docs/adr/0007-hot-path.md)."""
    try:
        return _fast_loads(data)
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        return json.loads(data)
