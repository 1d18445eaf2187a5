"""OTLP payloads → records, decoded once.

Traces: ``decode_protobuf`` and ``decode_json`` read an ``ExportTraceServiceRequest``
(or the identical ``TracesData``) and return a ``DecodedBatch`` of ``Span`` records.
Logs: ``decode_logs_protobuf`` and ``decode_logs_json`` read an
``ExportLogsServiceRequest`` (or ``LogsData``) and return a ``DecodedLogs`` of
``LogRecord`` records. Invalid items (empty or wrong-length ids) are rejected one by
one; a payload that cannot be parsed at all raises ``DecodeError`` (→ HTTP 400 /
gRPC INVALID_ARGUMENT).
"""

from collector.decode.common import AttributeSelector, DecodedBatch, DecodeError
from collector.decode.log_records import DecodedLogs
from collector.decode.logs_json import decode_logs_json
from collector.decode.logs_protobuf import decode_logs_protobuf
from collector.decode.otlp_json import decode_json
from collector.decode.protobuf import NATIVE_DECODER, decode_protobuf

__all__ = [
    "NATIVE_DECODER",
    "AttributeSelector",
    "DecodeError",
    "DecodedBatch",
    "DecodedLogs",
    "decode_json",
    "decode_logs_json",
    "decode_logs_protobuf",
    "decode_protobuf",
]
