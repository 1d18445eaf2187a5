"""The front's ``Forward``: one export request split by trace id, its parts sent to the
workers that own them, their answers made one OTLP answer (ADR 0018).

Protobuf payloads are split at the wire level (``collector.receivers.wire_split``:
attributes stay undecoded bytes); OTLP/JSON cannot be split without parsing, so
the front decodes it (with the workers' attribute selector) and sends each worker
its records pickled: JSON ingest is paid for by the front.

All or nothing, as in one process: when a worker that a part is for is full (its
evaluation queue) or restarting, the whole request is refused before anything is
sent, with the retryable answer (``UNAVAILABLE`` / 503 + ``Retry-After``), and its
items are counted as refused (``reason="overloaded"``). If a worker refuses its part
anyway (it filled up in the meantime, or died before answering), the request is
refused the same way; the parts other workers accepted arrive again with the retry,
and the assembler keeps one span per span id.
"""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Sequence

from prometheus_client import Counter

from collector.daemon.frames import TRANSPORTS, Answer, Kind
from collector.daemon.links import LinkClosed
from collector.daemon.pool import WorkerPool
from collector.decode import (
    AttributeSelector,
    DecodedBatch,
    DecodedLogs,
    DecodeError,
    decode_json,
    decode_logs_json,
)
from collector.receivers.common import ExportError, PartialSuccess, Refusal, Signal
from collector.receivers.wire_split import shard_of, split_logs, split_traces
from collector.telemetry.registry import Telemetry


class ShardForwarder:
    """Implements ``collector.receivers.common.Forward`` over a ``WorkerPool``."""

    def __init__(
        self,
        pool: WorkerPool,
        selector: AttributeSelector,
        telemetry: Telemetry,
        retry_after_s: float,
    ) -> None:
        self._pool = pool
        self._selector = selector
        self._retry_after_s = retry_after_s
        ingest = telemetry.ingest
        self._refused: dict[Signal, Counter] = {
            Signal.TRACES: ingest.spans_refused,
            Signal.LOGS: ingest.log_records_refused,
        }

    async def __call__(
        self, signal: Signal, as_json: bool, transport: str, payload: bytes
    ) -> PartialSuccess:
        carrier = TRANSPORTS.index(transport)
        if as_json:
            parts, counts = self._decoded_parts(signal, carrier, payload)
        else:
            parts, counts = self._wire_parts(signal, carrier, payload)
        targets = [index for index, part in enumerate(parts) if part is not None]
        if not targets:
            return PartialSuccess()  # an empty request is a success (OTLP spec)
        full = [index for index in targets if not self._pool.accepting(index)]
        if full:
            raise self._overloaded(signal, transport, sum(counts), f"worker {full[0]} is full")
        links = self._pool.links
        sent = []
        for index in targets:
            link = links[index]
            part = parts[index]
            assert link is not None and part is not None  # accepting() checked both
            sent.append(link.request(part[0], part[1]))
        answers = await asyncio.gather(*sent, return_exceptions=True)
        return self._combine(signal, transport, targets, answers, counts)

    def _wire_parts(
        self, signal: Signal, carrier: int, payload: bytes
    ) -> tuple[list[tuple[Kind, bytes] | None], list[int]]:
        count = self._pool.count
        if signal is Signal.LOGS:
            split, kind = split_logs(payload, count), Kind.LOGS
        else:
            split, kind = split_traces(payload, count), Kind.TRACES
        prefix = bytes((carrier,))
        parts = [None if p is None else (kind, prefix + p) for p in split.payloads]
        return parts, split.counts

    def _decoded_parts(
        self, signal: Signal, carrier: int, payload: bytes
    ) -> tuple[list[tuple[Kind, bytes] | None], list[int]]:
        count = self._pool.count
        try:
            if signal is Signal.LOGS:
                logs = decode_logs_json(payload, self._selector)
                shares = _shares([r.trace_id for r in logs.records], count)
                parcels: list[object] = [
                    DecodedLogs([logs.records[i] for i in share]) for share in shares
                ]
                parcels[0] = logs._replace(records=[logs.records[i] for i in shares[0]])
                kind = Kind.DECODED_LOGS
            else:
                batch = decode_json(payload, self._selector)
                shares = _shares([s.trace_id for s in batch.spans], count)
                parcels = [DecodedBatch([batch.spans[i] for i in share]) for share in shares]
                parcels[0] = batch._replace(spans=[batch.spans[i] for i in shares[0]])
                kind = Kind.DECODED_SPANS
        except DecodeError as exc:
            raise ExportError(Refusal.INVALID, str(exc)) from exc
        # Shard 0 also carries the request's rejected / dropped counts, so they are
        # counted once, and gets the request even when it holds no item.
        parts: list[tuple[Kind, bytes] | None] = [
            (kind, pickle.dumps((carrier, parcel))) if index == 0 or shares[index] else None
            for index, parcel in enumerate(parcels)
        ]
        return parts, [len(share) for share in shares]

    def _combine(
        self,
        signal: Signal,
        transport: str,
        targets: Sequence[int],
        answers: Sequence[bytes | BaseException],
        counts: Sequence[int],
    ) -> PartialSuccess:
        rejected, messages = 0, []
        for index, answer in zip(targets, answers, strict=True):
            if isinstance(answer, LinkClosed):
                why = f"worker {index} is restarting"
                raise self._overloaded(signal, transport, counts[index], why)
            if isinstance(answer, BaseException):
                # A fresh error: raising this one would put it on a traceback through the
                # frames holding ``answers`` and the request, a cycle (ADR 0027).
                raise RuntimeError(f"worker {index} did not answer: {answer!r}")
            decided: Answer = pickle.loads(answer)
            if decided.refusal is not None:
                raise ExportError(Refusal(decided.refusal), decided.message, decided.retry_after_s)
            rejected += decided.rejected
            if decided.message:
                messages.append(decided.message)
        return PartialSuccess(rejected, "; ".join(messages))

    def _overloaded(self, signal: Signal, transport: str, items: int, why: str) -> ExportError:
        if items:
            self._refused[signal].labels(transport=transport, reason="overloaded").inc(items)
        return ExportError(Refusal.OVERLOADED, f"evaluation is behind: {why}", self._retry_after_s)


def _shares(trace_ids: Sequence[bytes], count: int) -> list[list[int]]:
    """The positions of the items each worker owns."""
    shares: list[list[int]] = [[] for _ in range(count)]
    for position, trace_id in enumerate(trace_ids):
        shares[shard_of(trace_id, count)].append(position)
    return shares
