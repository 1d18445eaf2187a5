"""Replay memory does not grow with the number of traces (the CI-sized proof).

A 1 GB file is a manual benchmark (``benchmarks/replay_memory.py``); here the
same property is shown structurally on a few thousand traces: traces in flight
stay bounded while a file streams, and the peak of Python allocations is the
same for 4x more traces, with every report kept (failing traces, JUnit spool).
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest
from support.agent_runs import EXTRA, GOOD, SPEC, agent_run, framed

from collector.config.settings import Config
from collector.offline.replay import Replayer
from collector.offline.reports import summary
from collector.offline.reports.junit import JUnitSpool

pytestmark = pytest.mark.timeout(300)


def trace_file(path: Path, count: int) -> Path:
    """``count`` traces, one per trace-time second, a third of them failing."""
    path.write_bytes(framed(*(agent_run(n, EXTRA if n % 3 == 0 else GOOD)
                              for n in range(1, count + 1))))  # fmt: skip
    return path


def config(tmp_path: Path) -> Config:
    spec = tmp_path / "shop.yaml"
    spec.write_text(SPEC)
    # decided_traces_memory is a bound of its own (trace ids kept to spot late spans).
    assembly = {"idle_timeout": "5s", "decided_traces_memory": 50}
    return Config.model_validate({"specs": [str(spec)], "assembly": assembly})


def test_traces_in_flight_stay_bounded_while_a_file_streams(tmp_path: Path) -> None:
    path = trace_file(tmp_path / "t.pb", 600)
    in_flight: list[float] = []
    replayer = Replayer(config(tmp_path), progress=lambda _: in_flight.append(held()))

    def held() -> float:
        value = replayer.telemetry.registry.get_sample_value("evald_traces_in_flight")
        return value or 0.0

    summary_ = replayer.run([str(path)])
    assert summary_.traces == 600
    assert len(in_flight) == 600  # one request per trace
    assert max(in_flight) <= 7  # idle_timeout 5 s of trace time, one trace per second


def collect_often(traces: int) -> None:
    if traces % 50 == 0:
        gc.collect()


def peak_bytes(tmp_path: Path, count: int) -> int:
    path = trace_file(tmp_path / f"t{count}.pb", count)
    spool = tmp_path / f"junit{count}"
    spool.mkdir()
    # Collect cyclic garbage as the replay goes, so the peak measures what is kept
    # alive, not how long the cyclic collector lets garbage wait.
    replayer = Replayer(config(tmp_path), sinks=[JUnitSpool(spool, {})], progress=collect_often)
    gc.collect()
    tracemalloc.start()
    try:
        result = replayer.run([str(path)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.traces == count
    assert len(result.failures.items()) == min(count // 3, summary.DEFAULT_FAILURES_KEPT)
    return peak


def test_peak_memory_does_not_grow_with_the_number_of_traces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(summary, "DEFAULT_FAILURES_KEPT", 20)  # reached early in both runs
    peak_bytes(tmp_path, 100)  # warm-up: regex caches, lazy imports, interned strings
    small, large = peak_bytes(tmp_path, 500), peak_bytes(tmp_path, 2000)
    # 1500 more traces: a leak of even 20 bytes per trace would add 30 kB.
    assert large - small < 30_000, (small, large)
