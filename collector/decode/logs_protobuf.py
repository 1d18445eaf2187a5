"""Binary OTLP logs (``LogsService/Export``, ``POST /v1/logs``) → ``LogRecord`` records.

upb parses the ``ExportLogsServiceRequest`` and the records are read from the parsed
message with the trace decoder's helpers (``decode.protobuf``), so attribute values
are converted and truncated exactly as span attributes are. The compiled walker is
for spans only: log records are far fewer than spans (one or a few per model call),
and most of their bytes are the message content that is kept anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import DecodeError as ProtobufDecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from collector.core.records import AttrValue, LogRecord
from collector.decode.common import KEEP_ALL, AttributeSelector, DecodeError
from collector.decode.log_records import (
    DecodedLogs,
    event_name,
    log_selector,
    record_time,
    trace_context,
)

# The trace decoder's upb helpers: one conversion of AnyValues and one truncation rule.
from collector.decode.protobuf import _resource, _selected, _Truncations, _value


def decode_logs_protobuf(
    data: bytes,
    selector: AttributeSelector = KEEP_ALL,
    *,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedLogs:
    """Decode a binary ``ExportLogsServiceRequest`` / ``LogsData``.

    Raises ``DecodeError`` if ``data`` is not a valid protobuf message. Records with a
    malformed id are rejected one by one; records without a trace id are counted in
    ``no_trace_id`` and left out. ``keep``, as in ``decode_protobuf``, is asked with
    each record's trace id; records it refuses are skipped unconverted, uncounted.
    """
    try:
        request = ExportLogsServiceRequest.FromString(data)
    except (ProtobufDecodeError, RuntimeError, ValueError) as exc:
        raise DecodeError(f"not a valid ExportLogsServiceRequest: {exc}") from exc
    return walk_parsed_logs(request, selector, keep)


def walk_parsed_logs(
    request: ExportLogsServiceRequest,
    selector: AttributeSelector = KEEP_ALL,
    keep: Callable[[bytes], bool] | None = None,
) -> DecodedLogs:
    """The records of an already parsed request."""
    wanted = log_selector(selector)
    cuts = _Truncations(selector.max_value_size)
    records: list[LogRecord] = []
    rejected = no_trace_id = 0
    message = ""
    for resource_logs in request.resource_logs:
        resource = _resource(resource_logs, cuts)
        for scope_logs in resource_logs.scope_logs:
            scope_name = scope_logs.scope.name
            for raw in scope_logs.log_records:
                context = trace_context(raw.trace_id, raw.span_id)
                if context is None:
                    no_trace_id += 1
                    continue
                if isinstance(context, str):
                    rejected += 1
                    message = message or context
                    continue
                trace_id, span_id = context
                if keep is not None and not keep(trace_id):
                    continue
                attributes = _selected(raw.attributes, wanted, cuts)
                records.append(
                    LogRecord(
                        trace_id,
                        span_id,
                        event_name(raw.event_name, attributes),
                        record_time(raw.time_unix_nano, raw.observed_time_unix_nano),
                        attributes,
                        _body(raw, cuts),
                        resource,
                        scope_name,
                    )
                )
    return DecodedLogs(records, rejected, message, no_trace_id, cuts.count)


def _body(raw: Any, cuts: _Truncations) -> AttrValue:
    return _value(raw.body, cuts) if raw.HasField("body") else None
