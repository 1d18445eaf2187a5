"""Trace and log files for replay: find them, detect their layout, stream their payloads.

Layouts (any of them gzip-compressed, detected by magic bytes, not by name):

- OTLP/JSON lines: one ``TracesData`` / ``ExportTraceServiceRequest`` (or ``LogsData`` /
  ``ExportLogsServiceRequest``) per line (the Collector ``file`` exporter's
  ``format: json``, the OTel file exporter);
- one OTLP/JSON document, possibly pretty-printed over many lines;
- one binary ``ExportTraceServiceRequest`` (a ``POST /v1/traces`` body);
- Collector ``format: proto`` framing: each message behind a 4-byte big-endian length;
- varint-delimited messages (protobuf's ``writeDelimitedTo``; ``shared/bench/make_traces.py --pb``).

OTLP/JSON says which signal it holds (``resourceSpans`` / ``resourceLogs``); binary
protobuf does not, so a binary file holds log records when its name says so
(``is_log_file``: ``run.logs.pb``, ``logs.binpb``), as the Collector ``file``
exporter's per-signal files are usually named (docs/adr/0014-otlp-logs.md).

Everything is streamed: memory stays bounded by the largest single record (a JSON
document or a lone binary request is one record, and is read whole; at most 1 GiB).
"""

from __future__ import annotations

import glob
import gzip
import io
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO, NamedTuple

TRACE_FILE_SUFFIXES = (".jsonl", ".json", ".ndjson", ".pb", ".binpb", ".bin", ".proto", ".otlp")
_GZIP_MAGIC = b"\x1f\x8b"
_MAX_RECORD = 1 << 30  # a length prefix beyond 1 GiB is corruption, not data
_REQUEST_TAG = 0x0A  # field 1 (resource_spans/_logs), wire type 2: how every request starts
_LOGS_WORD = re.compile(r"(?:^|[^a-z0-9])logs(?:[^a-z0-9]|$)")  # not "catalogs", "logsheet"
_FIRST_KEY = re.compile(rb'\s*\{\s*"(resourceLogs|resourceSpans)"')
_SNIFF = 256  # bytes enough to see an OTLP/JSON document's first key
# A JSON line (one request) is often hundreds of KB; a line longer than the read
# buffer is assembled from buffer-sized reads (8 KB by default: many of them).
_JSON_BUFFER = 1 << 20


class PayloadFormat(StrEnum):
    JSON = "json"  # either signal: the document says which
    PROTOBUF = "protobuf"  # ExportTraceServiceRequest
    LOGS_PROTOBUF = "logs_protobuf"  # ExportLogsServiceRequest (by file name)


class Payload(NamedTuple):
    """One encoded request read from a file; ``where`` names file and line/offset."""

    format: PayloadFormat
    data: bytes
    where: str


class TraceFileError(Exception):
    """A trace file cannot be read or its framing is corrupt; names file and offset."""


def expand_paths(inputs: Iterable[str]) -> list[Path]:
    """Files named by ``inputs``: files as given, directories recursively (trace
    file suffixes, plain or ``.gz``), glob patterns expanded; sorted, unique.

    Raises ``TraceFileError`` for a path that matches nothing.
    """
    found: list[Path] = []
    for item in inputs:
        matches = (
            sorted(glob.glob(item, recursive=True)) if any(c in item for c in "*?[") else [item]
        )
        if not matches or not all(os.path.exists(m) for m in matches):
            raise TraceFileError(f"{item}: no such file or directory")
        for match in matches:
            path = Path(match)
            found.extend(_trace_files_under(path) if path.is_dir() else [path])
    return list(dict.fromkeys(found))


def _trace_files_under(directory: Path) -> list[Path]:
    return sorted(
        path
        for path in directory.rglob("*")
        if path.is_file() and path.name.removesuffix(".gz").endswith(TRACE_FILE_SUFFIXES)
    )


def is_log_file(path: Path) -> bool:
    """Whether ``path`` is named as a file of log records: its name has the word ``logs``
    (case ignored; a word: not touching a letter or digit).

    ``run.logs.pb``, ``x.logs.jsonl.gz``, ``logs.pb``, ``otel_logs.binpb``, ``logs.json``
    and the Collector's rotated ``logs-2024-05-01T10-00-00.000.json`` are;
    ``traces.pb``, ``catalogs.pb``, ``logsheet.pb`` are not.
    """
    return _LOGS_WORD.search(path.name.lower()) is not None


def holds_logs(path: Path) -> bool:
    """Whether ``path`` holds log records: an OTLP/JSON file whose first document starts
    with ``resourceLogs`` (or ``resourceSpans``: not), else by name (``is_log_file``).

    Reads a few bytes; an unreadable file is judged by its name (reading it later
    reports the error).
    """
    try:
        with _open(path) as stream:
            head = stream.peek(_SNIFF)[:_SNIFF]
    except (OSError, EOFError):
        return is_log_file(path)
    first = _FIRST_KEY.match(head)
    return first.group(1) == b"resourceLogs" if first else is_log_file(path)


def read_payloads(path: Path) -> Iterator[Payload]:
    """Stream the payloads of one trace or log file, whatever its layout."""
    binary = PayloadFormat.LOGS_PROTOBUF if is_log_file(path) else PayloadFormat.PROTOBUF
    try:
        with _open(path) as stream:
            head = stream.peek(8)[:8]
            if not head:
                return
            if head.lstrip()[:1] in (b"{", b"["):
                with io.BufferedReader(stream, _JSON_BUFFER) as lines:  # closes ``stream``
                    yield from _json_payloads(lines, str(path))
            else:
                yield from _binary_payloads(stream, str(path), binary)
    except OSError as exc:
        raise TraceFileError(f"{path}: {exc.strerror or exc}") from exc
    except EOFError as exc:  # truncated gzip stream
        raise TraceFileError(f"{path}: truncated compressed data: {exc}") from exc


def _open(path: Path) -> io.BufferedReader:
    with open(path, "rb") as probe:
        compressed = probe.read(2) == _GZIP_MAGIC
    if compressed:
        return io.BufferedReader(gzip.open(path, "rb"), _JSON_BUFFER)
    return open(path, "rb")


def _json_payloads(stream: BinaryIO, name: str) -> Iterator[Payload]:
    # JSON lines unless the first non-blank lines are not complete documents: a
    # JSON-lines file whose first line is corrupt must not be read whole as one
    # (broken) document, so a second line that parses also means JSON lines.
    head = [stream.readline()]
    if not _is_complete_json(head[0]):
        head.append(_next_nonblank(stream, head))
        if not _is_complete_json(head[-1]):
            yield Payload(PayloadFormat.JSON, _whole(b"".join(head), stream, name), f"{name}:1")
            return
    for number, line in enumerate(itertools.chain(head, stream), start=1):
        if line and not line.isspace():  # not strip(): that copies the (long) line
            yield Payload(PayloadFormat.JSON, line, f"{name}:{number}")


def _next_nonblank(stream: BinaryIO, skipped: list[bytes]) -> bytes:
    """The next non-blank line; blank ones are appended to ``skipped`` to keep numbering."""
    while True:
        line = stream.readline()
        if not line or not line.isspace():
            return line
        skipped.append(line)


def _whole(start: bytes, stream: BinaryIO, name: str) -> bytes:
    """The rest of a one-payload file, refusing sizes that only corruption explains."""
    data = start + stream.read(_MAX_RECORD + 1 - len(start))
    if len(data) > _MAX_RECORD:
        raise TraceFileError(
            f"{name}: a single payload larger than {_MAX_RECORD >> 20} MiB; "
            "write one request per line (JSON lines) or use length-prefixed framing"
        )
    return data


def _is_complete_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _binary_payloads(stream: io.BufferedReader, name: str, fmt: PayloadFormat) -> Iterator[Payload]:
    head = stream.peek(5)[:5]
    if head[0] == 0:
        yield from _framed(stream, name, _read_be32, fmt)
    elif head[0] == _REQUEST_TAG and not _looks_varint_framed(head):
        yield Payload(fmt, _whole(b"", stream, name), f"{name}@0")
    else:
        yield from _framed(stream, name, _read_varint, fmt)


def _looks_varint_framed(head: bytes) -> bool:
    # A lone request starts 0x0A <len of first ResourceSpans>; a varint frame of
    # exactly 10 bytes would start 0x0A 0x0A. Real requests are larger than 10.
    return len(head) > 1 and head[1] == _REQUEST_TAG


LengthReader = Callable[[BinaryIO, str, int], tuple[int | None, int]]


def _framed(
    stream: BinaryIO, name: str, read_length: LengthReader, fmt: PayloadFormat
) -> Iterator[Payload]:
    offset = 0
    while True:
        length, header = read_length(stream, name, offset)
        if length is None:
            return
        if length > _MAX_RECORD:
            raise TraceFileError(f"{name}@{offset}: record length {length} is not plausible")
        data = stream.read(length)
        if len(data) != length:
            raise TraceFileError(
                f"{name}@{offset}: truncated record ({len(data)} of {length} bytes)"
            )
        yield Payload(fmt, data, f"{name}@{offset}")
        offset += header + length


def _read_be32(stream: BinaryIO, name: str, offset: int) -> tuple[int | None, int]:
    header = stream.read(4)
    if not header:
        return None, 0
    if len(header) != 4:
        raise TraceFileError(f"{name}@{offset}: truncated length prefix")
    return int.from_bytes(header, "big"), 4


def _read_varint(stream: BinaryIO, name: str, offset: int) -> tuple[int | None, int]:
    value = shift = size = 0
    while True:
        byte = stream.read(1)
        if not byte:
            if size == 0:
                return None, 0
            raise TraceFileError(f"{name}@{offset}: truncated length prefix")
        size += 1
        value |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return value, size
        shift += 7
        if shift > 35:
            raise TraceFileError(f"{name}@{offset}: invalid varint length prefix")
