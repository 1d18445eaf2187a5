"""The session assembler: completion by idle time, age and turns; bounded memory; counters."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from collector.assembly.sessions import Session, SessionAssembler, SessionCompletion
from collector.config.settings import Config, Sessions
from collector.core.clock import ManualClock
from collector.telemetry.registry import Telemetry
from evaluators.testing import TrajectoryBuilder
from evaluators.trajectory import Trajectory


def turn(session: str | None, n: int = 0, service: str = "svc") -> Trajectory:
    builder = TrajectoryBuilder(f"turn {n}", service=service, trace_id=f"{n:032x}")
    return (builder.session(session) if session else builder).build()


class Harness:
    def __init__(self, **settings: Any) -> None:
        self.clock = ManualClock(100.0)
        self.telemetry = Telemetry()
        self.released: list[Session] = []
        config = Sessions.model_validate({"idle_timeout": 10, "max_age": 60, **settings})
        self.sessions = SessionAssembler(config, self.clock, self.telemetry)

    def add(self, session: str, *turns: int, service: str = "svc") -> None:
        for n in turns:
            self.add_turn(turn(session, n, service))

    def add_turn(self, trajectory: Trajectory) -> None:
        self.released.extend(self.sessions.add(trajectory))

    def tick(self) -> None:
        self.released.extend(self.sessions.tick())

    def flush(self, reason: SessionCompletion) -> None:
        self.released.extend(self.sessions.flush(reason))

    def done(self) -> list[tuple[str, tuple[int, ...], str]]:
        """(session id, turn numbers, reason) of every released session, in order."""
        return [
            (s.session_id, tuple(int(t.trace_id, 16) for t in s.turns), s.completed_by.value)
            for s in self.released
        ]

    def metric(self, name: str, **labels: str) -> float:
        return self.telemetry.registry.get_sample_value(name, labels) or 0.0


def test_defaults_are_documented_values() -> None:
    config = Config().sessions
    assert (config.idle_timeout, config.max_age) == (900.0, 3600.0)
    assert (config.max_turns, config.max_sessions, config.max_held_turns) == (100, 10_000, 100_000)
    assert Config.model_validate({"sessions": {"idle_timeout": "15m"}}).sessions.idle_timeout == 900


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValidationError, match="max_turns must not exceed max_held_turns"):
        Sessions(max_turns=10, max_held_turns=5)
    with pytest.raises(ValidationError, match="greater than 0"):
        Sessions(max_sessions=0)


def test_a_session_completes_after_idle_timeout_since_its_last_turn() -> None:
    h = Harness()
    h.add("a", 1)
    h.clock.advance(8)
    h.add("a", 2)  # restarts the idle timer
    h.clock.advance(8)
    h.tick()
    assert h.released == []
    assert h.sessions.next_deadline() == pytest.approx(118.0)
    h.clock.advance(2)
    h.tick()
    assert h.done() == [("a", (1, 2), "idle")]
    assert h.sessions.in_flight_sessions == 0 and h.sessions.next_deadline() is None
    assert h.metric("evald_sessions_completed_total", reason="idle") == 1


def test_a_busy_session_completes_at_max_age() -> None:
    h = Harness(max_age=20)
    for n in range(5):
        h.add("a", n)
        h.clock.advance(5)  # never idle for 10 s
    h.tick()
    assert h.done() == [("a", (0, 1, 2, 3, 4), "max_age")]


def test_idle_wins_over_max_age_on_a_late_tick() -> None:
    h = Harness(max_age=20)
    h.add("a", 1)
    h.clock.advance(100)
    h.tick()
    assert h.done() == [("a", (1,), "idle")]


def test_a_session_completes_at_once_at_max_turns_and_the_next_turn_starts_anew() -> None:
    h = Harness(max_turns=3)
    h.add("a", 1, 2, 3)
    assert h.done() == [("a", (1, 2, 3), "max_turns")]
    h.add("a", 4)
    h.flush(SessionCompletion.END_OF_INPUT)
    assert h.done()[1] == ("a", (4,), "end_of_input")


def test_sessions_are_keyed_by_service_and_id_and_turns_without_id_ignored() -> None:
    h = Harness()
    h.add("a", 1, service="one")
    h.add("a", 2, service="two")
    h.add_turn(turn(None, 3))
    assert (h.sessions.in_flight_sessions, h.sessions.in_flight_turns) == (2, 2)
    h.flush(SessionCompletion.SHUTDOWN)
    assert [(s.service, len(s.turns)) for s in h.released] == [("one", 1), ("two", 1)]


def test_ticks_release_only_what_is_due_oldest_idle_first() -> None:
    h = Harness()
    h.add("a", 1)
    h.clock.advance(3)
    h.add("b", 2)
    h.clock.advance(3)
    h.add("a", 3)  # a is now the most recently active
    h.clock.advance(7)  # b idle for 10, a for 7
    h.tick()
    assert h.done() == [("b", (2,), "idle")]
    assert h.sessions.in_flight_sessions == 1


def test_max_sessions_evicts_the_oldest_and_counts_it() -> None:
    h = Harness(max_sessions=2)
    h.add("a", 1)
    h.add("b", 2)
    h.add("a", 3)  # an open session takes more turns without eviction
    h.add("c", 4)
    assert h.done() == [("a", (1, 3), "evicted")]
    assert h.metric("evald_sessions_evicted_total", limit="max_sessions") == 1
    assert h.metric("evald_sessions_completed_total", reason="evicted") == 1
    assert h.sessions.in_flight_sessions == 2


def test_max_held_turns_evicts_other_sessions_never_the_one_growing() -> None:
    h = Harness(max_turns=3, max_held_turns=3)
    h.add("a", 1)
    h.add("b", 2, 3)
    h.add("b", 4)  # b reaches 3 turns: a goes to make room, then b completes
    assert h.done() == [("a", (1,), "evicted"), ("b", (2, 3, 4), "max_turns")]
    assert h.metric("evald_sessions_evicted_total", limit="max_held_turns") == 1


def test_memory_stays_bounded_under_many_sessions() -> None:
    h = Harness(max_sessions=50, max_turns=5, max_held_turns=100)
    for n in range(10_000):
        h.add(f"s{n % 997}", n)
        assert h.sessions.in_flight_sessions <= 50 and h.sessions.in_flight_turns <= 100
    h.flush(SessionCompletion.END_OF_INPUT)
    assert sum(len(s.turns) for s in h.released) == 10_000  # every turn evaluated once
    assert h.metric("evald_sessions_in_flight") == 0
    assert h.metric("evald_session_turns_in_flight") == 0


def test_gauges_and_published_deadline_follow_the_state() -> None:
    h = Harness()
    assert h.sessions.deadline is None
    h.add("a", 1, 2)
    assert h.metric("evald_sessions_in_flight") == 1
    assert h.metric("evald_session_turns_in_flight") == 2
    assert h.sessions.deadline == pytest.approx(110.0)
    h.clock.advance(10)
    h.tick()
    assert h.sessions.deadline is None and h.metric("evald_sessions_in_flight") == 0


def test_released_sessions_are_removed_before_they_are_returned() -> None:
    h = Harness()
    h.add("a", 1)
    h.add("b", 2)
    h.clock.advance(10)
    first = h.sessions.tick()
    assert [s.session_id for s in first] == ["a", "b"] and h.sessions.in_flight_sessions == 0
    assert h.sessions.tick() == [] and h.sessions.flush(SessionCompletion.SHUTDOWN) == []
