"""Shared pieces of the judge tests: trajectories, bound judge evaluators, a worker
wired to the fake chat-completions server (``fake_openai``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluators.base import Criteria
from evaluators.judges.base import JudgeEvaluator
from evaluators.judges.metrics import JudgeMetrics
from evaluators.judges.settings import JudgeSettings
from evaluators.judges.setup import start_worker
from evaluators.judges.worker import JudgeWorker
from evaluators.spec_model import BoundEvaluator
from evaluators.trajectory import Step, StepKind, Trajectory
from support.fake_openai import FakeChatServer


class CountingMetrics:
    """A ``JudgeMetrics`` that counts every call by (method, judge, label)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, ...], int] = {}
        self.budget: dict[tuple[str, str], int] = {}
        self.depth = 0

    def _count(self, *key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def attempt(self, judge: str, outcome: str, latency_s: float) -> None:
        self._count("attempt", judge, outcome)

    def tokens(self, judge: str, prompt: int, completion: int) -> None:
        self._count("tokens", judge)

    def error(self, judge: str, reason: str) -> None:
        self._count("error", judge, reason)

    def cache_hit(self, judge: str) -> None:
        self._count("cache_hit", judge)

    def shed(self, judge: str, reason: str) -> None:
        self._count("shed", judge, reason)

    def budget_remaining(self, judge: str, unit: str, left: int) -> None:
        self.budget[(judge, unit)] = left

    def queue_depth(self, depth: int) -> None:
        self.depth = depth

    def get(self, *key: str) -> int:
        return self.counts.get(key, 0)


def step(name: str, args: Any = None, result: Any = None, i: int = 0, **kw: Any) -> Step:
    return Step(StepKind.TOOL, name, f"{i:016x}", None, i, 0.1, args=args, result=result, **kw)


def trajectory(
    *steps: Step,
    input: str | None = "How many James Brown songs do you have?",
    output: str | None = "We have 20 songs by James Brown.",
    trace_id: str = "0af7651916cd43dd8448eb211c80319c",
) -> Trajectory:
    return Trajectory(
        trace_id, "music-store", "support", None, input, output, False, 1.0, 0, tuple(steps)
    )


def bind(
    cls: type[JudgeEvaluator[Any, Any]],
    config: dict[str, Any] | None = None,
    criteria: Criteria | None = None,
    *,
    judge: str = "default",
    threshold: float | None = None,
) -> BoundEvaluator:
    evaluator = cls.build(config)
    if criteria is None:
        criteria = cls.criteria_model()
    limit = evaluator.config.threshold if threshold is None else threshold
    return BoundEvaluator("spec", cls.id, evaluator, criteria, limit, 1.0, judge)


def settings(server: FakeChatServer, **overrides: Any) -> JudgeSettings:
    values: dict[str, Any] = {
        "base_url": server.url,
        "model": "judge-model",
        "backoff_initial": 0.01,
        **overrides,
    }
    return JudgeSettings.model_validate(values)


def worker(
    server: FakeChatServer,
    *,
    metrics: JudgeMetrics | None = None,
    queue_size: int = 100,
    cache_file: Path | None = None,
    **overrides: Any,
) -> JudgeWorker:
    return start_worker(
        {"default": settings(server, **overrides)},
        queue_size=queue_size,
        cache_size=1000,
        cache_file=cache_file,
        metrics=metrics,
    )
