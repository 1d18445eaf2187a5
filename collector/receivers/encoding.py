"""The receivers' answers on the wire: ``ExportTraceServiceResponse`` /
``ExportLogsServiceResponse`` and ``google.rpc.Status``.

Both come in binary protobuf and in OTLP/JSON (proto3 JSON mapping: lowerCamelCase
keys, 64-bit integers as decimal strings, zero values omitted). ``partial_success``
is left unset on full success, as the OTLP specification requires.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceResponse,
)

from collector.receivers.common import ExportError, PartialSuccess, Refusal, Signal

# The google.rpc.Code carried in Status.code (gRPC sends it as its own status).
RPC_CODES: dict[Refusal, int] = {
    Refusal.INVALID: code_pb2.INVALID_ARGUMENT,
    Refusal.OVERLOADED: code_pb2.UNAVAILABLE,
    Refusal.TOO_LARGE: code_pb2.RESOURCE_EXHAUSTED,  # without RetryInfo: not retryable
    Refusal.UNSUPPORTED: code_pb2.INVALID_ARGUMENT,
    Refusal.NOT_FOUND: code_pb2.NOT_FOUND,
    Refusal.METHOD: code_pb2.UNIMPLEMENTED,
    Refusal.INTERNAL: code_pb2.INTERNAL,
    Refusal.UNAUTHENTICATED: code_pb2.UNAUTHENTICATED,
    Refusal.TIMEOUT: code_pb2.DEADLINE_EXCEEDED,
}

_FULL_SUCCESS_PROTO = ExportTraceServiceResponse().SerializeToString()  # b"", either signal
_FULL_SUCCESS_JSON = b"{}"
# The JSON name of the partial-success count, per signal.
_REJECTED_JSON = {Signal.TRACES: "rejectedSpans", Signal.LOGS: "rejectedLogRecords"}


def export_response(result: PartialSuccess, as_json: bool, signal: Signal = Signal.TRACES) -> bytes:
    """An encoded ``ExportTraceServiceResponse`` (``ExportLogsServiceResponse`` for
    logs) for an accepted request."""
    if not (result.rejected or result.message):
        return _FULL_SUCCESS_JSON if as_json else _FULL_SUCCESS_PROTO
    if as_json:
        partial: dict[str, str] = {}
        if result.rejected:
            partial[_REJECTED_JSON[signal]] = str(result.rejected)
        if result.message:
            partial["errorMessage"] = result.message
        return json.dumps({"partialSuccess": partial}).encode()
    response: Any
    if signal is Signal.LOGS:
        response = ExportLogsServiceResponse(
            partial_success=ExportLogsPartialSuccess(
                rejected_log_records=result.rejected, error_message=result.message
            )
        )
    else:
        response = ExportTraceServiceResponse(
            partial_success=ExportTracePartialSuccess(
                rejected_spans=result.rejected, error_message=result.message
            )
        )
    body: bytes = response.SerializeToString()
    return body


def retry_info(retry_after_s: float) -> Any:
    """A ``google.rpc.RetryInfo`` asking the client to wait ``retry_after_s``."""
    info = error_details_pb2.RetryInfo()
    info.retry_delay.FromNanoseconds(round(retry_after_s * 1e9))
    return info


def rpc_status(refused: ExportError) -> Any:
    """The ``google.rpc.Status`` for a refusal, with ``RetryInfo`` when overloaded."""
    status = status_pb2.Status(code=RPC_CODES[refused.refusal], message=refused.message)
    if refused.refusal is Refusal.OVERLOADED:
        status.details.add().Pack(retry_info(refused.retry_after_s))
    return status


def status_body(refused: ExportError, as_json: bool) -> bytes:
    """The encoded ``google.rpc.Status`` body of an HTTP error answer."""
    status = rpc_status(refused)
    if as_json:
        return json.dumps(json_format.MessageToDict(status)).encode()
    body: bytes = status.SerializeToString()
    return body
