"""One configured judge: an endpoint + model, called within its limits.

A caller holds one of ``max_concurrency`` turns (``Judge.turn``) for the whole
judging of an item — building the prompt, the cache lookup, and ``complete``
with its rate-limit waits, attempts and backoff sleeps — so a judge that answers
429 cannot be hammered by the calls queued behind it, and work queued behind a
slow judge costs no CPU until its turn comes. Retries follow ``limits.Backoff``;
only ``RetryableError``s are retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic import SecretStr

from evaluators.judges.client import ChatClient
from evaluators.judges.limits import Backoff, DailyBudget, RateLimiter, Sleep
from evaluators.judges.metrics import JudgeMetrics, NoJudgeMetrics
from evaluators.judges.protocol import ChatReply, ChatRequest, JudgeError, RetryableError, payload
from evaluators.judges.settings import JudgeSettings

_CHARS_PER_TOKEN = 4  # rough, for the tokens-per-minute reservation before the real count
_DEFAULT_COMPLETION_GUESS = 256


class Judge:
    """A named judge. Use from one event loop (the judge worker's); ``close`` when done.

    ``clock`` (monotonic, rate limits), ``wall_clock`` (budget days), ``sleep`` and
    ``rng`` (backoff jitter) are injectable so tests control time.
    """

    def __init__(
        self,
        name: str,
        settings: JudgeSettings,
        api_key: SecretStr | None = None,
        metrics: JudgeMetrics | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.name = name
        self.settings = settings
        self._metrics = metrics or NoJudgeMetrics()
        self._clock = clock
        self._sleep = sleep
        self._client = ChatClient(settings, api_key)
        self._slots = asyncio.Semaphore(settings.max_concurrency)
        self._limiter = RateLimiter(settings.requests_per_second, settings.tokens_per_minute, clock)
        self._budget = DailyBudget(settings.budget, wall_clock)
        self._backoff = Backoff(settings.backoff_initial, settings.backoff_max, rng)
        self._report_budget()

    def identity(self) -> dict[str, Any]:
        """What besides the messages decides an answer: part of every cache key."""
        s = self.settings
        return {
            "judge": self.name,
            # The server too: an Azure deployment (in base_url) or api-version (query)
            # decides the model whatever `model` says.
            "url": s.url,
            "model": s.model,
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,
            "response_format": s.response_format,
        }

    def try_spend_call(self) -> bool:
        """Count one call against today's budget; False (nothing counted) if it is spent."""
        allowed = self._budget.try_call()
        self._report_budget()
        return allowed

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """One of the judge's ``max_concurrency`` turns; ``complete`` runs inside one."""
        async with self._slots:
            yield

    async def complete(self, request: ChatRequest) -> ChatReply:
        """Ask the model; retries retryable failures. Raises ``JudgeError`` (key redacted).

        Call it within ``turn()``: concurrency is bounded there, not here.
        """
        s = self.settings
        body = payload(request, s.model, s.temperature, s.max_tokens, s.response_format)
        estimate = _estimate_tokens(body, s.max_tokens)
        attempt = 0
        while True:
            try:
                return await self._attempt(body, estimate)
            except RetryableError as exc:
                await self._sleep(self._retry_delay(attempt, exc))
                attempt += 1

    async def close(self) -> None:
        await self._client.close()

    async def _attempt(self, body: dict[str, Any], estimate: int) -> ChatReply:
        wait = self._limiter.reserve(estimate)
        if wait > 0:
            await self._sleep(wait)
        started = self._clock()
        try:
            reply = await self._client.post(body)
        except JudgeError as exc:
            self._metrics.attempt(self.name, exc.kind, self._clock() - started)
            self._limiter.settle(estimate, 0)
            raise
        self._metrics.attempt(self.name, "ok", self._clock() - started)
        self._account(reply, estimate)
        return reply

    def _retry_delay(self, attempt: int, exc: RetryableError) -> float:
        delay = self._backoff.delay(attempt, exc.retry_after)
        if attempt >= self.settings.retries:
            raise JudgeError(f"{exc} (after {attempt + 1} attempts)", exc.kind) from None
        if delay is None:
            message = f"{exc}: Retry-After {exc.retry_after:g}s exceeds backoff_max"
            raise JudgeError(message, "gave_up") from None
        return delay

    def _account(self, reply: ChatReply, estimate: int) -> None:
        self._metrics.tokens(self.name, reply.prompt_tokens, reply.completion_tokens)
        self._limiter.settle(estimate, reply.tokens or estimate)
        self._budget.spend_tokens(reply.tokens)
        self._report_budget()

    def _report_budget(self) -> None:
        for unit, left in self._budget.remaining().items():
            self._metrics.budget_remaining(self.name, unit, left)


def _estimate_tokens(body: dict[str, Any], max_tokens: int | None) -> int:
    prompt_chars = len(json.dumps(body["messages"], ensure_ascii=False))
    return prompt_chars // _CHARS_PER_TOKEN + (max_tokens or _DEFAULT_COMPLETION_GUESS)
