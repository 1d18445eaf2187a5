"""LLM judge evaluators: kept off the evaluation thread, awaited or handed over.

Deterministic evaluators run in the caller's thread. Judge evaluators run on the
``JudgeWorker``'s thread and loop: awaited within the judges' limits (replay:
complete, reproducible results in one write) or handed over without blocking (the
daemon: a full judge queue sheds the work, counted, and each result reaches the
sinks later through the ``deliver`` callback, on the judge thread).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from evaluators.judges.base import JudgeEvaluator
from evaluators.judges.worker import JudgeWorker
from evaluators.runner import BoundEvaluator, Outcome, due
from evaluators.trajectory import Trajectory

Deliver = Callable[[Trajectory, Outcome], None]


class JudgeHandoff:
    """Splits due evaluators into (run here, judged) and judges the second kind.

    Without a worker (no ``judges.endpoints``), judge evaluators run inline and report
    that no judge is configured.
    """

    def __init__(self, worker: JudgeWorker | None, *, wait: bool, drain_timeout: float) -> None:
        self._worker = worker
        self.waits = wait
        self._drain_timeout = drain_timeout

    def split(
        self, bound: Sequence[BoundEvaluator], trajectory: Trajectory
    ) -> tuple[list[BoundEvaluator], list[BoundEvaluator]]:
        """(run here, judge) among the evaluators of ``bound`` due for ``trajectory``."""
        inline: list[BoundEvaluator] = []
        judged: list[BoundEvaluator] = []
        for item in bound:
            if not due(item, trajectory):
                continue
            is_judge = self._worker is not None and isinstance(item.evaluator, JudgeEvaluator)
            (judged if is_judge else inline).append(item)
        return inline, judged

    def judge_now(self, trajectory: Trajectory, judged: Sequence[BoundEvaluator]) -> list[Outcome]:
        """Judge and wait; the outcomes keep ``judged``'s order, shed ones left out."""
        if not judged or self._worker is None:
            return []
        return self._worker.evaluate(trajectory, judged)

    def hand_over(
        self, trajectory: Trajectory, judged: Sequence[BoundEvaluator], deliver: Deliver
    ) -> None:
        """Queue each judge evaluation; ``deliver`` gets each outcome on the judge thread.
        Sheds (counted by the worker) when its queue is full."""
        if self._worker is None:
            return
        for item in judged:
            self._worker.submit(trajectory, item, deliver)

    def close(self, budget: float | None) -> None:
        """Let pending judge work finish within ``drain_timeout`` (and within half of
        ``budget`` when the caller has one), cancel the rest."""
        if self._worker is None:
            return
        drain = self._drain_timeout
        self._worker.close(drain if budget is None else min(drain, budget / 2))
