"""Running judge evaluators: prompt → cache → budget → judge call → verdict → result.

``JudgeRunner`` is async and lives on one event loop (the judge worker's). Its
``run_one`` is the judge side of the evaluator-call boundary (STYLE habit 6):
whatever goes wrong becomes an ``ErrorResult``, except a spent daily budget,
which is not an evaluation at all — the work is shed (``None``) and counted.

Only replies whose verdict could be read are cached, so a garbled answer is asked
again next time rather than remembered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel

from evaluators.judges.base import DEFAULT_JUDGE, JudgeEvaluator
from evaluators.judges.cache import ResultCache, cache_key
from evaluators.judges.judge import Judge
from evaluators.judges.metrics import JudgeMetrics, NoJudgeMetrics
from evaluators.judges.parse import VerdictError
from evaluators.judges.prompt import DataLimits, JudgePrompt, render
from evaluators.judges.protocol import ChatReply, JudgeError
from evaluators.results import ErrorResult, EvaluationResult
from evaluators.runner import Outcome, verdict
from evaluators.spec_model import BoundEvaluator
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)

Reader = Callable[[str, JudgePrompt], BaseModel]
_REPLY_PREVIEW = 500


class BudgetSpent(Exception):
    """The judge's daily budget is used up: the work is shed, not evaluated."""


class UnreadableVerdict(VerdictError):
    """The reply came back but holds no usable verdict; ``reply`` keeps its text."""

    def __init__(self, message: str, reply: str) -> None:
        super().__init__(message)
        self.reply = reply


class Answer(NamedTuple):
    """A judge's verdict with the reply it came from."""

    verdict: Any  # the prompt's verdict model
    reply: ChatReply
    cached: bool
    key: str


class JudgeRunner:
    """Asks named judges, with a shared result cache. One event loop; ``close`` when done."""

    def __init__(
        self,
        judges: Mapping[str, Judge],
        cache: ResultCache | None = None,
        metrics: JudgeMetrics | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._judges = dict(judges)
        self._cache = cache if cache is not None else ResultCache(max_entries=0)  # (has __len__)
        self._metrics = metrics or NoJudgeMetrics()
        self._clock = clock
        self._logged: set[tuple[str | None, str]] = set()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._judges)

    async def ask(
        self, judge_name: str, prompt: JudgePrompt, limits: DataLimits, read: Reader
    ) -> Answer:
        """The verdict of ``judge_name`` on ``prompt``, from the cache when possible.

        Everything happens in one of the judge's turns: work waiting for a slow
        judge has not even built its prompt yet. Raises ``BudgetSpent``,
        ``JudgeError`` or ``UnreadableVerdict``.
        """
        judge = self._judge(judge_name)
        async with judge.turn():
            request = render(prompt, limits)
            key = cache_key(judge.identity(), request)
            reply = self._cache.get(key)
            if reply is not None:
                self._metrics.cache_hit(judge_name)
                return Answer(_read(read, reply, prompt), reply, True, key)
            if not judge.try_spend_call():
                raise BudgetSpent(f"daily budget of judge {judge_name!r} is spent")
            reply = await judge.complete(request)
        answer = Answer(_read(read, reply, prompt), reply, False, key)
        self._cache.put(key, reply)
        return answer

    async def run_one(self, trajectory: Trajectory, bound: BoundEvaluator) -> Outcome | None:
        """Judge one trajectory with one bound judge evaluator; None when shed (budget)."""
        judge = bound.judge or DEFAULT_JUDGE
        started = self._clock()
        try:
            result = await self._evaluate(trajectory, bound, judge)
        except BudgetSpent:
            self._metrics.shed(judge, "budget")
            return None
        except UnreadableVerdict as exc:
            self._metrics.error(judge, "parse")
            details = {"judge": judge, "reply": exc.reply[:_REPLY_PREVIEW]}
            result = ErrorResult(error=str(exc), details=details)
        except JudgeError as exc:
            self._metrics.error(judge, exc.kind)
            result = ErrorResult(error=str(exc), details={"judge": judge})
        # The evaluator-call boundary (STYLE habit 6): a bug in a judge evaluator
        # costs one result, never the worker.
        except Exception as exc:
            self._metrics.error(judge, "internal")
            self._log_first(bound, exc)
            result = ErrorResult(error=f"{type(exc).__name__}: {exc}")
        passed = verdict(bound.evaluator, result, bound.threshold)
        duration = self._clock() - started
        return Outcome(bound.spec_id, bound.id, result, passed, duration, bound.item)

    async def close(self) -> None:
        """Close every judge's HTTP session and the cache file; safe to call twice."""
        await asyncio.gather(*(judge.close() for judge in self._judges.values()))
        self._cache.close()

    async def _evaluate(
        self, trajectory: Trajectory, bound: BoundEvaluator, judge: str
    ) -> EvaluationResult:
        evaluator = bound.evaluator
        if not isinstance(evaluator, JudgeEvaluator):
            raise TypeError(f"{bound.id} is not an LLM judge evaluator")
        asked = evaluator.prompt(trajectory, bound.criteria)
        if not isinstance(asked, JudgePrompt):
            return asked  # nothing to ask (e.g. no final answer)
        answer = await self.ask(judge, asked, evaluator.limits(), evaluator.read)
        try:
            result = evaluator.interpret(answer.verdict, asked)
        except VerdictError as exc:
            raise UnreadableVerdict(str(exc), answer.reply.content) from None
        return with_judge_details(result, judge, answer)

    def _judge(self, name: str) -> Judge:
        judge = self._judges.get(name)
        if judge is None:
            known = ", ".join(sorted(self._judges)) or "none"
            raise JudgeError(f"no judge named {name!r} is configured (judges: {known})", "config")
        return judge

    def _log_first(self, bound: BoundEvaluator, exc: BaseException) -> None:
        key = (bound.spec_id, bound.id)
        first = key not in self._logged
        self._logged.add(key)
        level = logging.WARNING if first else logging.DEBUG
        log.log(
            level, "judge evaluator %s (spec %s) failed", bound.id, bound.spec_id, exc_info=first
        )


def with_judge_details(result: EvaluationResult, judge: str, answer: Answer) -> EvaluationResult:
    """``result`` with the judge, model, raw verdict, cache use and tokens in ``details``."""
    details = {
        **(result.details or {}),
        "judge": judge,
        "model": answer.reply.model,
        "verdict": answer.verdict.model_dump(mode="json"),
        "cached": answer.cached,
        "prompt_sha256": answer.key,
        "tokens": answer.reply.tokens,
    }
    return result.model_copy(update={"details": details})


def _read(read: Reader, reply: ChatReply, prompt: JudgePrompt) -> Any:
    try:
        return read(reply.content, prompt)
    except VerdictError as exc:
        raise UnreadableVerdict(str(exc), reply.content) from None
