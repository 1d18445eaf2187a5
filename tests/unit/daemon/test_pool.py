"""The worker pool's reaping of exited workers: while serving, and during the drain."""

from __future__ import annotations

import asyncio
import logging
import os

from collector.config.settings import Config
from collector.daemon.pool import WorkerPool
from collector.telemetry.registry import Telemetry


class _ExitedWorker:
    """A worker process whose sentinel fired: it has exited (with ``exitcode``)."""

    def __init__(self, sentinel: int = -1, exitcode: int = 0) -> None:
        self.sentinel = sentinel
        self.exitcode = exitcode
        self.joined = 0

    def join(self, timeout: float | None = None) -> None:
        self.joined += 1

    def is_alive(self) -> bool:
        return False


def _exit_worker(pool: WorkerPool, worker: _ExitedWorker, *, stopping: bool) -> None:
    async def exit_now() -> None:
        pool._stopping = stopping
        asyncio.get_running_loop().add_reader(worker.sentinel, lambda: None)
        pool._exited(0, worker)
        for task in list(pool._restarts):  # the restart is not under test
            task.cancel()

    asyncio.run(exit_now())


def _restarts(telemetry: Telemetry) -> float:
    value = telemetry.registry.get_sample_value("evald_worker_restarts_total", {"worker": "0"})
    return value or 0.0


def _lost(telemetry: Telemetry) -> tuple[float, float]:
    sample = telemetry.registry.get_sample_value
    return (
        sample("evald_worker_traces_lost_total") or 0.0,
        sample("evald_worker_spans_lost_total") or 0.0,
    )


def test_a_worker_exiting_during_the_drain_is_left_for_the_drain_to_reap() -> None:
    # Two threads waiting for one child race: the loser's join returns with the child
    # seemingly alive, and a clean exit was logged "did not stop within the grace period".
    telemetry = Telemetry()
    pool = WorkerPool(Config(), telemetry, logging.INFO)
    read, write = os.pipe()
    try:
        worker = _ExitedWorker(read)
        pool._processes[0] = worker
        _exit_worker(pool, worker, stopping=True)
        assert worker.joined == 0 and _restarts(telemetry) == 0
        serving = WorkerPool(Config(), telemetry, logging.INFO)
        serving._processes[0] = worker
        _exit_worker(serving, worker, stopping=False)  # a crash: reaped here and counted
        assert worker.joined == 1 and _restarts(telemetry) == 1
    finally:
        os.close(read)
        os.close(write)


def test_a_worker_dying_during_the_drain_has_what_it_held_counted_lost() -> None:
    telemetry = Telemetry()
    pool = WorkerPool(Config(), telemetry, logging.INFO)
    died, drained = _ExitedWorker(exitcode=-9), _ExitedWorker(exitcode=0)
    pool.states[0].publish(True, False, 3, 30)  # what each last published
    pool.states[1].publish(True, False, 0, 0)  # (a drained worker clears its own)
    pool._join([died, drained], 0.1)
    assert _lost(telemetry) == (3.0, 30.0)


def test_a_worker_whose_exit_was_counted_before_the_drain_is_not_counted_again() -> None:
    telemetry = Telemetry()
    pool = WorkerPool(Config(), telemetry, logging.INFO)
    read, write = os.pipe()
    try:
        crashed = _ExitedWorker(read, exitcode=-9)
        pool._processes[0] = crashed
        pool.states[0].publish(True, False, 2, 20)
        _exit_worker(pool, crashed, stopping=False)  # counted; its restart is pending
        assert _lost(telemetry) == (2.0, 20.0)
        pool.states[0].publish(True, False, 5, 50)  # (whatever the slots say now)
        pool._join([crashed, None], 0.1)  # the drain comes before the restart
        assert _lost(telemetry) == (2.0, 20.0)
    finally:
        os.close(read)
        os.close(write)
