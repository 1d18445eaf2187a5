"""Clocks injected into time-driven components, so tests and replay never sleep."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """A source of monotonic seconds."""

    def now(self) -> float:
        """Return the current time in seconds; never decreases."""
        ...


class MonotonicClock:
    """Wall-clock time for the daemon (``time.monotonic``)."""

    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told: tests step it, replay jumps it."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        """Move forward by ``seconds`` (negative values are refused)."""
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        self._now += seconds

    def set(self, now: float) -> None:
        """Jump to ``now`` if it is later than the current time; never go back."""
        self._now = max(self._now, now)
