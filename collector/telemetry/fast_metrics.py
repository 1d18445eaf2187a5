"""Counters and histograms for the per-trace hot path, under one lock per group.

prometheus-client's ``Counter`` and ``Histogram`` take a lock and run checks in
every ``inc`` and ``observe``, and validate the exemplar of every observation: the
~25 updates a trace makes in ``MetricsSink`` cost more than normalizing it. These
families keep plain numbers instead. Their writers hold the group's ``lock`` for a
whole trace's updates (one acquire instead of ~25), and ``collect`` takes it only to
copy the numbers, so a scrape sees each trace counted entirely or not at all.

They register on a ``CollectorRegistry`` like any collector and expose what the
library's types would (``_total`` counters; ``_bucket``/``_count``/``_sum`` with the
latest exemplar per bucket; no ``_created``). Label values are not validated here:
callers pass them through ``LabelGuard``/``SeriesBudget`` first.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.samples import Exemplar
from prometheus_client.utils import floatToGoString

_INF = float("inf")
_Exemplar = tuple[str, float, float]  # trace id, observed value, unix time
_HistogramCopy = tuple[tuple[str, ...], list[int], list["_Exemplar | None"], float]


class CounterChild:
    """One labelled counter. ``inc`` only with the group's lock held."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class HistogramChild:
    """One labelled histogram: counts per bucket (not cumulative), sum, and the latest
    exemplar per bucket. ``observe`` only with the group's lock held."""

    __slots__ = ("bounds", "counts", "exemplars", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * len(bounds)
        self.exemplars: list[_Exemplar | None] = [None] * len(bounds)
        self.sum = 0.0

    def observe(self, value: float, trace_id: str | None = None) -> None:
        """Count ``value`` (``trace_id``: the exemplar's ``trace_id`` label)."""
        at = bisect_left(self.bounds, value)  # the first bucket whose bound is >= value
        self.counts[at] += 1
        self.sum += value
        if trace_id is not None:
            self.exemplars[at] = (trace_id, value, time.time())


class _Family:
    """Children by label values, created on first use (at zero)."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str]) -> None:
        self.name, self.documentation = name, documentation
        self.labelnames = tuple(labelnames)


class FastCounter(_Family):
    """A counter family; ``name`` without ``_total``, as prometheus-client takes it."""

    def __init__(
        self, group: MetricGroup, name: str, documentation: str, labelnames: Sequence[str]
    ) -> None:
        super().__init__(name, documentation, labelnames)
        self.children: dict[tuple[str, ...], CounterChild] = {}
        group.add(self)

    def labels(self, *values: str) -> CounterChild:
        """The child of ``values`` (created at 0). Call with the group's lock held."""
        child = self.children.get(values)
        if child is None:
            _check_arity(self, values)
            child = self.children[values] = CounterChild()
        return child

    def copy(self) -> Callable[[], Metric]:
        """The values now, to format later (call with the group's lock held)."""
        copied = [(values, child.value) for values, child in self.children.items()]
        return lambda: self._family(copied)

    def _family(self, copied: list[tuple[tuple[str, ...], float]]) -> Metric:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, value in copied:
            family.add_metric(values, value)
        return family


class FastHistogram(_Family):
    """A histogram family with fixed upper bounds (``+Inf`` is added)."""

    def __init__(
        self,
        group: MetricGroup,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        buckets: Sequence[float],
    ) -> None:
        super().__init__(name, documentation, labelnames)
        bounds = sorted(float(bound) for bound in buckets)
        self.bounds = tuple(bounds if bounds and bounds[-1] == _INF else [*bounds, _INF])
        self._bound_labels = [_go_float(bound) for bound in self.bounds]
        self.children: dict[tuple[str, ...], HistogramChild] = {}
        group.add(self)

    def labels(self, *values: str) -> HistogramChild:
        """The child of ``values`` (created empty). Call with the group's lock held."""
        child = self.children.get(values)
        if child is None:
            _check_arity(self, values)
            child = self.children[values] = HistogramChild(self.bounds)
        return child

    def copy(self) -> Callable[[], Metric]:
        """The counts, sums and exemplars now, to format later (with the lock held)."""
        copied = [
            (values, child.counts[:], child.exemplars[:], child.sum)
            for values, child in self.children.items()
        ]
        return lambda: self._family(copied)

    def _family(self, copied: list[_HistogramCopy]) -> Metric:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, counts, exemplars, total_sum in copied:
            buckets: list[tuple[str, float] | tuple[str, float, Exemplar]] = []
            total = 0
            for label, count, exemplar in zip(self._bound_labels, counts, exemplars, strict=True):
                total += count
                if exemplar is None:
                    buckets.append((label, total))
                else:
                    trace_id, value, at = exemplar
                    buckets.append((label, total, Exemplar({"trace_id": trace_id}, value, at)))
            family.add_metric(values, buckets, total_sum)
        return family


def _go_float(bound: float) -> str:
    """A bucket bound as prometheus-client writes it (``1.0``, ``+Inf``)."""
    return str(floatToGoString(bound))  # type: ignore[no-untyped-call]  # untyped upstream


def _check_arity(family: _Family, values: tuple[str, ...]) -> None:
    if len(values) != len(family.labelnames):
        raise ValueError(f"{family.name}: {len(family.labelnames)} label values expected")


class MetricGroup:
    """Families written together under one ``lock``; one collector on ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.lock = threading.Lock()
        self._families: list[FastCounter | FastHistogram] = []
        registry.register(self)

    def add(self, family: FastCounter | FastHistogram) -> None:
        self._families.append(family)

    def collect(self) -> Iterator[Metric]:
        """Every family's samples as of one instant (the lock is held while copying)."""
        with self.lock:  # copy only: the eval thread waits for no formatting
            formatters = [family.copy() for family in self._families]
        for formatter in formatters:
            yield formatter()

    def describe(self) -> list[Metric]:
        """The families without samples: lets the registry check name clashes at
        registration, before any family was added (families are added after)."""
        return []
