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
    or a library): on leaving, what was frozen is unfrozen and the thresholds are
    those the block found. Not re-entrant across threads (the settings are
    process-wide)."""
    thresholds = gc.get_threshold()
    settle_for_streaming()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
