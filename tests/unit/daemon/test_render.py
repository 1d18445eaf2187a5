"""``YieldingRegistry``: the same exposition, rendered in slices that let the event loop in."""

from __future__ import annotations

import time

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.openmetrics import exposition as openmetrics

from collector.daemon import render
from collector.daemon.render import YieldingRegistry


def busy_registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    counter = Counter("calls", "calls", ["service", "tool"], registry=registry)
    histogram = Histogram("latency", "latency", ["service"], registry=registry)
    for n in range(300):
        counter.labels(f"svc-{n % 7}", f"tool-{n}").inc(n)
        histogram.labels(f"svc-{n % 7}").observe(n / 100, {"trace_id": f"{n:032x}"})
    return registry


@pytest.mark.parametrize(
    "encoder", [generate_latest, openmetrics.generate_latest], ids=["text", "openmetrics"]
)
def test_the_exposition_is_the_same(encoder: object) -> None:
    registry = busy_registry()
    assert encoder(YieldingRegistry(registry)) == encoder(registry)  # type: ignore[operator]


def test_rendering_pauses_once_per_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(render, "SLICE_S", 0.0)  # every check is due
    monkeypatch.setattr(time, "sleep", pauses.append)
    generate_latest(YieldingRegistry(busy_registry()))
    samples = 300 + 7 * 14  # counter children; histogram buckets, count and sum
    assert len(pauses) >= samples // 32
    assert set(pauses) == {render.PAUSE_S}


def test_pacing_nests_and_restores_the_outer_render() -> None:
    outer, inner = YieldingRegistry(busy_registry()), YieldingRegistry(busy_registry())
    paused: list[YieldingRegistry] = []
    for pacer in (outer, inner):
        pacer.pause_if_due = lambda pacer=pacer: paused.append(pacer)  # type: ignore[method-assign]
    render.pause()  # no render on this thread: nothing
    with render.pacing(outer):
        render.pause()
        with render.pacing(inner):
            render.pause()
        render.pause()
    render.pause()
    assert paused == [outer, inner, outer]
