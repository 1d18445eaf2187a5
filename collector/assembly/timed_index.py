"""The bounded, timer-ordered index both assemblers hold their entries in.

Traces (``collector.assembly.traces``) and sessions (``collector.assembly.sessions``)
complete the same way: after ``idle_timeout`` without activity, or ``max_age`` after
they were first seen; and when memory runs out the oldest go first. This index keeps
the two orders that make each of those O(1) per entry released.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Generic, Protocol, TypeVar


class Timed(Protocol):
    """An entry: when it was first seen and last active, on the assembler's clock."""

    first_seen: float
    last_seen: float


K = TypeVar("K", bound=Hashable)
E = TypeVar("E", bound=Timed)


class TimedIndex(Generic[K, E]):
    """Entries by first-seen time (the age and eviction order) and, for the entries
    that may complete when idle, by last activity (the idle order).

    OrderedDicts, not dicts: a plain dict used as a FIFO leaves deleted slots at its
    front, so finding the first live entry costs O(deletions since the last resize).
    """

    def __init__(self, idle_timeout: float, max_age: float) -> None:
        self._idle_timeout = idle_timeout
        self._max_age = max_age
        self._by_age: OrderedDict[K, E] = OrderedDict()
        self._by_activity: OrderedDict[K, E] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_age)

    def __contains__(self, key: object) -> bool:
        return key in self._by_age

    def __iter__(self) -> Iterator[E]:
        """Every entry, oldest first."""
        return iter(self._by_age.values())

    @property
    def idle_candidates(self) -> int:
        """How many entries are in the idle order (``touch``ed and not removed)."""
        return len(self._by_activity)

    def get(self, key: K) -> E | None:
        return self._by_age.get(key)

    def oldest(self) -> E | None:
        return next(iter(self._by_age.values()), None)

    def insert(self, key: K, entry: E) -> None:
        """A new entry, youngest by age; it joins the idle order when ``touch``ed."""
        self._by_age[key] = entry

    def touch(self, key: K, entry: E, now: float) -> None:
        """``entry`` was active at ``now``: it may complete ``idle_timeout`` later."""
        entry.last_seen = now
        self._by_activity[key] = entry
        self._by_activity.move_to_end(key)

    def remove(self, key: K) -> None:
        del self._by_age[key]
        self._by_activity.pop(key, None)

    def due(self, now: float) -> tuple[E, bool] | None:
        """The next entry due at ``now`` and whether it is due for being idle (else for
        its age), or None. Idle first: an entry that went quiet and also reached its
        max age (a late tick, a replay clock jump) is reported as complete rather than
        as cut off."""
        idle = next(iter(self._by_activity.values()), None)
        if idle is not None and idle.last_seen + self._idle_timeout <= now:
            return idle, True
        old = self.oldest()
        if old is not None and old.first_seen + self._max_age <= now:
            return old, False
        return None

    def next_deadline(self) -> float | None:
        """The earliest clock time at which ``due`` returns an entry, or None."""
        deadlines = []
        idle = next(iter(self._by_activity.values()), None)
        if idle is not None:
            deadlines.append(idle.last_seen + self._idle_timeout)
        old = self.oldest()
        if old is not None:
            deadlines.append(old.first_seen + self._max_age)
        return min(deadlines, default=None)
