"""What each worker publishes to the front without a message: a few integers in shared
memory (ADR 0018).

A worker writes its slots after every export and timer tick; the front reads them
to refuse a request before forwarding when its worker is full, for ``/readyz``, and,
when a worker dies, to count what it held as lost. One writer per slot (its
worker), word-sized values: no lock is needed for a reading that is a moment old.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class Slot(IntEnum):
    READY = 0  # 1 once the worker's pipeline runs, 0 when it stops
    FULL = 1  # 1 while its pipeline refuses everything (evaluation queue full)
    TRACES = 2  # traces held: assembling or queued for evaluation
    SPANS = 3  # spans and log records held by traces being assembled


SLOTS = len(Slot)


def shared_array(context: Any, workers: int) -> Any:
    """The shared integers of ``workers`` workers (a ``multiprocessing`` RawArray)."""
    return context.RawArray("q", workers * SLOTS)


class WorkerState:
    """One worker's slots in the shared array."""

    def __init__(self, array: Any, index: int) -> None:
        self._array = array
        self._base = index * SLOTS

    def get(self, slot: Slot) -> int:
        return int(self._array[self._base + slot])

    def set(self, slot: Slot, value: int) -> None:
        self._array[self._base + slot] = value

    def publish(self, ready: bool, full: bool, traces: int, spans: int) -> None:
        base, array = self._base, self._array
        array[base + Slot.READY] = int(ready)
        array[base + Slot.FULL] = int(full)
        array[base + Slot.TRACES] = traces
        array[base + Slot.SPANS] = spans

    def clear(self) -> None:
        """All zero: a worker (re)starting holds nothing and is not ready."""
        self.publish(False, False, 0, 0)
