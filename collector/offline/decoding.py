"""A replayed payload, decoded: its spans, its log records, or both.

Binary payloads are one signal, named by the reader (``PayloadFormat``, from the file
name). An OTLP/JSON document says which signal it holds by its top-level key
(``resourceSpans``, ``resourceLogs``); it is parsed once and read for each key it
has, so a document without either decodes as an empty trace request, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from collector.decode import (
    AttributeSelector,
    DecodedBatch,
    DecodedLogs,
    decode_logs_protobuf,
    decode_protobuf,
)
from collector.decode.logs_json import decode_logs_json_document, parse_json
from collector.decode.otlp_json import decode_json_document
from collector.offline.readers import Payload, PayloadFormat

_LOGS_KEY = "resourceLogs"
_SPANS_KEY = "resourceSpans"


class Decoded(NamedTuple):
    """One payload's spans and log records (``None``: the payload holds no such signal)."""

    spans: DecodedBatch | None
    logs: DecodedLogs | None

    @property
    def trace_time(self) -> float:
        """The latest span end or record time, in seconds; ``-inf`` when nothing has one.

        Where the replay clock moves when the payload is replayed.
        """
        spans = self.spans.spans if self.spans is not None else ()
        records = self.logs.records if self.logs is not None else ()
        latest = max(
            max((span.end_unix_nano for span in spans), default=0),
            max((record.time_unix_nano for record in records), default=0),
        )
        return latest / 1e9 if latest else -math.inf


def decode_payload(
    payload: Payload,
    selector: AttributeSelector,
    keep: Callable[[bytes], bool] | None = None,
) -> Decoded:
    """Decode ``payload``; ``DecodeError`` if it is not a valid OTLP request.

    ``keep`` filters spans and records by trace id alike (replay shards).
    """
    if payload.format is PayloadFormat.PROTOBUF:
        return Decoded(decode_protobuf(payload.data, selector, keep=keep), None)
    if payload.format is PayloadFormat.LOGS_PROTOBUF:
        return Decoded(None, decode_logs_protobuf(payload.data, selector, keep=keep))
    document = parse_json(payload.data)
    logs = None
    if _has(document, _LOGS_KEY):
        logs = decode_logs_json_document(document, selector, keep=keep)
    spans = None
    if logs is None or _has(document, _SPANS_KEY):
        spans = decode_json_document(document, selector, keep=keep)
    return Decoded(spans, logs)


def _has(document: Any, key: str) -> bool:
    return isinstance(document, dict) and key in document
