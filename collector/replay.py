"""``evald replay``: trace files through the live pipeline's code path, as fast as possible.

The same decoder, assembler, normalizer, evaluators and sinks as ``evald serve``;
only the clock differs: it follows the spans' own end times, so ``idle_timeout``
and ``max_trace_age`` mean the same thing in trace time and traces complete (and
memory is released) while a large file streams. At the end of input every trace
still held is released.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from collector.app import ActiveSpecs, build_processor, build_sinks, decoder_selector
from collector.assembly import TraceAssembler
from collector.clock import ManualClock
from collector.config import Config
from collector.decode import DecodeError, decode_json, decode_protobuf
from collector.files import PayloadFormat, TraceFileError, expand_paths, read_payloads
from collector.model import CompletionReason, Trace
from collector.telemetry import Telemetry
from evaluators.results import ErrorResult, score_of
from evaluators.runner import Outcome

log = logging.getLogger(__name__)


@dataclass
class ReplayReport:
    """What a replay read and what it concluded."""

    files: int = 0
    payloads: int = 0
    spans: int = 0
    rejected_spans: int = 0
    corrupt_records: list[str] = field(default_factory=list)  # "file:line: reason"
    traces: int = 0
    untraceable: int = 0  # traces whose trajectory could not be built
    evaluators: dict[tuple[str | None, str], EvaluatorSummary] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        """Outcomes that did not meet their threshold."""
        return sum(summary.failed for summary in self.evaluators.values())

    def add(self, outcome: Outcome) -> None:
        key = (outcome.spec_id, outcome.evaluator)
        summary = self.evaluators.get(key)
        if summary is None:
            summary = self.evaluators[key] = EvaluatorSummary()
        summary.add(outcome)


@dataclass
class EvaluatorSummary:
    """Running totals for one (spec, evaluator): constant memory however long the replay."""

    count: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    scored: int = 0
    score_sum: float = 0.0

    def add(self, outcome: Outcome) -> None:
        self.count += 1
        self.passed += outcome.passed is True
        self.failed += outcome.passed is False
        score = score_of(outcome.result)
        if score is None:
            self.errors += isinstance(outcome.result, ErrorResult)
        else:
            self.scored += 1
            self.score_sum += score

    @property
    def mean(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None


class Replayer:
    """Replays files into a processor built from ``config``; one instance per run."""

    def __init__(
        self,
        config: Config,
        telemetry: Telemetry | None = None,
        results_out: Path | None = None,
        trajectories_out: Path | None = None,
    ) -> None:
        self.telemetry = telemetry or Telemetry()
        self.report = ReplayReport()
        sinks = build_sinks(config, self.telemetry, results_out, trajectories_out)
        self._processor = build_processor(
            config, ActiveSpecs(config, self.telemetry), sinks, self.telemetry
        )
        self._selector = decoder_selector(config)
        self._clock = ManualClock()
        self._assembler = TraceAssembler(
            config.assembly, self._clock, self._on_complete, self.telemetry
        )

    def run(self, inputs: Iterable[str], strict: bool = False) -> ReplayReport:
        """Replay every file named by ``inputs`` (files, directories, globs).

        A corrupt record is skipped and listed in the report; with ``strict`` it
        raises ``TraceFileError`` instead. Unreadable paths always raise.
        """
        try:
            for path in expand_paths(inputs):
                self.report.files += 1
                self._replay_file(path, strict)
            self._assembler.flush(CompletionReason.END_OF_INPUT)
        finally:
            self._processor.close()
        return self.report

    def _replay_file(self, path: Path, strict: bool) -> None:
        try:
            for payload in read_payloads(path):
                self._replay_payload(payload.format, payload.data, payload.where, strict)
        except TraceFileError as exc:
            if strict:
                raise
            self.report.corrupt_records.append(str(exc))

    def _replay_payload(self, fmt: PayloadFormat, data: bytes, where: str, strict: bool) -> None:
        self.report.payloads += 1
        decode = decode_protobuf if fmt is PayloadFormat.PROTOBUF else decode_json
        try:
            batch = decode(data, self._selector)
        except DecodeError as exc:
            if strict:
                raise TraceFileError(f"{where}: {exc}") from exc
            self.report.corrupt_records.append(f"{where}: {exc}")
            return
        self.report.spans += len(batch.spans)
        self.report.rejected_spans += batch.rejected
        if batch.spans:
            # Trace time drives completion: the clock jumps to the newest span end.
            self._clock.set(max(span.end_unix_nano for span in batch.spans) / 1e9)
            result = self._assembler.add(batch.spans)
            self.report.rejected_spans += result.rejected
        self._assembler.tick()

    def _on_complete(self, trace: Trace) -> None:
        outcomes = self._processor.process(trace)
        self.report.traces += 1
        if outcomes is None:
            self.report.untraceable += 1
        else:
            for outcome in outcomes:
                self.report.add(outcome)
