"""One completed trace → trajectory → evaluations → sinks. Shared by serve and replay."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from collector.model import Trace
from collector.normalize import Mappings, normalize
from collector.sinks import ResultSink
from collector.telemetry import Telemetry
from evaluators.runner import BoundEvaluator, EvaluationRunner, Outcome
from evaluators.spec import SpecSet
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)


class TraceProcessor:
    """Evaluates completed traces and hands the results to every sink.

    ``specs`` is called once per trace so that a reload takes effect on the next
    trace without locking. ``always`` are the evaluators run on every trace
    without a spec (``evaluation.always``: latency, failure). Never raises: a
    trace that cannot be normalised and a failing sink are logged and counted.
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
    ) -> None:
        self._specs = specs
        self._always = tuple(always)
        self._sinks = tuple(sinks)
        self._telemetry = telemetry
        self._mappings = mappings
        self._runner = runner or EvaluationRunner()
        self._normalize_failures_logged = 0

    def process(self, trace: Trace) -> list[Outcome] | None:
        """Evaluate ``trace``; returns its outcomes, or None if it could not be normalised."""
        trajectory = self._trajectory(trace)
        if trajectory is None:
            return None
        outcomes = self.evaluate(trajectory)
        self._emit(trajectory, outcomes)
        return outcomes

    def evaluate(self, trajectory: Trajectory) -> list[Outcome]:
        """Run the always-on evaluators and those of every spec matching ``trajectory``."""
        outcomes = self._runner.run(trajectory, self._always)
        for spec in self._specs().matching(trajectory):
            outcomes.extend(self._runner.run(trajectory, spec.bound))
        return outcomes

    def close(self) -> None:
        """Close every sink and the runner; safe to call twice."""
        for sink in self._sinks:
            try:
                sink.close()
            except Exception:  # one sink failing to close must not keep others open
                log.exception("closing sink %s failed", sink.name)
        self._runner.close()

    def _trajectory(self, trace: Trace) -> Trajectory | None:
        try:
            return normalize(trace, self._mappings)
        except Exception:  # a normalizer bug must cost one trace, not the daemon
            self._telemetry.normalize_errors.inc()
            if self._normalize_failures_logged < 10:
                self._normalize_failures_logged += 1
                log.exception("cannot build the trajectory of trace %s", trace.trace_id.hex())
            return None

    def _emit(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        for sink in self._sinks:
            try:
                sink.write(trajectory, outcomes)
            except Exception:  # the sink boundary: count, log, go on with the others
                self._telemetry.sink_errors.labels(sink.name).inc()
                log.exception("sink %s failed for trace %s", sink.name, trajectory.trace_id)
