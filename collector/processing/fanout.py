"""The sink boundary: every result to every sink, one caller at a time."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from collector.core.records import Trace
from collector.sinks.base import ResultSink
from collector.telemetry.registry import Telemetry
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)


class SinkFanout:
    """Hands results to every sink under one lock: judge results arrive on the judge
    thread while the evaluation thread writes the next trace. A sink that raises is
    counted (``evald_sink_errors_total{sink}``) and logged; the others are still
    written. Never raises."""

    def __init__(self, sinks: Sequence[ResultSink], telemetry: Telemetry) -> None:
        self._sinks = tuple(sinks)
        self._telemetry = telemetry
        self._lock = threading.Lock()

    def write(
        self, trajectory: Trajectory, outcomes: Sequence[Outcome], trace: Trace | None = None
    ) -> None:
        """One evaluated trace; with ``trace``, sinks that forward spans get them."""
        if trace is None:
            self._each(trajectory, lambda sink: sink.write(trajectory, outcomes))
        else:
            self._each(trajectory, lambda sink: sink.write_trace(trace, trajectory, outcomes))

    def write_more(self, trajectory: Trajectory, outcome: Outcome) -> None:
        """A later outcome (a judge's) of a trajectory already written."""
        self._each(trajectory, lambda sink: sink.write_outcomes(trajectory, [outcome]))

    def write_session(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """The outcomes of session specs on a merged session trajectory."""
        self._each(trajectory, lambda sink: sink.write_session(trajectory, outcomes))

    def write_skipped(self, trajectory: Trajectory) -> None:
        """A trace that is no agent run, not evaluated."""
        self._each(trajectory, lambda sink: sink.write_skipped(trajectory))

    def close(self, deadline: float | None) -> None:
        """Close every sink, each within what is left until ``deadline``
        (``time.monotonic``; None: each sink's own limits)."""
        for sink in self._sinks:
            try:
                if deadline is None:
                    sink.close()
                else:
                    sink.close_within(max(0.0, deadline - time.monotonic()))
            except Exception:  # one sink failing to close must not keep others open
                log.exception("closing sink %s failed", sink.name)

    def _each(self, trajectory: Trajectory, write: Callable[[ResultSink], None]) -> None:
        with self._lock:
            for sink in self._sinks:
                try:
                    write(sink)
                except Exception:  # the sink boundary: count, log, go on with the others
                    self._telemetry.evaluation.sink_errors.labels(sink.name).inc()
                    log.exception("sink %s failed for trace %s", sink.name, trajectory.trace_id)
