"""What keeps a judge within bounds: backoff between attempts, rate limits, a daily budget.

All three take their clocks (and the backoff its random source) as arguments, so
tests decide time and jitter instead of sleeping.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable

from evaluators.judges.settings import JudgeBudget

Sleep = Callable[[float], Awaitable[None]]
_DAY_S = 86_400


class Backoff:
    """Jittered exponential delays between attempts that honour ``Retry-After``.

    Attempt ``n`` (0 after the first failure) waits a uniform draw in
    ``[base/2, base]`` with ``base = min(maximum, initial * 2**n)`` — jitter spreads
    the retries of concurrent calls. A server's ``Retry-After`` is a floor: never
    retry sooner than asked. One above ``maximum`` means give up (None) rather
    than hold a worker slot that long.
    """

    def __init__(self, initial: float, maximum: float, rng: random.Random | None = None) -> None:
        self._initial = initial
        self._maximum = maximum
        self._rng = rng or random.Random()

    def delay(self, attempt: int, retry_after: float | None = None) -> float | None:
        base = min(self._maximum, self._initial * 2**attempt)
        jittered = self._rng.uniform(base / 2, base)
        if retry_after is None:
            return jittered
        if retry_after > self._maximum:
            return None
        return max(retry_after, jittered)


class TokenBucket:
    """``rate`` units per second with bursts up to ``capacity``.

    ``reserve`` takes the units at once (the balance may go negative) and returns
    how long the caller must wait until they are covered; callers therefore queue
    in call order without a lock (one event loop).
    """

    def __init__(self, rate: float, capacity: float, clock: Callable[[], float]) -> None:
        self._rate = rate
        self._capacity = capacity
        self._clock = clock
        self._tokens = capacity
        self._last = clock()

    def reserve(self, amount: float) -> float:
        self._refill()
        self._tokens -= amount
        return 0.0 if self._tokens >= 0 else -self._tokens / self._rate

    def give_back(self, amount: float) -> None:
        """Return over-reserved units (negative: take more, e.g. a reply longer than guessed)."""
        self._refill()
        self._tokens = min(self._capacity, self._tokens + amount)

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self._capacity, self._tokens + (now - self._last) * self._rate)
        self._last = now


class RateLimiter:
    """Requests per second and tokens per minute; either may be None (unlimited).

    Token use is only known after the reply, so ``acquire`` reserves an estimate
    and ``settle`` corrects it with the real count.
    """

    def __init__(
        self,
        requests_per_second: float | None,
        tokens_per_minute: int | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._requests = (
            TokenBucket(requests_per_second, max(1.0, requests_per_second), clock)
            if requests_per_second
            else None
        )
        self._tokens = (
            TokenBucket(tokens_per_minute / 60.0, float(tokens_per_minute), clock)
            if tokens_per_minute
            else None
        )

    def reserve(self, estimated_tokens: int) -> float:
        """Reserve one request and ``estimated_tokens``; the seconds to wait before sending."""
        wait = 0.0
        if self._requests is not None:
            wait = self._requests.reserve(1)
        if self._tokens is not None:
            wait = max(wait, self._tokens.reserve(estimated_tokens))
        return wait

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        if self._tokens is not None:
            self._tokens.give_back(estimated_tokens - actual_tokens)


class DailyBudget:
    """Calls and tokens spent per UTC day against ``JudgeBudget`` caps.

    ``try_call`` counts a call if the day's caps allow one (tokens may overshoot
    by the last call's tokens: they are only known afterwards). Per process:
    each replica, and each restart, has its own count.
    """

    def __init__(self, caps: JudgeBudget, wall_clock: Callable[[], float] = time.time) -> None:
        self._caps = caps
        self._wall_clock = wall_clock
        self._day = self._today()
        self._calls = 0
        self._tokens = 0

    def try_call(self) -> bool:
        self._roll()
        if self._caps.calls is not None and self._calls >= self._caps.calls:
            return False
        if self._caps.tokens is not None and self._tokens >= self._caps.tokens:
            return False
        self._calls += 1
        return True

    def spend_tokens(self, tokens: int) -> None:
        self._roll()
        self._tokens += tokens

    def remaining(self) -> dict[str, int]:
        """What is left today, per capped unit (``calls``, ``tokens``)."""
        self._roll()
        left: dict[str, int] = {}
        if self._caps.calls is not None:
            left["calls"] = max(0, self._caps.calls - self._calls)
        if self._caps.tokens is not None:
            left["tokens"] = max(0, self._caps.tokens - self._tokens)
        return left

    def _roll(self) -> None:
        today = self._today()
        if today != self._day:
            self._day, self._calls, self._tokens = today, 0, 0

    def _today(self) -> int:
        return int(self._wall_clock() // _DAY_S)
