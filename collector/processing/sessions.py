"""Sessions on the evaluation side: hold each evaluated turn, evaluate finished sessions.

Each evaluated trajectory with a session id becomes a turn of its session while any
``scope: session`` spec can match it; a completed session is merged
(``evaluators.session_merge.merge_session``) and handed to ``evaluate``. The
assembler lives on the evaluation thread (no lock; session results come from the
thread that writes every other result); the daemon's timer only asks for a check
when the published ``deadline`` has passed, and every processed trace checks too.
See docs/adr/0012-session-evaluation.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from collector.assembly.sessions import Session, SessionAssembler, SessionCompletion
from collector.config.settings import Sessions
from collector.core.clock import Clock
from collector.telemetry.registry import Telemetry
from evaluators.session_merge import merge_session
from evaluators.spec import SpecSet
from evaluators.trajectory import Trajectory


class SessionStage:
    """Turns in, merged session trajectories out to ``evaluate``. One thread calls
    every method; ``deadline`` alone may be read from any thread."""

    def __init__(
        self,
        config: Sessions,
        clock: Clock,
        telemetry: Telemetry,
        evaluate: Callable[[Trajectory], None],
    ) -> None:
        self._assembler = SessionAssembler(config, clock, telemetry)
        self._evaluate = evaluate
        self._telemetry = telemetry

    @property
    def deadline(self) -> float | None:
        """The clock time at which ``tick`` will complete a session, or None."""
        return self._assembler.deadline

    def add_turn(self, trajectory: Trajectory, specs: SpecSet) -> None:
        """Hold ``trajectory`` if a session spec of ``specs`` may match its session (the
        rest is decided on the merge, so the order turns arrive in does not matter),
        then complete whatever is due: a busy daemon's timer marker may wait behind
        a backlog, and due sessions must not."""
        if self._may_match(trajectory, specs):
            self._finish(self._assembler.add(trajectory))
        if self._assembler.due():
            self.tick()

    @staticmethod
    def _may_match(trajectory: Trajectory, specs: SpecSet) -> bool:
        return (
            bool(trajectory.session_id)
            and specs.has_session_specs
            and (specs.may_hold_session_of(trajectory))
        )

    def tick(self) -> None:
        """Evaluate the sessions complete at the clock's current time."""
        self._finish(self._assembler.tick())

    def flush(self, reason: SessionCompletion, deadline: float | None = None) -> None:
        """Evaluate every open session now, oldest first (shutdown, end of input).

        Past ``deadline`` (``time.monotonic``) the sessions still to evaluate are
        dropped and counted (``evald_sessions_dropped_total{reason="shutdown_timeout"}``).
        """
        self._finish(self._assembler.flush(reason), deadline)

    def _finish(self, sessions: Iterable[Session], deadline: float | None = None) -> None:
        for session in sessions:
            if deadline is not None and time.monotonic() > deadline:
                self._telemetry.assembly.sessions_dropped.labels("shutdown_timeout").inc()
            else:
                self._evaluate(merge_session(session.turns))
