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
