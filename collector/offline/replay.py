"""``evald replay``: trace (and log) files through the live pipeline's code path, as fast
as possible.

The same decoder, assembler, normalizer, evaluators and sinks as ``evald serve``;
only the clock differs: it follows the spans' own end times, so ``idle_timeout``
and ``max_trace_age`` mean the same thing in trace time and traces complete (and
memory is released) while a large file streams. At the end of input every trace
still held is released.

What a replay writes is what its options ask for (result and trajectory files,
reports); the daemon's outputs (Prometheus, OTLP export, ``outputs.*_file``) are
not used: nothing scrapes a replay, and re-scored history must not be appended to
the live files.

A ``Shard`` makes this replayer evaluate only the traces whose id hashes to it
(``--workers``): every worker reads every file, but spans of other shards are
dropped by the decoder before their attributes are converted, which is where
decoding time goes. File-level counts (payloads, corrupt records, rejected spans)
are kept by shard 0 only, so merged summaries count them once.

Log files (OTLP log records, joined to their spans as in the daemon) are read beside
the trace files and merged with them by trace time (``collector.offline.interleave``),
so a trace's records arrive while it is held. Records are sharded by trace id like
spans, so they reach the worker that assembles their trace.

Sessions (``scope: session`` specs) complete on the same trace-time clock; at the
end of input every open session is evaluated. The turns of one session are
different traces, so with session specs loaded workers shard by *session*
instead: each decodes and assembles every trace, then keeps the traces whose
``session_key`` (service, session id; the trace id when there is none) hashes to
it, and only those are normalised and evaluated. Every session is then whole in
one worker and results match a single process; the price is decoding and
assembling every trace in every worker (normalising, the larger cost, is not
repeated).
"""

from __future__ import annotations

import logging
import math
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from collector.assembly.sessions import SessionCompletion
from collector.assembly.traces import TraceAssembler
from collector.config.settings import Config
from collector.core.clock import ManualClock
from collector.core.gc_settings import streaming_collector
from collector.core.records import CompletionReason, LogRecord, Span, Trace
from collector.normalize import session_key
from collector.offline.decoding import Decoded, decode_payload
from collector.offline.interleave import Item, interleaved
from collector.offline.readers import Payload, expand_paths
from collector.offline.reports.sink import SummarySink
from collector.offline.reports.summary import RunSummary
from collector.processing.wiring import ActiveSpecs, build_stage, decoder_selector
from collector.sinks import ResultSink
from collector.sinks.jsonl import ResultsFileSink, TrajectoriesFileSink
from collector.telemetry.registry import Telemetry

log = logging.getLogger(__name__)

_CORRUPT_LOGGED = 10  # the rest are counted and listed in the report, not logged
Progress = Callable[[int], None]  # called with the number of traces evaluated so far


@dataclass(frozen=True)
class Shard:
    """This replayer evaluates the traces whose key (trace id, or session key) has
    ``crc32(key) % count == index``."""

    index: int = 0
    count: int = 1

    def owns(self, key: bytes) -> bool:
        """Whether ``key`` (a trace id, or a session key) falls to this shard."""
        return zlib.crc32(key) % self.count == self.index

    @property
    def keeps_file_counts(self) -> bool:
        return self.index == 0


class Replayer:
    """Replays files into a processor built from ``config``; one instance per run.

    ``sinks`` are extra result sinks (a JUnit spool); ``results_out`` and
    ``trajectories_out`` are appended to (callers start them empty).
    """

    def __init__(
        self,
        config: Config,
        *,
        results_out: Path | None = None,
        trajectories_out: Path | None = None,
        sinks: Sequence[ResultSink] = (),
        shard: Shard | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.telemetry = Telemetry()
        self.summary = RunSummary()
        specs = ActiveSpecs(config, self.telemetry)
        self._clock = ManualClock()
        sessions = specs().has_session_specs
        self._stage = build_stage(
            config,
            specs,
            [SummarySink(self.summary), *_file_sinks(results_out, trajectories_out), *sinks],
            self.telemetry,
            clock=self._clock,
            daemon=False,  # judges awaited (not shed): complete, reproducible results
            sessions=sessions,
        )
        self._selector = decoder_selector(config)
        self._shard = shard = shard or Shard()
        self._progress = progress
        self._mappings = config.normalization.mappings
        sharded = shard.count > 1
        # Traces are sharded by trace id in the decoder, or by session once assembled.
        self._keep = shard.owns if sharded and not sessions else None
        self._by_session = sharded and sessions
        self._assembler = TraceAssembler(config.assembly, self._clock, self.telemetry)

    def run(self, inputs: Iterable[str], strict: bool = False) -> RunSummary:
        """Replay every file named by ``inputs`` (files, directories, globs).

        A corrupt record is skipped, logged (the first few) and counted in the
        summary; with ``strict`` it raises ``TraceFileError`` instead. Paths that
        match nothing always raise.
        """
        # Everything alive now (modules, specs, config: tens of thousands of objects)
        # lives as long as the run: frozen, the collector's full collections stop
        # scanning it again and again while traces stream through (~5 % of an
        # OTLP/JSON replay; docs/adr/0021-replay-throughput.md), and young
        # collections spaced out as in the daemon (~2 % of a binary replay's CPU
        # with CPython's defaults; docs/adr/0024-json-walker-and-collector.md).
        try:
            with streaming_collector():
                paths = expand_paths(inputs)
                if self._shard.keeps_file_counts:
                    self.summary.read.files += len(paths)
                for item in interleaved(paths, self._decode, strict):
                    self._replay(item)
                self._assembler.flush(CompletionReason.END_OF_INPUT, self._evaluate)
                self._stage.flush_sessions(SessionCompletion.END_OF_INPUT)
        finally:
            self._stage.close()
        return self.summary

    def _decode(self, payload: Payload) -> Decoded:
        return decode_payload(payload, self._selector, self._keep)

    def _replay(self, item: Item) -> None:
        if item.decoded is None:
            self._corrupt(item.corrupt)
            return
        spans, logs = item.decoded
        if self._shard.keeps_file_counts:
            read = self.summary.read
            read.payloads += 1
            read.rejected_spans += spans.rejected if spans is not None else 0
            read.dropped_log_records += logs.rejected + logs.no_trace_id if logs else 0
        if (now := item.decoded.trace_time) > -math.inf:
            # Trace time drives completion: the clock jumps to the newest span end
            # (or record time).
            self._clock.set(now)
        if spans is not None and spans.spans:
            self._add(spans.spans)
        if logs is not None and logs.records:
            self._add_logs(logs.records)
        self._assembler.tick(self._evaluate)
        self._stage.tick_sessions()
        if self._progress is not None:
            self._progress(self.summary.traces)

    def _add(self, spans: Sequence[Span]) -> None:
        result = self._assembler.add(spans, self._evaluate)
        assert result is not None  # _evaluate always takes the trace
        rejected = result.rejected
        if not self._by_session or self._shard.keeps_file_counts:
            # by session, every worker decoded and assembled every span: shard 0 counts
            self.summary.spans += len(spans)
            self.summary.read.rejected_spans += rejected

    def _add_logs(self, records: Sequence[LogRecord]) -> None:
        result = self._assembler.add_logs(records, self._evaluate)
        assert result is not None  # _evaluate always takes the trace
        if not self._by_session or self._shard.keeps_file_counts:
            self.summary.log_records += len(records)
            self.summary.read.dropped_log_records += result.rejected

    def _corrupt(self, where_and_why: str) -> None:
        if not self._shard.keeps_file_counts:
            return
        read = self.summary.read
        if read.corrupt_total < _CORRUPT_LOGGED:
            log.warning("skipped corrupt record %s", where_and_why)
        read.add_corrupt(where_and_why)

    def _evaluate(self, trace: Trace) -> bool:
        """The assembler's offer: every completed trace is taken (evaluated here, or
        left to the worker that owns its session)."""
        if self._by_session and not self._owns_session_of(trace):
            return True  # another worker's: it decoded and assembled it too
        self.summary.traces += 1
        if self._stage.process(trace) is None:
            self.summary.untraceable += 1
        return True

    def _owns_session_of(self, trace: Trace) -> bool:
        service, session = session_key(trace, self._mappings)
        if session is None:
            return self._shard.owns(trace.trace_id)
        return self._shard.owns(f"{service}\0{session}".encode("utf-8", "surrogatepass"))


def _file_sinks(results: Path | None, trajectories: Path | None) -> list[ResultSink]:
    sinks: list[ResultSink] = []
    if results is not None:
        sinks.append(ResultsFileSink(results))
    if trajectories is not None:
        sinks.append(TrajectoriesFileSink(trajectories))
    return sinks
