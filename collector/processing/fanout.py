"""The sink boundary: every result to every sink, one caller at a time."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from prometheus_client import Counter

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
    written. Never raises.

    Once ``close`` began, results are no longer written: an evaluation that outlived
    the shutdown grace counts its trace (or session) as dropped
    (``shutdown_timeout``) and logs one line, instead of writing to closed sinks.
    """

    def __init__(self, sinks: Sequence[ResultSink], telemetry: Telemetry) -> None:
        self._sinks = tuple(sinks)
        self._telemetry = telemetry
        self._lock = threading.Lock()
        self._closed = False
        self._late_logged = False

    @property
    def reads(self) -> frozenset[str]:
        """The optional trajectory parts (``evaluators.depth``) some sink writes out."""
        found: frozenset[str] = frozenset()
        for sink in self._sinks:
            found |= sink.reads
        return found

    def write(
        self, trajectory: Trajectory, outcomes: Sequence[Outcome], trace: Trace | None = None
    ) -> None:
        """One evaluated trace; with ``trace``, sinks that forward spans get them."""
        dropped = self._telemetry.evaluation.traces_dropped
        if trace is None:
            self._each(trajectory, dropped, lambda sink: sink.write(trajectory, outcomes))
        else:
            self._each(
                trajectory, dropped, lambda sink: sink.write_trace(trace, trajectory, outcomes)
            )

    def write_more(self, trajectory: Trajectory, outcome: Outcome) -> None:
        """A later outcome (a judge's) of a trajectory already written. Judges are
        closed before the sinks, so none arrives late unless a judge outlived its
        drain; such an outcome is logged, not counted (its trace was written)."""
        self._each(trajectory, None, lambda sink: sink.write_outcomes(trajectory, [outcome]))

    def write_session(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """The outcomes of session specs on a merged session trajectory."""
        dropped = self._telemetry.assembly.sessions_dropped
        self._each(trajectory, dropped, lambda sink: sink.write_session(trajectory, outcomes))

    def write_skipped(self, trajectory: Trajectory) -> None:
        """A trace that is no agent run, not evaluated."""
        self._each(trajectory, None, lambda sink: sink.write_skipped(trajectory))

    def close(self, deadline: float | None) -> None:
        """Close every sink, each within what is left until ``deadline``
        (``time.monotonic``; None: each sink's own limits).

        A write in progress finishes first if it does before ``deadline``; writes
        arriving later are counted as dropped (see the class docstring).
        """
        self._closed = True
        timeout = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
        locked = self._lock.acquire(timeout=timeout)
        try:
            self._close_sinks(deadline)
        finally:
            if locked:
                self._lock.release()

    def _close_sinks(self, deadline: float | None) -> None:
        for sink in self._sinks:
            try:
                if deadline is None:
                    sink.close()
                else:
                    sink.close_within(max(0.0, deadline - time.monotonic()))
            except Exception:  # one sink failing to close must not keep others open
                log.exception("closing sink %s failed", sink.name)

    def _each(
        self,
        trajectory: Trajectory,
        dropped: Counter | None,
        write: Callable[[ResultSink], None],
    ) -> None:
        with self._lock:
            if self._closed:
                self._drop_late(trajectory, dropped)
                return
            for sink in self._sinks:
                try:
                    write(sink)
                except Exception:  # the sink boundary: count, log, go on with the others
                    self._telemetry.evaluation.sink_errors.labels(sink.name).inc()
                    log.exception("sink %s failed for trace %s", sink.name, trajectory.trace_id)

    def _drop_late(self, trajectory: Trajectory, dropped: Counter | None) -> None:
        """Results after ``close``: counted, one log line per process (not per result)."""
        if dropped is not None:
            dropped.labels("shutdown_timeout").inc()
        if not self._late_logged:
            self._late_logged = True
            log.warning(
                "results of trace %s arrived after the sinks closed (shutdown grace over): "
                "not written; counted as dropped (reason shutdown_timeout)",
                trajectory.trace_id,
            )
