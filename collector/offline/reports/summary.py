"""What a replay concluded, in memory that does not grow with the number of traces.

Per (spec, evaluator) a ``MetricSummary`` keeps counts and streaming statistics;
failing traces are kept as a bounded, deterministic sample (the failing traces
with the smallest trace ids, so the sample does not depend on arrival order or on
how traces were split across workers); corrupt records likewise. Every part
has ``merge`` so the summaries of parallel workers combine into the one a single
process would have produced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from collector.offline.stats import RunningStats, wilson_interval
from evaluators.results import is_error, score_of
from evaluators.runner import Outcome

MetricKey = tuple[str | None, str]  # (spec id or None for evaluation.always, evaluator id)
DEFAULT_FAILURES_KEPT = 1000
DEFAULT_CORRUPT_KEPT = 100
DEFAULT_SKIPPED_KEPT = 20  # skipped trace ids listed in a report
_INPUT_CHARS = 160  # enough to recognise a request in a report line
# Lone surrogates reach strings through JSON escapes ("\\ud800") in traffic or
# undecodable file names; no UTF-8 writer can encode them, so a report would crash.
_SURROGATES = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so any UTF-8 stream can take it."""
    return _SURROGATES.sub("\ufffd", text)


@dataclass(slots=True)
class MetricSummary:
    """One (spec, evaluator) over the whole run: verdict counts and score statistics."""

    scores: RunningStats = field(default_factory=RunningStats)
    passed: int = 0
    failed: int = 0
    errors: int = 0
    no_verdict: int = 0  # scored without a threshold (latency by default)

    @property
    def count(self) -> int:
        """Results received, errors included."""
        return self.passed + self.failed + self.errors + self.no_verdict

    def add(self, outcome: Outcome) -> None:
        result = outcome.result
        score = score_of(result)
        if score is not None:
            self.scores.add(score)
        if is_error(result):
            self.errors += 1
        elif outcome.passed is None:
            self.no_verdict += 1
        elif outcome.passed:
            self.passed += 1
        else:
            self.failed += 1

    def merge(self, other: MetricSummary) -> None:
        self.scores.merge(other.scores)
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        self.no_verdict += other.no_verdict

    @property
    def pass_rate(self) -> float | None:
        """Passed / (passed + failed); None when no result had a verdict."""
        judged = self.passed + self.failed
        return self.passed / judged if judged else None

    @property
    def pass_interval(self) -> tuple[float, float] | None:
        """Wilson 95 % interval of the pass rate."""
        return wilson_interval(self.passed, self.passed + self.failed)


class FailedCheck(NamedTuple):
    """One evaluator that failed its threshold (``error`` None) or could not judge."""

    spec: str | None
    evaluator: str
    score: float | None
    error: str | None


class TraceFailure(NamedTuple):
    """A trace with at least one failed check; ordered by trace id."""

    trace_id: str
    service: str
    input: str | None
    checks: tuple[FailedCheck, ...]


def failed_checks(outcomes: Iterable[Outcome]) -> tuple[FailedCheck, ...]:
    """The outcomes that failed their threshold or ended in an evaluator error."""
    return tuple(
        FailedCheck(
            outcome.spec_id,
            outcome.evaluator,
            score_of(outcome.result),
            encodable(outcome.result.error) if is_error(outcome.result) else None,
        )
        for outcome in outcomes
        if outcome.passed is False or is_error(outcome.result)
    )


def short_input(text: str | None) -> str | None:
    """The first characters of a user input, on one line."""
    if text is None:
        return None
    flat = encodable(" ".join(text.split()))
    return flat if len(flat) <= _INPUT_CHARS else flat[: _INPUT_CHARS - 1] + "…"


@dataclass
class FailureSample:
    """At most ``limit`` failing traces, those with the smallest trace ids, of ``total`` seen.

    Keeping the smallest ids (not the first arrivals) makes the sample the same
    whatever the order of the input and however traces were split across workers.
    Memory stays under ``2 * limit`` entries: the list is pruned when it doubles.
    """

    limit: int
    total: int = 0
    _kept: list[TraceFailure] = field(default_factory=list)

    def add(self, failure: TraceFailure) -> None:
        self.total += 1
        self._kept.append(failure)
        if len(self._kept) >= 2 * self.limit:
            self._prune()

    def merge(self, other: FailureSample) -> None:
        self.total += other.total
        self._kept.extend(other._kept)
        self._prune()

    def trim(self) -> None:
        """Drop now the failures no merge can keep (before sending this to another process):
        the ``limit`` smallest ids of a merge are among each part's ``limit`` smallest."""
        self._prune()

    def items(self) -> list[TraceFailure]:
        """The kept failures in ascending trace-id order."""
        self._prune()
        return list(self._kept)

    def _prune(self) -> None:
        self._kept.sort(key=lambda failure: failure.trace_id)
        del self._kept[self.limit :]


@dataclass
class ReadStats:
    """What was read: counted once per run, not per worker (see ``Replayer``)."""

    files: int = 0
    payloads: int = 0
    rejected_spans: int = 0
    dropped_log_records: int = 0  # malformed, without a trace id, or over the limits
    corrupt_total: int = 0
    corrupt: list[str] = field(default_factory=list)  # "file:line: reason", the first ones
    corrupt_limit: int = DEFAULT_CORRUPT_KEPT

    def add_corrupt(self, where_and_why: str) -> None:
        self.corrupt_total += 1
        if len(self.corrupt) < self.corrupt_limit:
            self.corrupt.append(encodable(where_and_why))

    def merge(self, other: ReadStats) -> None:
        self.files += other.files
        self.payloads += other.payloads
        self.rejected_spans += other.rejected_spans
        self.dropped_log_records += other.dropped_log_records
        self.corrupt_total += other.corrupt_total
        room = self.corrupt_limit - len(self.corrupt)
        self.corrupt.extend(other.corrupt[: max(room, 0)])


@dataclass
class RunSummary:
    """Everything a report needs; constant size in the number of traces."""

    read: ReadStats = field(default_factory=ReadStats)
    spans: int = 0
    log_records: int = 0
    traces: int = 0
    untraceable: int = 0  # traces whose trajectory could not be built
    skipped: int = 0  # traces that are no agent run (not evaluated)
    skipped_traces: list[str] = field(default_factory=list)  # "trace id (reason)", the first
    metrics: dict[MetricKey, MetricSummary] = field(default_factory=dict)
    failures: FailureSample = field(default_factory=lambda: FailureSample(DEFAULT_FAILURES_KEPT))

    def add(
        self, trace_id: str, service: str, text: str | None, outcomes: Sequence[Outcome]
    ) -> None:
        """Account for one evaluated trace."""
        self.add_metrics(outcomes)
        checks = failed_checks(outcomes)
        if checks:
            failure = TraceFailure(trace_id, encodable(service), short_input(text), checks)
            self.failures.add(failure)

    def add_skipped(self, trace_id: str, reason: str) -> None:
        """Account for a trace that is no agent run."""
        self.skipped += 1
        if len(self.skipped_traces) < DEFAULT_SKIPPED_KEPT:
            self.skipped_traces.append(f"{trace_id} ({encodable(reason)})")

    def add_metrics(self, outcomes: Sequence[Outcome]) -> None:
        metrics = self.metrics
        for outcome in outcomes:
            key = (outcome.spec_id, outcome.evaluator)
            metric = metrics.get(key)
            if metric is None:
                metric = metrics[key] = MetricSummary()
            metric.add(outcome)

    def merge(self, other: RunSummary) -> None:
        self.read.merge(other.read)
        self.spans += other.spans
        self.log_records += other.log_records
        self.traces += other.traces
        self.untraceable += other.untraceable
        self.skipped += other.skipped
        room = DEFAULT_SKIPPED_KEPT - len(self.skipped_traces)
        self.skipped_traces.extend(other.skipped_traces[: max(room, 0)])
        for key, metric in other.metrics.items():
            self.metrics.setdefault(key, MetricSummary()).merge(metric)
        self.failures.merge(other.failures)

    def sorted_metrics(self) -> list[tuple[MetricKey, MetricSummary]]:
        """Metrics ordered always-on first, then by spec id and evaluator id."""
        return sorted(self.metrics.items(), key=lambda item: (item[0][0] or "", item[0][1]))
