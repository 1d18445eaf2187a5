"""Backoff, rate limits and the daily budget, on injected clocks."""

from __future__ import annotations

import random

import pytest

from evaluators.judges.limits import Backoff, DailyBudget, RateLimiter, TokenBucket
from evaluators.judges.settings import JudgeBudget

DAY = 86_400.0


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_backoff_doubles_with_jitter_up_to_the_maximum() -> None:
    backoff = Backoff(1.0, 5.0, random.Random(1))
    delays = [backoff.delay(n) for n in range(5)]
    bounds = [(0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (2.5, 5.0), (2.5, 5.0)]
    for delay, (low, high) in zip(delays, bounds, strict=True):
        assert delay is not None and low <= delay <= high


def test_backoff_never_retries_sooner_than_retry_after() -> None:
    backoff = Backoff(1.0, 30.0, random.Random(1))
    assert backoff.delay(0, retry_after=3.0) == 3.0
    assert backoff.delay(0, retry_after=0.0) is not None
    assert backoff.delay(0, retry_after=31.0) is None


def test_token_bucket_queues_callers_in_order() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=2.0, capacity=2.0, clock=clock)
    assert [bucket.reserve(1) for _ in range(4)] == [0.0, 0.0, 0.5, 1.0]
    clock.now = 10.0
    assert bucket.reserve(1) == 0.0  # refilled, capped at capacity


def test_tokens_per_minute_reserves_an_estimate_and_settles_the_real_count() -> None:
    clock = Clock()
    limiter = RateLimiter(None, tokens_per_minute=600, clock=clock)  # 10 tokens/s
    assert limiter.reserve(500) == 0.0
    assert limiter.reserve(500) == pytest.approx(40.0)  # 400 short at 10/s
    limiter.settle(500, 100)  # the first call used 100 only
    assert limiter.reserve(0) == 0.0  # the 400 came back


def test_unlimited_limiter_never_waits() -> None:
    limiter = RateLimiter(None, None)
    assert limiter.reserve(10**9) == 0.0


def test_daily_budget_counts_calls_and_tokens_and_resets_at_utc_midnight() -> None:
    clock = Clock(3 * DAY + 100)
    budget = DailyBudget(JudgeBudget(calls=2, tokens=1000), clock)
    assert budget.remaining() == {"calls": 2, "tokens": 1000}
    assert budget.try_call() and budget.try_call()
    assert not budget.try_call()
    assert budget.remaining() == {"calls": 0, "tokens": 1000}
    clock.now = 4 * DAY  # next UTC day
    assert budget.try_call()
    budget.spend_tokens(1200)  # tokens are known after the call: may overshoot once
    assert budget.remaining() == {"calls": 1, "tokens": 0}
    assert not budget.try_call()


def test_unlimited_budget_reports_nothing() -> None:
    budget = DailyBudget(JudgeBudget())
    assert budget.try_call()
    assert budget.remaining() == {}
