"""Traffic-derived labels: value length and combinations are capped, and counted."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from collector.telemetry.labels import LabelGuard, SeriesBudget


def counter(name: str, label: str) -> Counter:
    return Counter(name, "test", [label], registry=CollectorRegistry())


def test_long_values_are_truncated_and_counted() -> None:
    truncated = counter("truncated", "label")
    guard = LabelGuard("agent", 10, counter("overflow", "label"), 8, truncated)
    assert guard("a" * 100) == "a" * 8
    assert guard("b" * 8) == "b" * 8
    assert truncated.labels(label="agent")._value.get() == 1


def test_combinations_beyond_the_budget_become_other_and_are_counted() -> None:
    overflow = counter("overflow", "labels")
    budget = SeriesBudget(("service", "agent"), 2, overflow)
    assert budget("s1", "a1") == ("s1", "a1")
    assert budget("s1", "a2") == ("s1", "a2")
    assert budget("s2", "a1") == ("other", "other")
    assert budget("s1", "a1") == ("s1", "a1")  # admitted combinations stay
    assert budget("s2", "a1") == ("other", "other")
    assert overflow.labels(labels="service,agent")._value.get() == 2


def test_a_guard_passes_only_values_it_returns_unchanged_without_counting() -> None:
    overflow, truncated = counter("overflow", "label"), counter("truncated", "label")
    guard = LabelGuard("tool", 2, overflow, 8, truncated)
    assert guard.passes(None) and guard.passes("")  # always "unknown", nothing counted
    assert not guard.passes("lookup")  # not admitted yet: the call decides
    assert guard("lookup") == "lookup" and guard.passes("lookup")
    assert guard("x" * 20) == "x" * 8
    assert not guard.passes("x" * 20)  # cut (and counted) on every call
    assert guard.passes("x" * 8)
    assert guard("other") == "other"  # the cap is full: "other" here is an overflow
    assert not guard.passes("other")
    assert guard("t\ud800") == "other" and not guard.passes("t\ud800")
    assert overflow.labels(label="tool")._value.get() == 2


def test_a_budget_passes_only_admitted_combinations() -> None:
    budget = SeriesBudget(("service", "tool"), 1, counter("overflow", "labels"))
    assert not budget.passes("s", "t")
    budget("s", "t")
    assert budget.passes("s", "t")
    assert budget("s", "u") == ("other", "other")
    assert not budget.passes("s", "u") and not budget.passes("other", "other")
