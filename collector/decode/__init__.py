"""OTLP trace payloads → ``Span`` records, decoded once.

``decode_protobuf`` and ``decode_json`` read an ``ExportTraceServiceRequest`` (or the
identical ``TracesData``) and return a ``DecodedBatch``. Invalid spans (empty or
wrong-length ids) are rejected one by one; a payload that cannot be parsed at all
raises ``DecodeError`` (→ HTTP 400 / gRPC INVALID_ARGUMENT).
"""

from collector.decode.common import AttributeSelector, DecodedBatch, DecodeError
from collector.decode.otlp_json import decode_json
from collector.decode.protobuf import NATIVE_DECODER, decode_protobuf

__all__ = [
    "NATIVE_DECODER",
    "AttributeSelector",
    "DecodeError",
    "DecodedBatch",
    "decode_json",
    "decode_protobuf",
]
