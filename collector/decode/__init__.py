"""OTLP trace payloads → ``Span`` records, decoded once.

``decode_protobuf`` and ``decode_json`` read an ``ExportTraceServiceRequest`` (or the
identical ``TracesData``) and return a ``DecodedBatch``. Invalid spans (empty or
wrong-length ids) are rejected one by one; a payload that cannot be parsed at all
raises ``DecodeError`` (→ HTTP 400 / gRPC INVALID_ARGUMENT).
"""

import logging

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
    "warn_without_native_decoder",
]


def warn_without_native_decoder() -> None:
    """Logs a warning when the compiled protobuf walker is missing (results are the
    same, binary OTLP decoding is ~3x slower); called once when serve or replay starts."""
    if not NATIVE_DECODER:
        logging.getLogger(__name__).warning(
            "collector.decode._wire is not compiled (installed without a C compiler?): "
            "binary OTLP is decoded through upb alone, same results, ~3x slower; "
            "reinstall with gcc and the Python headers"
        )
