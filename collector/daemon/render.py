"""Rendering ``/metrics`` without holding up the event loop for the whole render.

The exposition renders on a worker thread (``collector.daemon.admin``), but the
thread still holds the GIL: CPython hands it to the waiting event loop only every
``sys.getswitchinterval()`` (5 ms), and the loop waits that long again after each of
its system calls, so an OTLP export answered in 0.5 ms took 10 ms during scrapes.
``YieldingRegistry`` gives the encoder the registry's families and samples as usual,
and every ``SLICE_S`` of rendering sleeps ``PAUSE_S``, which releases the GIL to
whoever waits for it: the loop waits at most about one slice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from prometheus_client.metrics_core import Metric

SLICE_S = 0.0001  # rendering between two pauses (0.25 ms: 2x the median at times)
PAUSE_S = 0.00005  # long enough for a waiting thread to take the GIL
_SAMPLES_PER_CHECK = 4  # ~60 µs of formatting between clock reads


class Source(Protocol):
    """What an encoder renders: a registry, or anything with its ``collect``."""

    def collect(self) -> Iterable[Metric]: ...


class YieldingRegistry:
    """``registry`` for an exposition encoder (it only calls ``collect``)."""

    def __init__(self, registry: Source) -> None:
        self._registry = registry
        self._since = time.perf_counter()

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            self.pause_if_due()
            metric.samples = _Samples(metric.samples, self)
            yield metric

    def pause_if_due(self) -> None:
        if time.perf_counter() - self._since >= SLICE_S:
            time.sleep(PAUSE_S)
            self._since = time.perf_counter()


_rendering = threading.local()  # .pacer: the YieldingRegistry of this thread's render


@contextmanager
def pacing(pacer: YieldingRegistry) -> Iterator[None]:
    """Within it, ``pause`` on this thread is ``pacer.pause_if_due``."""
    outer = getattr(_rendering, "pacer", None)
    _rendering.pacer = pacer
    try:
        yield
    finally:
        _rendering.pacer = outer


def pause() -> None:
    """Pause as the render running on this thread does (if one does): for work a
    registry's ``collect`` does while rendering, such as merging the workers'."""
    pacer = getattr(_rendering, "pacer", None)
    if pacer is not None:
        pacer.pause_if_due()


class _Samples(list[Any]):
    """A family's samples; iterating them pauses when a slice is used up."""

    def __init__(self, samples: Iterable[Any], owner: YieldingRegistry) -> None:
        super().__init__(samples)
        self._owner = owner

    def __iter__(self) -> Iterator[Any]:
        for index, sample in enumerate(super().__iter__()):
            if index % _SAMPLES_PER_CHECK == 0:
                self._owner.pause_if_due()
            yield sample
