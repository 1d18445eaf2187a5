"""The judges' own thread and event loop, and the bounded hand-off into it.

Judge calls take seconds; deterministic evaluators take microseconds. The
evaluation thread must never wait for a judge, so it hands judge work over with
``submit``, which never blocks: while fewer than ``queue_size`` items are pending
the item is accepted, otherwise it is **shed** and counted
(``JudgeMetrics.shed(judge, "queue_full")``). Concurrency towards each endpoint is
bounded by its judge (``max_concurrency``), not here. Accepted items end in the
``deliver`` callback, called on the worker thread.

Replay uses ``evaluate`` instead: it waits for the verdicts (no shedding), so an
offline run is complete and reproducible. ``call`` runs any coroutine of the
runner on the loop (the pairwise API for ``evald compare``).

``close(timeout)`` stops accepting, lets pending work finish until the timeout,
cancels the rest (shed, ``shutdown``), closes the judges and the cache.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from evaluators.judges.base import DEFAULT_JUDGE
from evaluators.judges.metrics import JudgeMetrics, NoJudgeMetrics
from evaluators.judges.runner import JudgeRunner
from evaluators.runner import Outcome
from evaluators.spec_model import BoundEvaluator
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)

T = TypeVar("T")
Deliver = Callable[[Trajectory, Outcome], None]


class JudgeWorker:
    """Runs a ``JudgeRunner`` on a private event loop thread (started at construction)."""

    def __init__(
        self, runner: JudgeRunner, queue_size: int, metrics: JudgeMetrics | None = None
    ) -> None:
        self._runner = runner
        self._metrics = metrics or NoJudgeMetrics()
        self._slots = threading.BoundedSemaphore(queue_size)
        self._lock = threading.Lock()
        self._pending: dict[concurrent.futures.Future[None], str] = {}  # → judge name
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="evald-judges")
        self._thread.daemon = True
        self._thread.start()

    @property
    def runner(self) -> JudgeRunner:
        return self._runner

    @property
    def pending(self) -> int:
        """Accepted items not finished yet."""
        with self._lock:
            return len(self._pending)

    def submit(self, trajectory: Trajectory, bound: BoundEvaluator, deliver: Deliver) -> bool:
        """Queue one judge evaluation without blocking; False if it was shed."""
        judge = bound.judge or DEFAULT_JUDGE
        if self._closed:
            self._metrics.shed(judge, "shutdown")
            return False
        if not self._slots.acquire(blocking=False):
            self._metrics.shed(judge, "queue_full")
            return False
        coro = self._judge_and_deliver(trajectory, bound, deliver)
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        with self._lock:
            self._pending[future] = judge
            depth = len(self._pending)
        future.add_done_callback(self._finished)
        self._metrics.queue_depth(depth)
        return True

    def evaluate(self, trajectory: Trajectory, bound: Sequence[BoundEvaluator]) -> list[Outcome]:
        """Judge ``trajectory`` with every bound judge evaluator and wait (replay).

        Items run concurrently within each judge's limits; the outcomes keep the
        order of ``bound``; shed ones (budget) are left out.
        """
        return self.call(lambda runner: self._all(runner, trajectory, bound))

    def call(self, work: Callable[[JudgeRunner], Awaitable[T]]) -> T:
        """Run ``work(runner)`` on the judge loop and wait for its result (or exception)."""
        if self._closed:
            raise RuntimeError("the judge worker is closed")

        async def run() -> T:
            return await work(self._runner)

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result()

    def close(self, timeout: float | None = None) -> None:
        """Finish pending work within ``timeout`` s, cancel the rest; safe to call twice.

        Call it once submitters have stopped (the processor closes after the
        pipeline's evaluation thread ended); a later ``submit`` is shed.
        """
        if self._closed:
            return
        self._closed = True
        with self._lock:
            pending = set(self._pending)
        _, late = concurrent.futures.wait(pending, timeout)
        for future in late:
            future.cancel()
        if late:
            log.warning("shutdown: %d judge evaluation(s) cancelled (still running)", len(late))
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def _judge_and_deliver(
        self, trajectory: Trajectory, bound: BoundEvaluator, deliver: Deliver
    ) -> None:
        outcome = await self._runner.run_one(trajectory, bound)
        if outcome is not None:
            try:
                deliver(trajectory, outcome)
            except Exception:  # the deliverer counts its own sink failures; a bug here is logged
                log.exception("delivering the judge result of %s failed", bound.id)

    @staticmethod
    async def _all(
        runner: JudgeRunner, trajectory: Trajectory, bound: Sequence[BoundEvaluator]
    ) -> list[Outcome]:
        outcomes = await asyncio.gather(*(runner.run_one(trajectory, item) for item in bound))
        return [outcome for outcome in outcomes if outcome is not None]

    def _finished(self, future: concurrent.futures.Future[None]) -> None:
        with self._lock:
            judge = self._pending.pop(future)
            depth = len(self._pending)
        self._slots.release()
        self._metrics.queue_depth(depth)
        if future.cancelled():  # cancelled by close(): before or while running
            self._metrics.shed(judge, "shutdown")

    async def _shutdown(self) -> None:
        tasks = asyncio.all_tasks() - {asyncio.current_task()}
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._runner.close()
