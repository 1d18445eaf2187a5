"""Split an OTLP export request into one request per worker, by trace id, at the wire level.

``evald serve`` with ``pipeline.workers > 1`` receives in one front process and
forwards each span (and log record) to the worker that owns its trace id
(``crc32(trace_id) % workers``, the sharding of ``evald replay --workers``). This
module reads only what routing needs: the envelope fields (``resource_spans`` →
``scope_spans`` → ``spans``, and the logs equivalents) and each item's trace id.
Attributes, names and bodies are copied as opaque bytes, never decoded; each
shard's request keeps the resource and scope of its items, so the worker decodes
it exactly as it would have decoded the original.

A payload this reader cannot walk (truncated, a group wire type) is returned whole
as shard 0's: the worker's decoder then gives the usual ``INVALID`` answer with its
precise message.

The compiled walker (``collector.decode._wire.split_walk``, the normal install) does
the same walk ≈ 3x faster (ADR 0018's session 10 addendum); it refuses, rather than
guesses, any payload it is not sure of (``Unusual``), and the Python walk here then
decides, as it does for every payload without the compiled module.
"""

from __future__ import annotations

import zlib
from types import ModuleType
from typing import NamedTuple

_wire: ModuleType | None
try:
    from collector.decode import _wire  # compiled at install (setup.py)
except ImportError:  # built without a C compiler, or EVALD_INTERPRETED
    _wire = None

# Field numbers (opentelemetry/proto/{trace,logs}/v1): the envelope is the same shape for
# both signals: Export*Request.1 → Resource*.2 (scope) → Scope*.2 (items).
_LIST = 1  # ExportTraceServiceRequest.resource_spans / ExportLogsServiceRequest.resource_logs
_SCOPES = 2  # ResourceSpans.scope_spans / ResourceLogs.scope_logs
_ITEMS = 2  # ScopeSpans.spans / ScopeLogs.log_records
_SPAN_TRACE_ID = 1  # Span.trace_id
_LOG_TRACE_ID = 9  # LogRecord.trace_id

_LEN = 2  # wire type: length-delimited
_ITEM_TAG = _ITEMS << 3 | _LEN  # one byte


class WireError(ValueError):
    """The payload is not walkable protobuf."""


class Split(NamedTuple):
    """One request per shard (``None``: nothing for that shard) and the item counts."""

    payloads: list[bytes | None]
    counts: list[int]


def shard_of(trace_id: bytes, count: int) -> int:
    """The worker that owns ``trace_id`` (as ``collector.offline.replay.Shard``)."""
    return zlib.crc32(trace_id) % count


def split_traces(payload: bytes, count: int) -> Split:
    """``payload`` (an ``ExportTraceServiceRequest``) as ``count`` requests by trace id."""
    return _split(payload, count, _SPAN_TRACE_ID)


def split_logs(payload: bytes, count: int) -> Split:
    """``payload`` (an ``ExportLogsServiceRequest``) as ``count`` requests by trace id.

    A log record without a trace id goes to shard ``shard_of(b"")``, whose decoder
    drops and counts it as the single process does."""
    return _split(payload, count, _LOG_TRACE_ID)


def _split(payload: bytes, count: int, trace_field: int) -> Split:
    if _wire is not None:
        try:
            return Split(*_wire.split_walk(payload, count, trace_field))
        except _wire.Unusual:
            pass  # the Python walk decides
    try:
        return _walk(payload, count, trace_field)
    except (WireError, IndexError):
        return Split([payload, *([None] * (count - 1))], [0] * count)


def _walk(data: bytes, count: int, trace_field: int) -> Split:
    parts: list[list[bytes]] = [[] for _ in range(count)]
    counts = [0] * count
    pos, end = 0, len(data)
    while pos < end:
        start = pos
        field, wire, pos = _tag(data, pos)
        value_start, pos = _skip(data, pos, wire, end)
        if field != _LIST or wire != _LEN:
            continue  # unknown top-level field: dropped, as the decoder ignores it
        for shard, chunk in _split_resource(
            data, value_start, pos, count=count, trace_field=trace_field, counts=counts
        ):
            parts[shard].append(chunk if chunk is not None else data[start:pos])
    if sum(1 for part in parts if part) == 1:  # one shard only: the payload as sent
        return Split([data if part else None for part in parts], counts)
    return Split([b"".join(part) if part else None for part in parts], counts)


def _split_resource(
    data: bytes, start: int, end: int, *, count: int, trace_field: int, counts: list[int]
) -> list[tuple[int, bytes | None]]:
    """``(shard, ResourceX field bytes)`` pairs; ``None`` bytes: the field as it came."""
    head: list[bytes] = []  # resource, schema_url: repeated in every shard's copy
    scopes: list[tuple[bytes, list[tuple[int, int, int]]]] = []
    pos = start
    while pos < end:
        field_start = pos
        field, wire, pos = _tag(data, pos)
        value_start, pos = _skip(data, pos, wire, end)
        if field == _SCOPES and wire == _LEN:
            scopes.append(
                _split_scope(
                    data, value_start, pos, count=count, trace_field=trace_field, counts=counts
                )
            )
        else:
            head.append(data[field_start:pos])
    shards = {shard for _, items in scopes for shard, _, _ in items}
    if len(shards) <= 1:
        return [(shard, None) for shard in shards]
    out: list[tuple[int, bytes | None]] = []
    for shard in sorted(shards):
        body = list(head)
        for scope_head, items in scopes:
            mine = [data[first:after] for owner, first, after in items if owner == shard]
            if mine:
                body.append(_field(_SCOPES, b"".join([scope_head, *mine])))
        out.append((shard, _field(_LIST, b"".join(body))))
    return out


def _split_scope(
    data: bytes, start: int, end: int, *, count: int, trace_field: int, counts: list[int]
) -> tuple[bytes, list[tuple[int, int, int]]]:
    """The ScopeX's non-item fields, and each item field's shard and place.

    The hot loop of the split (once per span): the usual encodings (a one-byte tag,
    a length of at most two bytes, the trace id first) are read inline."""
    head: list[bytes] = []
    items: list[tuple[int, int, int]] = []
    crc32 = zlib.crc32
    first_is_trace_id = trace_field == _SPAN_TRACE_ID
    pos = start
    while pos < end:
        field_start = pos
        if data[pos] != _ITEM_TAG:
            _, wire, pos = _tag(data, pos)
            _, pos = _skip(data, pos, wire, end)
            head.append(data[field_start:pos])
            continue
        length = data[pos + 1]
        if length < 0x80:
            value_start = pos + 2
        elif data[pos + 2] < 0x80:
            length = (length & 0x7F) | data[pos + 2] << 7
            value_start = pos + 3
        else:
            length, value_start = _varint(data, pos + 1)
        pos = value_start + length
        if pos > end:
            raise WireError("truncated field")
        if (
            first_is_trace_id
            and pos - value_start >= 18  # (a shorter span cannot hold a 16-byte trace id)
            and data[value_start] == 0x0A
            and data[value_start + 1] == 16
        ):
            trace_id = data[value_start + 2 : value_start + 18]
        else:
            trace_id = _trace_id(data, value_start, pos, trace_field)
        shard = crc32(trace_id) % count
        counts[shard] += 1
        items.append((shard, field_start, pos))
    return b"".join(head), items


def _trace_id(data: bytes, start: int, end: int, trace_field: int) -> bytes:
    pos = start
    found = b""
    while pos < end:
        field, wire, pos = _tag(data, pos)
        value_start, pos = _skip(data, pos, wire, end)
        if field == trace_field and wire == _LEN:
            found = data[value_start:pos]  # the last one wins, as in protobuf
    return found


def _tag(data: bytes, pos: int) -> tuple[int, int, int]:
    key, pos = _varint(data, pos)
    return key >> 3, key & 7, pos


def _skip(data: bytes, pos: int, wire: int, end: int) -> tuple[int, int]:
    """The value's start (after a length prefix) and the position after it."""
    if wire == 0:
        while data[pos] & 0x80:
            pos += 1
        return pos, pos + 1
    if wire == _LEN:
        length, pos = _varint(data, pos)
        after = pos + length
    elif wire == 1:
        after = pos + 8
    elif wire == 5:
        after = pos + 4
    else:
        raise WireError(f"unsupported wire type {wire}")
    if after > end:
        raise WireError("truncated field")
    return pos, after


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    byte = data[pos]
    if byte < 0x80:
        return byte, pos + 1
    value, shift = byte & 0x7F, 7
    while True:
        pos += 1
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + 1
        shift += 7
        if shift > 63:
            raise WireError("varint too long")


def _field(number: int, value: bytes) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(value)) + value


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
