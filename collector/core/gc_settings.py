"""The cyclic garbage collector's settings for a process that streams traces.

CPython's defaults (a young collection every 700 net container allocations, a full
one every 100 young ones) suit a program whose objects live short lives. A pipeline
process holds tens of thousands of spans for a second or more (the idle timeout)
and allocates a dozen containers per span; with the defaults a serving process
spent 16-19 % of its CPU in the collector (one worker, ``benchmarks/serve_throughput.py``
load), most of it in full collections rescanning every held span and every module
object, yet the pipeline makes almost no cycles (~1 cyclic object per 200 traces
through decode, assembly, normalization and evaluation): reference counting frees
nearly everything. ADR 0024 has the figures.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000
"""Net container allocations between young collections (CPython: 700). Cycles among
young objects (an exception and its traceback, a plug-in's cyclic structure) are
still found at the next young collection: at most this many objects later."""

OLDER_THRESHOLD = 10
"""Collections of one generation between collections of the next (CPython's value)."""


def settle_for_streaming() -> None:
    """Freeze every object alive now and space the collections out.

    Call once the process has loaded what it keeps until it exits (modules, config,
    specs, telemetry): frozen objects are never scanned again, so a full collection
    costs what the traces in flight hold, not what the process has loaded.
    Idempotent; process-wide (CPython has one collector per process).
    """
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, OLDER_THRESHOLD, OLDER_THRESHOLD)


@contextmanager
def streaming_collector() -> Iterator[None]:
    """``settle_for_streaming`` for the length of a ``with`` block, for code that streams
    traces inside a process that is not evald's own (an offline replay run from a test
    or a library): on leaving, the thresholds are those the block found.

    The settings are process-wide, so blocks share them: the first block to enter
    settles, the last to leave restores, whatever threads they run on and however
    they nest. What is alive on entry is frozen, and unfrozen on leaving, only when the
    process had frozen nothing itself (a host's own ``gc.freeze()`` is left alone).
    """
    global _blocks, _saved_thresholds, _froze  # noqa: PLW0603 - process-wide, under _lock
    with _lock:
        if _blocks == 0:
            _saved_thresholds = gc.get_threshold()
            _froze = gc.get_freeze_count() == 0
            if _froze:
                gc.freeze()
            gc.set_threshold(YOUNG_THRESHOLD, OLDER_THRESHOLD, OLDER_THRESHOLD)
        _blocks += 1
    try:
        yield
    finally:
        with _lock:
            _blocks -= 1
            if _blocks == 0:
                if _froze:
                    gc.unfreeze()
                gc.set_threshold(*_saved_thresholds)


_lock = threading.Lock()
_blocks = 0  # ``streaming_collector`` blocks open now
_saved_thresholds: tuple[int, int, int] = gc.get_threshold()
_froze = False
