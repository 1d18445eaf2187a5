"""``Exposition``: the body prometheus-client's encoder would write for the same
``Accept`` header, byte for byte, for evald's own registry and for every kind of
family and name the library can be handed."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, Summary
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import (
    GaugeHistogramMetricFamily,
    Metric,
    StateSetMetricFamily,
    UnknownMetricFamily,
)
from prometheus_client.samples import Exemplar, NativeHistogram, Sample

from collector.config.settings import Config
from collector.daemon import render
from collector.daemon.exposition import Exposition
from collector.processing.wiring import build_telemetry
from collector.sinks.metrics import MetricsSink
from evaluators.results import ErrorResult, NumericResult
from evaluators.runner import Outcome
from evaluators.trajectory import Step, StepKind, Trajectory

ACCEPTS = [
    "",
    "text/plain",
    "text/plain; version=1.0.0; escaping=underscores",
    "text/plain; version=1.0.0; escaping=allow-utf-8",
    "text/plain; version=1.0.0; escaping=dots",
    "application/openmetrics-text",
    "application/openmetrics-text; version=1.0.0",
    "application/openmetrics-text; version=1.0.0; escaping=allow-utf-8",
    "application/openmetrics-text; version=1.0.0; escaping=values",
    "application/openmetrics-text; version=1.0.0; escaping=dots",
    "application/openmetrics-text; version=2.0.0",
    # What Prometheus sends by default: OpenMetrics preferred, text accepted.
    "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1",
]


def library(registry: CollectorRegistry, accept: str) -> tuple[bytes, str]:
    encoder, content_type = choose_encoder(accept)
    return bytes(encoder(registry)), content_type


def assert_same(registry: CollectorRegistry, accept: str) -> None:
    """The same body, or the same exception where the library cannot render it."""
    exposition = Exposition(accept)
    assert exposition.content_type == choose_encoder(accept)[1]
    assert attempt(lambda: exposition.render(registry)) == attempt(
        lambda: library(registry, accept)[0]
    )


def attempt(render: Callable[[], bytes]) -> str:
    try:
        return render().decode()
    except Exception as exc:  # the exception is what is compared
        return f"raised {type(exc).__name__}"


def evald_registry() -> CollectorRegistry:
    """The daemon's registry after traces with failing tools and every result kind."""
    telemetry = build_telemetry(Config())
    sink = MetricsSink(telemetry)
    for n in range(60):
        steps = tuple(
            Step(
                StepKind.TOOL,
                f'tool "{i}"\\',
                f"{i:016x}",
                None,
                i,
                0.5,
                error="boom" if (n + i) % 3 else None,
            )
            for i in range(n % 5)
        )
        trajectory = Trajectory(
            f"{n:032x}", f"svc-{n % 4}\n", "agent", None, None, None, n % 7 == 0, 0.1 * n, 0, steps
        )
        outcomes = [
            Outcome("refund", "recall", NumericResult(score=n / 60), n % 2 == 0, 0.25),
            Outcome(None, "judge", ErrorResult(error="TimeoutError: slow"), None, 0.5),
        ]
        sink.write(trajectory, outcomes)
    # One instant of it (the process collector's CPU time moves between two renders).
    frozen = CollectorRegistry()
    frozen.register(_Fixed(list(telemetry.registry.collect())))
    return frozen


@pytest.mark.parametrize("accept", ACCEPTS)
def test_evald_registry_renders_as_the_library_does(accept: str) -> None:
    assert_same(evald_registry(), accept)


@pytest.mark.parametrize("accept", ["", "application/openmetrics-text; version=1.0.0"])
def test_no_family_of_evald_needs_the_library(monkeypatch: pytest.MonkeyPatch, accept: str) -> None:
    def refuse(_: Exposition, metric: Metric) -> str:
        raise AssertionError(f"{metric.name} rendered by the library")

    monkeypatch.setattr(Exposition, "_by_library", refuse)
    assert b"evald_tool_calls_total{" in Exposition(accept).render(evald_registry())


def every_kind() -> CollectorRegistry:
    registry = CollectorRegistry()
    counter = Counter("calls", "Calls \\ with\nnewline and \"quotes\"", ["service", "le_x"],
                      registry=registry)  # fmt: skip
    counter.labels('a"b\\c\nd', "é ✓").inc(3)
    counter.labels("plain", "x").inc(1.5, {"trace_id": "abc"})
    Gauge("temperature", "t", registry=registry, unit="celsius").set(float("nan"))
    gauge = Gauge("level", "l", ["kind"], registry=registry)
    for kind, value in (("inf", float("inf")), ("minus", float("-inf")), ("big", 1234567.0),
                        ("tiny", 1e-9), ("huge", 2e22), ("negative", -7.25)):  # fmt: skip
        gauge.labels(kind).set(value)
    histogram = Histogram("latency", "latency", ["service"], buckets=(0.1, 1, 10, 1e7),
                          registry=registry)  # fmt: skip
    for n in range(20):
        histogram.labels(f"svc-{n % 3}").observe(n / 3, {"trace_id": f"{n:032x}"})
    Summary("sizes", "sizes", registry=registry).observe(4)
    Info("build", "build", registry=registry).info({"version": "1.0", "commit": "abc"})
    registry.register(_Fixed(_custom_families()))
    return registry


def _custom_families() -> list[Metric]:
    state = StateSetMetricFamily("state", "s", labels=["unit"])
    state.add_metric(["a"], {"on": True, "off": False})
    gauge_histogram = GaugeHistogramMetricFamily("queue", "q", labels=["x"])
    gauge_histogram.add_metric(["1"], [("1.0", 2), ("+Inf", 5)], gsum_value=3.5)
    unknown = UnknownMetricFamily("mystery", "m", labels=["k"])
    unknown.add_metric(["v"], 1.0, timestamp=1_700_000_000.5)
    colons = Metric("rule:calls:rate5m", "a recording-rule style name", "gauge")
    colons.add_sample("rule:calls:rate5m", {"job": "j"}, 2.0)
    exemplar_no_time = Metric("stamped", "s", "counter")
    exemplar_no_time.add_sample("stamped_total", {}, 1.0, exemplar=Exemplar({}, 0.5))
    exemplar_no_time.add_sample("stamped_created", {}, 1_700_000_000.0)
    odd_label = Metric("odd", "o", "gauge")
    odd_label.add_sample("odd", {"__reserved": "x", "ok": "y"}, 1.0)
    return [state, gauge_histogram, unknown, colons, exemplar_no_time, odd_label]


class _Fixed:
    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> list[Metric]:
        return self._families


@pytest.mark.parametrize("accept", ACCEPTS)
def test_every_kind_of_family_renders_as_the_library_does(accept: str) -> None:
    assert_same(every_kind(), accept)


@pytest.mark.parametrize("accept", ACCEPTS)
def test_a_native_histogram_is_left_to_the_library(accept: str) -> None:
    native = Metric("native", "n", "histogram")
    histogram = NativeHistogram(3, 6.0, 0, 0.01, 1, pos_spans=((0, 2),), pos_deltas=(1, 1))
    native.add_sample("native", {"a": "b"}, None, native_histogram=histogram)  # type: ignore[arg-type]
    registry = CollectorRegistry()
    registry.register(_Fixed([native]))
    assert_same(registry, accept)


def test_an_exemplar_openmetrics_refuses_raises_as_in_the_library() -> None:
    wrong = Metric("level", "l", "gauge")
    wrong.samples.append(Sample("level", {}, 1.0, None, Exemplar({"trace_id": "a"}, 1.0)))
    registry = CollectorRegistry()
    registry.register(_Fixed([wrong]))
    accept = "application/openmetrics-text; version=1.0.0"
    with pytest.raises(ValueError, match="has exemplars"):
        library(registry, accept)
    with pytest.raises(ValueError, match="has exemplars"):
        Exposition(accept).render(registry)


def test_rendering_pauses_every_few_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(render, "SLICE_S", 0.0)  # every check is due
    monkeypatch.setattr(time, "sleep", pauses.append)
    registry = CollectorRegistry()
    counter = Counter("calls", "calls", ["tool"], registry=registry)
    for n in range(400):
        counter.labels(f"tool-{n}").inc()
    Exposition("").render(registry)
    (family,) = registry.collect()
    assert len(pauses) >= len(family.samples) // 8 >= 50
    assert set(pauses) == {render.PAUSE_S}
