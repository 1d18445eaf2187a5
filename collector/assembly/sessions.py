"""Session assembly: the evaluated turns of each conversation, held until it is over.

A conversation is one trace per user turn, tied together by a session id. Specs
with ``scope: session`` are evaluated once per session, on the merge of its turns
(``evaluators.session_merge.merge_session``), so the turns must be held until the
conversation is over. OTLP has no "conversation ended" signal either, so, as for
traces (``collector.assembly.traces``), completion is decided by timers on an injected
clock, and memory is bounded by evaluating the oldest sessions early. See
docs/adr/0012-session-evaluation.md.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from collector.assembly.timed_index import TimedIndex
from collector.config.settings import Sessions
from collector.core.clock import Clock
from collector.telemetry.registry import Telemetry
from evaluators.trajectory import Trajectory

SessionKey = tuple[str, str]  # (service, session id)


class SessionCompletion(StrEnum):
    """Why the assembler released a session (``evald_sessions_completed_total{reason}``)."""

    IDLE = "idle"  # no new turn for idle_timeout
    MAX_AGE = "max_age"  # max_age after its first turn
    MAX_TURNS = "max_turns"  # it reached max_turns
    EVICTED = "evicted"  # released early to stay within max_sessions / max_held_turns
    SHUTDOWN = "shutdown"  # the daemon is stopping
    END_OF_INPUT = "end_of_input"  # replay reached the end of its files


class Session(NamedTuple):
    """The turns of one session, in arrival order, released once."""

    service: str
    session_id: str
    turns: tuple[Trajectory, ...]
    completed_by: SessionCompletion
    first_seen: float  # assembler clock, seconds
    last_seen: float


class _Open:
    """A session still receiving turns; mutable, owned by one ``SessionAssembler``."""

    __slots__ = ("first_seen", "key", "last_seen", "turns")

    def __init__(self, key: SessionKey, now: float) -> None:
        self.key = key
        self.turns: list[Trajectory] = []
        self.first_seen = now
        self.last_seen = now

    def freeze(self, reason: SessionCompletion) -> Session:
        service, session_id = self.key
        turns = tuple(self.turns)
        return Session(service, session_id, turns, reason, self.first_seen, self.last_seen)


class SessionAssembler:
    """A bounded map (service, session id) -> turns; each session released once.

    Turns are keyed by service *and* session id: session ids are chosen by
    applications and are often not unique across agents (``thread-1``, ``default``).
    Completion (``Session.completed_by``):

    * ``IDLE``: no new turn for ``idle_timeout`` (the conversation went quiet);
    * ``MAX_AGE``: ``max_age`` after its first turn;
    * ``MAX_TURNS``: at once, when a turn makes it ``max_turns`` long;
    * ``EVICTED``: a new session would exceed ``max_sessions``, or a new turn
      ``max_held_turns``: the oldest sessions (by first turn) go first, counted in
      ``evald_sessions_evicted_total{limit}``;
    * ``flush(reason)``: everything still open (shutdown, end of replay input).

    A turn arriving after its session was released starts a new session with the
    same id (the conversation resumed after ``idle_timeout``): each part is
    evaluated on its own.

    ``add``, ``tick`` and ``flush`` return the sessions they released, oldest first,
    already removed: unlike traces there is no back-pressure to retry on, so the
    caller evaluates each (or counts it dropped) and nothing is offered twice.

    Not thread-safe: one owner calls every method (the daemon's evaluation thread,
    or replay). ``deadline`` alone may be read from any thread: it is republished,
    as one float, after every change.
    """

    def __init__(
        self,
        config: Sessions,
        clock: Clock,
        telemetry: Telemetry,
    ) -> None:
        self._config = config
        self._clock = clock
        self._telemetry = telemetry
        self._released: list[Session] = []  # by the call in progress
        self._sessions: TimedIndex[SessionKey, _Open] = TimedIndex(
            config.idle_timeout, config.max_age
        )
        self._turns = 0
        self.deadline: float | None = None  # see next_deadline

    @property
    def in_flight_sessions(self) -> int:
        return len(self._sessions)

    @property
    def in_flight_turns(self) -> int:
        return self._turns

    def due(self) -> bool:
        """Whether ``tick`` would release a session now."""
        deadline = self.deadline
        return deadline is not None and deadline <= self._clock.now()

    def add(self, trajectory: Trajectory) -> list[Session]:
        """Hold ``trajectory`` as a turn of its session; O(1) plus evictions. Returns
        the sessions released to make room or by ``max_turns``.

        A trajectory without a session id is ignored.
        """
        if not trajectory.session_id:
            return []
        key = (trajectory.service, trajectory.session_id)
        now = self._clock.now()
        self._make_room(key)
        session = self._sessions.get(key)
        if session is None:
            session = _Open(key, now)
            self._sessions.insert(key, session)
        session.turns.append(trajectory)
        self._turns += 1
        self._sessions.touch(key, session, now)
        if len(session.turns) >= self._config.max_turns:
            self._release(session, SessionCompletion.MAX_TURNS)
        return self._published()

    def tick(self) -> list[Session]:
        """Release every session due at ``clock.now()``; cost O(released sessions)."""
        now = self._clock.now()
        while (due := self._sessions.due(now)) is not None:
            session, idle = due
            self._release(session, SessionCompletion.IDLE if idle else SessionCompletion.MAX_AGE)
        return self._published()

    def flush(self, reason: SessionCompletion) -> list[Session]:
        """Release every open session, oldest first, with ``reason``."""
        while (session := self._sessions.oldest()) is not None:
            self._release(session, reason)
        return self._published()

    def next_deadline(self) -> float | None:
        """The earliest clock time at which ``tick`` releases a session, or None."""
        return self._sessions.next_deadline()

    def _make_room(self, key: SessionKey) -> None:
        """Evict the oldest other sessions until a turn of ``key`` fits both limits."""
        config = self._config
        new = key not in self._sessions
        while self._sessions:
            if new and len(self._sessions) >= config.max_sessions:
                limit = "max_sessions"
            elif self._turns >= config.max_held_turns:
                limit = "max_held_turns"
            else:
                return
            victim = next(s for s in self._sessions if s.key != key)
            self._release(victim, SessionCompletion.EVICTED)
            self._telemetry.assembly.sessions_evicted.labels(limit=limit).inc()

    def _release(self, session: _Open, reason: SessionCompletion) -> None:
        self._sessions.remove(session.key)
        self._turns -= len(session.turns)
        self._telemetry.assembly.sessions_completed.labels(reason=reason.value).inc()
        self._released.append(session.freeze(reason))

    def _published(self) -> list[Session]:
        """Publishes the new state; returns (and forgets) what this call released."""
        self.deadline = self.next_deadline()
        self._telemetry.assembly.sessions_in_flight.set(len(self._sessions))
        self._telemetry.assembly.session_turns_in_flight.set(self._turns)
        released, self._released = self._released, []
        return released
