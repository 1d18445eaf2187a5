"""One completed trace → trajectory → evaluations → sinks. Shared by serve and replay.

Deterministic evaluators run here, in the caller's thread (the pipeline's
evaluation thread, or replay's). LLM judge evaluators never do: with a
``JudgeWorker`` they are either handed over without blocking (``wait_for_judges``
False, the daemon: a full judge queue sheds the work, counted, and the results
reach the sinks later through ``write_more``) or awaited within the judges'
limits (True, replay: complete and reproducible results in one ``write``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

from collector.model import Trace
from collector.normalize import Mappings, normalize
from collector.sinks import ResultSink, close_sink, write_more, write_to
from collector.telemetry import Telemetry
from evaluators.judges.base import JudgeEvaluator
from evaluators.judges.worker import JudgeWorker
from evaluators.runner import BoundEvaluator, EvaluationRunner, Outcome, due
from evaluators.spec import SpecSet
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)


class TraceProcessor:
    """Evaluates completed traces and hands the results to every sink.

    ``specs`` is called once per trace so that a reload takes effect on the next
    trace without locking. ``always`` are the evaluators run on every trace
    without a spec (``evaluation.always``: latency, failure). A dataset spec runs
    the evaluators of the trace's item; a trace it matches but no item does is
    counted (``evald_dataset_unmatched_traces_total{spec}``, and a log line per
    spec on ``close``). Never raises: a trace that cannot be normalised and a
    failing sink are logged and counted.

    Sinks are called under one lock: judge results arrive on the judge thread
    while the evaluation thread writes the next trace.
    """

    def __init__(
        self,
        specs: Callable[[], SpecSet],
        always: Sequence[BoundEvaluator],
        sinks: Sequence[ResultSink],
        telemetry: Telemetry,
        *,
        mappings: Mappings | None = None,
        runner: EvaluationRunner | None = None,
        judges: JudgeWorker | None = None,
        wait_for_judges: bool = True,
        judge_drain_timeout: float = 5.0,
    ) -> None:
        self._specs = specs
        self._always = tuple(always)
        self._sinks = tuple(sinks)
        self._telemetry = telemetry
        self._mappings = mappings
        self._runner = runner or EvaluationRunner()
        self._judges = judges
        self._wait_for_judges = wait_for_judges
        self._judge_drain_timeout = judge_drain_timeout
        self._sink_lock = threading.Lock()
        self._normalize_failures_logged = 0
        self._unmatched: Counter[str] = Counter()

    def process(self, trace: Trace) -> list[Outcome] | None:
        """Evaluate ``trace``; returns its outcomes, or None if it could not be normalised.

        With judges handed over (not awaited) the outcomes returned are the
        deterministic ones; the judges' follow.
        """
        trajectory = self._trajectory(trace)
        if trajectory is None:
            return None
        inline, judged = self._split(self._bound(trajectory), trajectory)
        outcomes = self._runner.run(trajectory, inline)
        if judged and self._wait_for_judges:
            outcomes.extend(self._judge_now(trajectory, judged))
        self._emit(trajectory, outcomes, trace)
        if judged and not self._wait_for_judges:
            self._hand_over(trajectory, judged)  # after the first write: later ones add to it
        return outcomes

    def evaluate(self, trajectory: Trajectory) -> list[Outcome]:
        """Every due evaluator of the always-on set and of the matching specs, judges awaited."""
        inline, judged = self._split(self._bound(trajectory), trajectory)
        return [*self._runner.run(trajectory, inline), *self._judge_now(trajectory, judged)]

    def close(self, timeout: float | None = None) -> None:
        """Let pending judge work finish, then close every sink and the runner; safe to
        call twice.

        ``timeout`` is the whole budget (daemon shutdown): judges get at most half of
        it (and at most ``judge_drain_timeout``), the sinks' flush what is left. None:
        judges get ``judge_drain_timeout`` and each sink its own limits (replay).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._judges is not None:
            drain = self._judge_drain_timeout
            self._judges.close(drain if timeout is None else min(drain, timeout / 2))
        for spec_id, count in sorted(dict(self._unmatched).items()):  # copy: the worker may add
            log.info("spec %s: %d trace(s) matched no item of its dataset", spec_id, count)
        self._unmatched.clear()
        for sink in self._sinks:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                close_sink(sink, remaining)
            except Exception:  # one sink failing to close must not keep others open
                log.exception("closing sink %s failed", sink.name)
        self._runner.close()

    def _bound(self, trajectory: Trajectory) -> list[BoundEvaluator]:
        bound = list(self._always)
        for spec in self._specs().matching(trajectory):
            chosen = spec.evaluators_for(trajectory)
            if chosen is None:
                self._unmatched[spec.id] += 1
                self._telemetry.dataset_unmatched.labels(spec.id).inc()
            else:
                bound.extend(chosen)
        return bound

    def _split(
        self, bound: Sequence[BoundEvaluator], trajectory: Trajectory
    ) -> tuple[list[BoundEvaluator], list[BoundEvaluator]]:
        """(run here, judge) among the due evaluators. Without a judge worker, judge
        evaluators run here too and report that no judge is configured."""
        inline: list[BoundEvaluator] = []
        judged: list[BoundEvaluator] = []
        for item in bound:
            if not due(item, trajectory):
                continue
            is_judge = self._judges is not None and isinstance(item.evaluator, JudgeEvaluator)
            (judged if is_judge else inline).append(item)
        return inline, judged

    def _judge_now(self, trajectory: Trajectory, judged: list[BoundEvaluator]) -> list[Outcome]:
        if not judged or self._judges is None:
            return []
        return self._judges.evaluate(trajectory, judged)

    def _hand_over(self, trajectory: Trajectory, judged: list[BoundEvaluator]) -> None:
        assert self._judges is not None
        for item in judged:
            self._judges.submit(trajectory, item, self._emit_later)  # sheds when full

    def _trajectory(self, trace: Trace) -> Trajectory | None:
        try:
            return normalize(trace, self._mappings)
        except Exception:  # a normalizer bug must cost one trace, not the daemon
            self._telemetry.normalize_errors.inc()
            if self._normalize_failures_logged < 10:
                self._normalize_failures_logged += 1
                log.exception("cannot build the trajectory of trace %s", trace.trace_id.hex())
            return None

    def _emit(
        self, trajectory: Trajectory, outcomes: Sequence[Outcome], trace: Trace | None = None
    ) -> None:
        with self._sink_lock:
            for sink in self._sinks:
                try:
                    write_to(sink, trajectory, outcomes, trace)  # the spans for sinks that forward
                except Exception:  # the sink boundary: count, log, go on with the others
                    self._sink_failed(sink, trajectory)

    def _emit_later(self, trajectory: Trajectory, outcome: Outcome) -> None:
        """A judge's outcome for a trajectory already written (judge thread)."""
        with self._sink_lock:
            for sink in self._sinks:
                try:
                    write_more(sink, trajectory, [outcome])
                except Exception:  # the sink boundary, as in _emit
                    self._sink_failed(sink, trajectory)

    def _sink_failed(self, sink: ResultSink, trajectory: Trajectory) -> None:
        self._telemetry.sink_errors.labels(sink.name).inc()
        log.exception("sink %s failed for trace %s", sink.name, trajectory.trace_id)
