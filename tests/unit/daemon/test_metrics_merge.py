"""The front's /metrics with workers: counters and histograms summed (exemplars kept),
held amounts summed, other gauges per worker (``collector.daemon.metrics_merge``)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.openmetrics.exposition import generate_latest

from collector.daemon.metrics_merge import merged, registry_of


def worker_registry(received: int, held: int, specs: int, trace_id: str) -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("evald_spans_received", "", ["transport"], registry=registry).labels("grpc").inc(
        received
    )
    Gauge("evald_spans_in_flight", "", registry=registry).set(held)
    Gauge("evald_specs_loaded", "", registry=registry).set(specs)
    latency = Histogram("evald_agent_latency_seconds", "", buckets=(1.0,), registry=registry)
    latency.observe(0.5, {"trace_id": trace_id})
    return registry


def test_workers_are_summed_or_labelled_and_keep_their_exemplars() -> None:
    front = CollectorRegistry()
    Gauge("evald_spans_in_flight", "", registry=front).set(99)  # not the front's: left out
    Counter("evald_spans_received", "", ["transport"], registry=front).labels("grpc")
    workers = [
        (0, list(worker_registry(3, 10, 7, "aa").collect())),
        (1, list(worker_registry(4, 5, 8, "bb").collect())),
    ]
    registry = registry_of(lambda: merged(front.collect(), workers))
    assert registry.get_sample_value("evald_spans_received_total", {"transport": "grpc"}) == 7
    assert registry.get_sample_value("evald_spans_in_flight") == 15
    assert registry.get_sample_value("evald_specs_loaded", {"worker": "0"}) == 7
    assert registry.get_sample_value("evald_specs_loaded", {"worker": "1"}) == 8
    assert registry.get_sample_value("evald_agent_latency_seconds_count") == 2
    text = generate_latest(registry).decode()
    assert text.count('# {trace_id="') == 1  # one bucket, one exemplar: the newest
    assert '# {trace_id="bb"}' in text
