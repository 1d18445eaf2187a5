"""What the two log decoders share: the batch they return, the attributes they keep, and
the rules that turn an OTLP ``LogRecord``'s fields into a ``core.records.LogRecord``.

Log records are read for the GenAI events they carry (``gen_ai.client.inference.
operation.details``, ``gen_ai.user.message`` …) and for what a record says about one
call (its call id beside its arguments: ``collector.normalize.call_records``):
whatever the span selector says, a record keeps every attribute, as span events do
(values cut at the selector's size limit). The body is kept whole: it is the event's
content.

Trace context: a record without a trace id (absent, or all zero, which OTLP defines
as absent) cannot join a trace; it is valid OTLP, so it is not rejected but dropped
and counted (``no_trace_id``). An id of the wrong length is malformed: that record is
rejected (partial success), the others are kept. A missing or all-zero span id is
kept as ``b""``: the record then joins its trace's root span.
"""

from __future__ import annotations

from typing import NamedTuple

from collector.core.records import Attributes, LogRecord
from collector.decode.common import SPAN_ID_BYTES, TRACE_ID_BYTES, AttributeSelector

GENAI_PREFIX = "gen_ai."
EVENT_NAME_KEY = "event.name"

NO_TRACE_ID = "no_trace_id"


class DecodedLogs(NamedTuple):
    """The log records of one request, plus what was refused or dropped and why."""

    records: list[LogRecord]
    rejected: int = 0  # malformed records (bad id length): reported in partial success
    message: str = ""  # why records were rejected (first reason)
    no_trace_id: int = 0  # valid records without trace context: dropped, counted
    truncated_values: int = 0  # attribute or body values cut to the size limit


def log_selector(selector: AttributeSelector) -> AttributeSelector:
    """The selector for log record attributes: every key, at ``selector``'s size limit.

    A record is read as the span event it stands for, and span events keep their
    attributes whole (their keys are not namespaced: ``collector.normalize.
    attribute_keys``); a record's may name a call's id beside its arguments or failure
    under any key (``collector.normalize.call_records``). Records are few.
    """
    return AttributeSelector(max_value_size=selector.max_value_size)


def event_name(field: str, attributes: Attributes) -> str:
    """The record's ``event_name`` field, else its ``event.name`` attribute, else ``""``.

    Older SDKs (and the OTel Logs Bridge before ``event_name`` existed) carry the
    name only as the attribute.
    """
    if field:
        return field
    name = attributes.get(EVENT_NAME_KEY)
    return name if isinstance(name, str) else ""


def record_time(time_unix_nano: int, observed_time_unix_nano: int) -> int:
    """When the event happened: ``time_unix_nano``, else when the SDK observed it.

    Instrumentations emitting events through the Logs API often set only the
    observed time (opentelemetry-instrumentation-openai-v2 does).
    """
    return time_unix_nano or observed_time_unix_nano


def trace_context(trace_id: bytes, span_id: bytes) -> tuple[bytes, bytes] | str | None:
    """``(trace_id, span_id)`` with an absent span id as ``b""``; ``None`` when the
    record has no trace id; a message when an id is malformed."""
    if not trace_id.strip(b"\0"):
        return None
    if len(trace_id) != TRACE_ID_BYTES:
        return "log record with an invalid trace_id"
    if not span_id.strip(b"\0"):
        return trace_id, b""
    if len(span_id) != SPAN_ID_BYTES:
        return "log record with an invalid span_id"
    return trace_id, span_id
