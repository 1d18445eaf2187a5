"""What the judges report about themselves, without depending on a metrics library.

``evaluators`` never imports ``collector``; the daemon passes an implementation
backed by its Prometheus registry (``collector.processing.judge_metrics``). ``judge`` label
values are configured judge names, never traffic, so cardinality is bounded.
"""

from __future__ import annotations

from typing import Protocol


class JudgeMetrics(Protocol):
    """Sink of judge self-telemetry. Methods are called from the judge event loop thread,
    except ``shed`` (any thread); they must be cheap and must not raise."""

    def attempt(self, judge: str, outcome: str, latency_s: float) -> None:
        """One HTTP request: ``ok`` or a ``JudgeError.kind``."""

    def tokens(self, judge: str, prompt: int, completion: int) -> None:
        """Tokens the server reported for one successful request."""

    def error(self, judge: str, reason: str) -> None:
        """A judge evaluation ended in an ``ErrorResult`` (``reason``: a kind, ``parse``…)."""

    def cache_hit(self, judge: str) -> None:
        """A verdict served from the result cache: no request made."""

    def shed(self, judge: str, reason: str) -> None:
        """Judge work not done: ``queue_full``, ``budget``, ``shutdown``."""

    def budget_remaining(self, judge: str, unit: str, left: int) -> None:
        """What is left of today's budget in ``unit`` (``calls``, ``tokens``)."""

    def queue_depth(self, depth: int) -> None:
        """Judge work items accepted and not finished."""


class NoJudgeMetrics:
    """Discards everything (library use, tests that do not look at metrics)."""

    def attempt(self, judge: str, outcome: str, latency_s: float) -> None: ...
    def tokens(self, judge: str, prompt: int, completion: int) -> None: ...
    def error(self, judge: str, reason: str) -> None: ...
    def cache_hit(self, judge: str) -> None: ...
    def shed(self, judge: str, reason: str) -> None: ...
    def budget_remaining(self, judge: str, unit: str, left: int) -> None: ...
    def queue_depth(self, depth: int) -> None: ...
