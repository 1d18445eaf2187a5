"""The evaluation side as one unit: what a pipeline worker (or a replay) owns.

``EvaluationStage`` takes completed traces in and writes results out; inside it,
``TraceProcessor`` evaluates each trace and ``SessionStage`` (when sessions are on)
holds the turns of conversations and evaluates each finished one. Every method is
called from one thread (the daemon's evaluation thread, or replay's), except
``session_deadline``. Built by ``collector.processing.wiring.build_stage``.
"""

from __future__ import annotations

from collector.assembly.sessions import SessionCompletion
from collector.core.records import Trace
from collector.processing.processor import TraceProcessor
from collector.processing.sessions import SessionStage
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory


class EvaluationStage:
    """Completed traces → results in the sinks, sessions included."""

    def __init__(self, processor: TraceProcessor, sessions: SessionStage | None) -> None:
        self._processor = processor
        self._sessions = sessions

    @property
    def session_deadline(self) -> float | None:
        """The clock time at which ``tick_sessions`` will complete a session, or None.
        Safe to read from any thread (the daemon's timer does)."""
        return None if self._sessions is None else self._sessions.deadline

    def process(self, trace: Trace) -> list[Outcome] | None:
        """Evaluate each run of ``trace`` (see ``TraceProcessor.process``), then hold it
        as a turn of its session; returns the runs' first outcomes, or None if the trace
        was not readable."""
        runs = self._processor.process(trace)
        if runs is None:
            return None
        outcomes: list[Outcome] = []
        for evaluated in runs:
            if self._sessions is not None and not evaluated.skipped:
                self._sessions.add_turn(evaluated.trajectory, evaluated.specs)
            outcomes.extend(evaluated.outcomes)
        return outcomes

    def evaluate(self, trajectory: Trajectory) -> list[Outcome]:
        """The outcomes of ``trajectory`` with judges awaited; nothing is written."""
        return self._processor.evaluate(trajectory)

    def tick_sessions(self) -> None:
        """Evaluate the sessions complete at the clock's current time."""
        if self._sessions is not None:
            self._sessions.tick()

    def flush_sessions(self, reason: SessionCompletion, deadline: float | None = None) -> None:
        """Evaluate every open session (``SessionStage.flush``)."""
        if self._sessions is not None:
            self._sessions.flush(reason, deadline)

    def close(self, timeout: float | None = None) -> None:
        """Finish judges, close sinks and runner (``TraceProcessor.close``)."""
        self._processor.close(timeout)
