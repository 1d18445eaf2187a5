"""The messages between ``evald serve``'s front process and its workers (ADR 0018).

One Unix stream socket per worker carries length-prefixed frames both ways:
``<length u32><kind u8><ident u32><body>``. ``ident`` pairs a request with its
answer (0 for messages that need none). Export bodies are OTLP protobuf bytes as
split by ``collector.receivers.wire_split``; small control bodies are pickles
(both ends are this program, started together).
"""

from __future__ import annotations

import asyncio
import struct
from enum import IntEnum
from typing import NamedTuple

_HEADER = struct.Struct("<IBI")
HEADER_SIZE = _HEADER.size


class Kind(IntEnum):
    """What a frame carries. Front → worker unless said otherwise."""

    TRACES = 1  # body: transport byte + ExportTraceServiceRequest (protobuf)
    LOGS = 2  # body: transport byte + ExportLogsServiceRequest (protobuf)
    DECODED_SPANS = 3  # body: pickled (transport index, DecodedBatch): OTLP/JSON, decoded
    DECODED_LOGS = 10  # body: pickled (transport index, DecodedLogs)
    ANSWER = 4  # worker → front: pickled ``Answer``
    METRICS = 5  # ask for the registry; the worker answers METRICS with pickled families
    SERVICES = 6  # ask for the service digest; the answer is a pickled ``ServiceDigest``
    RELOAD = 7  # reload the specs (SIGHUP at the front)
    DRAIN = 8  # body: pickled grace seconds; the worker answers DRAIN with pickled bool
    TURN = 9  # both ways: pickled (owner shard, Trajectory): a session turn to its owner


TRANSPORTS = ("grpc", "http")


class Answer(NamedTuple):
    """A worker's answer to an export: its ``PartialSuccess``, or a refusal."""

    rejected: int = 0
    message: str = ""
    refusal: str | None = None  # ``collector.receivers.common.Refusal`` value
    retry_after_s: float = 0.0


class Frame(NamedTuple):
    kind: Kind
    ident: int
    body: bytes


def encode(kind: Kind, ident: int, body: bytes = b"") -> bytes:
    """One frame's bytes (header and body: one write, one copy)."""
    return _HEADER.pack(len(body), kind, ident) + body


async def read_frame(reader: asyncio.StreamReader) -> Frame | None:
    """The next frame, or None at end of stream (the peer is gone)."""
    try:
        header = await reader.readexactly(HEADER_SIZE)
        length, kind, ident = _HEADER.unpack(header)
        body = await reader.readexactly(length) if length else b""
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    return Frame(Kind(kind), ident, body)
