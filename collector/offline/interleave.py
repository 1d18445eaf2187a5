"""A replay's input as one stream of decoded payloads: the trace files and the log files,
merged by trace time (docs/adr/0014-otlp-logs.md).

Live, the spans and log records of a trace reach the daemon within seconds of each
other, and the assembler joins them because the trace is still held. Files keep the
signals apart (the Collector ``file`` exporter writes one file per signal): replaying
every trace file before the log files would complete each trace, in trace time,
before its records arrive. So the files of each signal are read in order, as two
streams (log files are told by their first JSON key, else by name), merged by trace
time (``Decoded.read_at``): spans when the last of them ended, records from the
earliest of them on, so every record is read before the spans of its trace and a
trace completes only once its records are held. The replay clock still moves to
each payload's latest time. Two files are open at a time; each signal's files are
assumed to be in time order (rotated exporter files, paired ``NAME.jsonl`` /
``NAME.logs.jsonl`` captures). Without log files the stream is the trace files'
payloads in file order, exactly as before.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from collector.decode import DecodeError
from collector.offline.decoding import Decoded
from collector.offline.readers import Payload, TraceFileError, holds_logs, read_payloads

PayloadDecoder = Callable[[Payload], Decoded]
"""Decodes one payload; raises ``DecodeError`` for a corrupt one."""


class Item(NamedTuple):
    """One payload of the run, decoded, or why it (or the rest of its file) was skipped."""

    at: float  # when to replay it, in trace time (s: ``Decoded.read_at``); -inf: at once
    decoded: Decoded | None  # None when corrupt
    corrupt: str = ""  # "file:line: reason" when skipped


def interleaved(paths: Sequence[Path], decode: PayloadDecoder, strict: bool) -> Iterator[Item]:
    """Every payload of ``paths``: log files (``holds_logs``) and the other files merged
    by trace time.

    A corrupt record, or a file whose framing breaks (the rest of it is skipped), is
    an ``Item`` with ``corrupt`` set; with ``strict`` it raises ``TraceFileError``.
    """
    is_logs = {path: holds_logs(path) for path in paths}
    logs = [path for path in paths if is_logs[path]]
    traces = [path for path in paths if not is_logs[path]]
    if not logs:
        return _stream(traces, decode, strict)
    return heapq.merge(_stream(traces, decode, strict), _stream(logs, decode, strict), key=_at)


def _at(item: Item) -> float:
    return item.at


def _stream(paths: Sequence[Path], decode: PayloadDecoder, strict: bool) -> Iterator[Item]:
    for path in paths:
        try:
            for payload in read_payloads(path):
                try:
                    decoded = decode(payload)
                except DecodeError as exc:
                    if strict:
                        raise TraceFileError(f"{payload.where}: {exc}") from exc
                    yield Item(-math.inf, None, f"{payload.where}: {exc}")
                    continue
                yield Item(decoded.read_at, decoded)
        except TraceFileError as exc:
            if strict:
                raise
            yield Item(-math.inf, None, f"{exc} (rest of the file skipped)")
