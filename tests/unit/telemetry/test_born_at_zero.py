"""Counters that alerts watch exist at 0 from start, so their first increment is seen;
and the process collectors prometheus-client provides are on evald's registry."""

from __future__ import annotations

import re

import pytest
from prometheus_client import generate_latest
from support.paths import ROOT

from collector.assembly.metrics import (
    SESSION_DROP_REASONS,
    SESSION_EVICTION_LIMITS,
    TRACE_EVICTION_LIMITS,
)
from collector.processing.metrics import RELOAD_RESULTS, TRACE_DROP_REASONS
from collector.sinks.metrics import MetricsSink
from collector.telemetry.registry import Telemetry
from evaluators.results import NumericResult
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory

KNOWN = {  # metric attribute: (sample name, label, values created at 0)
    "traces_dropped": ("evald_traces_dropped_total", "reason", TRACE_DROP_REASONS),
    "config_reloads": ("evald_config_reloads_total", "result", RELOAD_RESULTS),
    "traces_evicted": ("evald_traces_evicted_total", "limit", TRACE_EVICTION_LIMITS),
    "sessions_evicted": ("evald_sessions_evicted_total", "limit", SESSION_EVICTION_LIMITS),
    "sessions_dropped": ("evald_sessions_dropped_total", "reason", SESSION_DROP_REASONS),
}


@pytest.mark.parametrize("attribute", sorted(KNOWN))
def test_known_label_values_exist_at_zero_from_start(attribute: str) -> None:
    name, label, values = KNOWN[attribute]
    registry = Telemetry().registry
    for value in values:
        assert registry.get_sample_value(name, {label: value}) == 0.0, (name, value)


# The eviction limits are chosen by expressions, not literal arguments: the assembler
# tests count each of them by name (tests/unit/assembly/).
@pytest.mark.parametrize("attribute", ["traces_dropped", "config_reloads", "sessions_dropped"])
def test_the_code_counts_only_the_label_values_created_at_start(attribute: str) -> None:
    """A literal label value that the list misses would be born at 1 again."""
    _, _, values = KNOWN[attribute]
    call = re.compile(rf"\.{attribute}\.labels\((?:\w+=)?\"([^\"]+)\"\)")
    used = {
        value
        for path in (ROOT / "collector").rglob("*.py")
        for value in call.findall(path.read_text())
    }
    assert used, f"no call of {attribute}.labels(...) found: is the pattern stale?"
    assert used <= set(values)


def test_an_agents_first_run_creates_its_failure_and_error_series_at_zero() -> None:
    telemetry = Telemetry()
    run = Trajectory(f"{1:032x}", "svc", "agent", None, None, None, False, 0.5, 0, [])
    outcome = Outcome("spec", "recall", NumericResult(score=1.0), True, 0.01)
    MetricsSink(telemetry).write(run, [outcome])
    value = telemetry.registry.get_sample_value
    assert value("evald_traces_failed_total", {"service": "svc", "agent": "agent"}) == 0.0
    labels = {"spec": "spec", "evaluator": "recall", "service": "svc", "agent": "agent"}
    assert value("evald_evaluations_total", {**labels, "outcome": "error"}) == 0.0
    assert value("evald_evaluations_total", {**labels, "outcome": "fail"}) == 0.0
    assert value("evald_evaluations_total", {**labels, "outcome": "pass"}) == 1.0


def test_process_gc_and_platform_metrics_are_exposed() -> None:
    exposition = generate_latest(Telemetry().registry).decode()
    for name in ("process_resident_memory_bytes", "process_virtual_memory_bytes",
                 "process_cpu_seconds_total", "process_open_fds", "process_max_fds",
                 "process_start_time_seconds", "python_gc_objects_collected_total",
                 "python_gc_collections_total", "python_info"):  # fmt: skip
        assert re.search(rf"^{name}(\{{.*\}})? ", exposition, re.MULTILINE), name


def test_two_telemetries_do_not_share_process_collectors() -> None:
    """Each registry gets its own collectors (tests build one per test)."""
    first, second = Telemetry(), Telemetry()
    assert first.registry.get_sample_value("process_open_fds") is not None
    assert second.registry.get_sample_value("process_open_fds") is not None
