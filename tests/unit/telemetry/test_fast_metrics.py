"""The hot-path families expose exactly what prometheus-client's own types would."""

from __future__ import annotations

import re
import threading

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest

from collector.telemetry.fast_metrics import FastCounter, FastHistogram, MetricGroup

BUCKETS = (0.0, 0.1, 0.5, 1.0, 5.0)
OBSERVED = [0.0, 0.05, 0.1, 0.100001, 0.7, 1.0, 3.0, 5.0, 9.5, 1e9, -2.0]


def _without_exemplar_times(text: bytes) -> str:
    """OpenMetrics text with exemplar timestamps dropped (each type stamps its own)."""
    return re.sub(r"(# \{[^}]*\} \S+) \S+", r"\1", text.decode())


def _fill_library(registry: CollectorRegistry) -> None:
    counter = Counter("c", "a counter", ["service", "tool"], registry=registry)
    histogram = Histogram("h", "a histogram", ["service"], buckets=BUCKETS, registry=registry)
    counter.labels("svc", "refund").inc()
    counter.labels("svc", "refund").inc(2.5)
    counter.labels("svc", "lookup")  # born at zero
    for n, value in enumerate(OBSERVED):
        histogram.labels("svc").observe(value, {"trace_id": f"t{n}"})
    histogram.labels("empty")


def _fill_fast(registry: CollectorRegistry) -> MetricGroup:
    group = MetricGroup(registry)
    counter = FastCounter(group, "c", "a counter", ["service", "tool"])
    histogram = FastHistogram(group, "h", "a histogram", ["service"], BUCKETS)
    with group.lock:
        counter.labels("svc", "refund").inc()
        counter.labels("svc", "refund").inc(2.5)
        counter.labels("svc", "lookup")
        for n, value in enumerate(OBSERVED):
            histogram.labels("svc").observe(value, f"t{n}")
        histogram.labels("empty")
    return group


def test_text_and_openmetrics_expositions_match_the_library_types() -> None:
    library, fast = CollectorRegistry(), CollectorRegistry()
    _fill_library(library)
    _fill_fast(fast)
    assert generate_latest(fast) == generate_latest(library)
    assert _without_exemplar_times(openmetrics_latest(fast)) == _without_exemplar_times(
        openmetrics_latest(library)
    )


def test_sample_values_are_read_through_the_registry() -> None:
    registry = CollectorRegistry()
    _fill_fast(registry)
    assert registry.get_sample_value("c_total", {"service": "svc", "tool": "refund"}) == 3.5
    assert registry.get_sample_value("h_bucket", {"service": "svc", "le": "0.1"}) == 4
    assert registry.get_sample_value("h_count", {"service": "empty"}) == 0


def test_a_wrong_number_of_label_values_is_refused() -> None:
    group = MetricGroup(CollectorRegistry())
    counter = FastCounter(group, "c", "a counter", ["service", "tool"])
    with pytest.raises(ValueError, match="c: 2 label values expected"):
        counter.labels("svc")


def test_a_scrape_sees_updates_made_under_the_lock_whole() -> None:
    """Writers hold the lock for a group of updates; a collect never sees half of one."""
    registry = CollectorRegistry()
    group = MetricGroup(registry)
    first = FastCounter(group, "first", "", ["k"])
    second = FastCounter(group, "second", "", ["k"])
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            with group.lock:
                first.labels("x").inc()
                second.labels("x").inc()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(200):
            values = {m.name: m.samples[0].value for m in group.collect() if m.samples}
            assert values.get("first", 0) == values.get("second", 0)
    finally:
        stop.set()
        writer.join()
