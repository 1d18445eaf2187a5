"""OTLP/JSON logs (``POST /v1/logs``, the Collector file exporter) → ``LogRecord`` records.

The encoding rules are the traces' (``decode.otlp_json``): hex ids, integers as
strings or numbers, unknown fields ignored. Values, attributes and resources are
read by that module's walker, so both signals decode AnyValues identically and get
its fixes. Unlike a span, a log record with a malformed id is rejected alone (its
request is otherwise valid); a record without a trace id is dropped and counted.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

from collector.core.records import LogRecord, Resource
from collector.decode.common import (
    KEEP_ALL,
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    AttributeSelector,
    DecodeError,
)
from collector.decode.log_records import (
    DecodedLogs,
    event_name,
    log_selector,
    record_time,
    trace_context,
)

# The trace decoder's JSON reading: one conversion of AnyValues for both signals.
from collector.decode.otlp_json import _int, _loads, _Walker


class _Rejected(Exception):
    """A record that is well-formed JSON but has a malformed id."""


class _LogWalker:
    """Turns one parsed OTLP/JSON logs document into records; per-request counters."""

    def __init__(self, selector: AttributeSelector, keep: Callable[[bytes], bool] | None) -> None:
        self.values = _Walker(log_selector(selector))
        self.keep = keep
        self.records: list[LogRecord] = []
        self.rejected = 0
        self.message = ""
        self.no_trace_id = 0

    def record(self, raw: dict[str, Any], resource: Resource, scope_name: str) -> None:
        try:
            context = trace_context(
                _hex(raw.get("traceId"), TRACE_ID_BYTES), _hex(raw.get("spanId"), SPAN_ID_BYTES)
            )
        except _Rejected as exc:
            context = str(exc)
        if context is None:
            self.no_trace_id += 1
            return
        if isinstance(context, str):
            self.rejected += 1
            self.message = self.message or context
            return
        trace_id, span_id = context
        if self.keep is not None and not self.keep(trace_id):
            return
        attributes = self.values.attributes(raw.get("attributes"))
        name = raw.get("eventName") or ""
        if not isinstance(name, str):
            raise ValueError("eventName must be a string")
        self.records.append(
            LogRecord(
                trace_id,
                span_id,
                event_name(name, attributes),
                record_time(_int(raw.get("timeUnixNano")), _int(raw.get("observedTimeUnixNano"))),
                attributes,
                self.values.value(raw.get("body")),
                resource,
                scope_name,
            )
        )

    def result(self) -> DecodedLogs:
        return DecodedLogs(
            self.records, self.rejected, self.message, self.no_trace_id, self.values.truncated
        )


def _hex(value: Any, size: int) -> bytes:
    """Raw id bytes; ``b""`` when absent; ``_Rejected`` when not ``2 * size`` hex digits."""
    if value is None or value == "":
        return b""
    if not isinstance(value, str):
        raise ValueError("ids must be hex strings")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raw = b""
    if len(raw) != size:
        field = "trace_id" if size == TRACE_ID_BYTES else "span_id"
        raise _Rejected(f"log record with an invalid {field} (OTLP/JSON ids are hex)")
    return raw


def decode_logs_json_document(
    document: Any,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedLogs:
    """Decode an already-parsed OTLP/JSON ``ExportLogsServiceRequest`` / ``LogsData``.

    Raises ``DecodeError`` naming the JSON path of the first malformed element.
    ``keep`` filters records by trace id, as in ``decode_logs_protobuf``.
    """
    if not isinstance(document, dict):
        raise DecodeError("the top level must be a JSON object with resourceLogs")
    walker = _LogWalker(selector, keep)
    path = "resourceLogs"
    try:
        for i, resource_logs in enumerate(document.get("resourceLogs") or ()):
            path = f"resourceLogs[{i}]"
            resource = walker.values.resource(resource_logs.get("resource"))
            for j, scope_logs in enumerate(resource_logs.get("scopeLogs") or ()):
                scope_name = (scope_logs.get("scope") or {}).get("name", "")
                for k, raw in enumerate(scope_logs.get("logRecords") or ()):
                    path = f"resourceLogs[{i}].scopeLogs[{j}].logRecords[{k}]"
                    walker.record(raw, resource, scope_name)
    except (TypeError, ValueError, KeyError, AttributeError, binascii.Error) as exc:
        raise DecodeError(f"{path}: {exc}") from exc
    return walker.result()


def decode_logs_json(
    data: bytes | str,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedLogs:
    """Decode an OTLP/JSON logs request body.

    Raises ``DecodeError`` for invalid JSON or a malformed document (the message
    names the JSON path).
    """
    return decode_logs_json_document(parse_json(data), selector, keep=keep)


def parse_json(data: bytes | str) -> Any:
    """The parsed document, as ``decode.otlp_json`` parses it; ``DecodeError`` if invalid."""
    try:
        return _loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(f"not valid JSON: {exc}") from exc
