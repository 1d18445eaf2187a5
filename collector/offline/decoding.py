"""A replayed payload, decoded: its spans, its log records, or both.

Binary payloads are one signal, named by the reader (``PayloadFormat``, from the file
name). An OTLP/JSON document says which signal it holds by its top-level key
(``resourceSpans``, ``resourceLogs``); it is parsed once and read for each key it
has, so a document without either decodes as an empty trace request, as before.
"""

from __future__ import annotations

import copy
import math
import operator
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
from collector.decode.otlp_json import decode_json_document, decode_json_typed
from collector.offline.readers import Payload, PayloadFormat

_END = operator.attrgetter("end_unix_nano")
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
        latest = max(self._span_end(max), self._record_time(max))
        return latest / 1e9 if latest else -math.inf

    @property
    def read_at(self) -> float:
        """When, in trace time, to replay this payload among the others (seconds).

        Spans at their latest end (a span is exported when it ends); log records at
        the earliest record: a record is emitted before its span ends, so a payload of
        records is read before the spans of every trace it holds records of. A payload
        holding both is read at the earlier of the two; ``-inf`` (at once) when
        nothing in it has a time.
        """
        spans, records = self._span_end(max), self._record_time(min)
        earliest = min(spans, records) if spans and records else spans or records
        return earliest / 1e9 if earliest else -math.inf

    def _span_end(self, pick: Callable[..., int]) -> int:
        spans = self.spans.spans if self.spans is not None else ()
        return pick(map(_END, spans), default=0)

    def _record_time(self, pick: Callable[..., int]) -> int:
        records = self.logs.records if self.logs is not None else ()
        # A record without any time (0) says nothing about when it arrived.
        return pick((r.time_unix_nano for r in records if r.time_unix_nano), default=0)


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
    spans = decode_json_typed(payload.data, selector, keep=keep)  # a trace request, usually
    if spans is not None:
        return Decoded(spans, None)
    document = parse_json(payload.data)
    has_logs, has_spans = _has(document, _LOGS_KEY), _has(document, _SPANS_KEY)
    logs = None
    if has_logs:  # the decoders may change the document they read: one copy each
        logs_document = copy.deepcopy(document) if has_spans else document
        logs = decode_logs_json_document(logs_document, selector, keep=keep)
    spans = None
    if not has_logs or has_spans:
        spans = decode_json_document(document, selector, keep=keep)
    return Decoded(spans, logs)


def _has(document: Any, key: str) -> bool:
    return isinstance(document, dict) and key in document
