"""The front's worker processes: started, watched, restarted, drained (ADR 0018).

Workers are started with the ``spawn`` method (a fresh interpreter: grpcio, whose
threads the front runs, is not fork-safe), before the front's receivers exist.
A worker that exits while the daemon is not stopping is counted
(``evald_worker_restarts_total``), what it held (its last published traces and
spans) is counted lost (``evald_worker_traces_lost_total``,
``evald_worker_spans_lost_total``), its unanswered exports get a retryable refusal,
and it is started again, after a pause that grows while it keeps dying.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import pickle
import socket
import time
from collections.abc import Sequence
from typing import Any

from collector.config.settings import Config
from collector.daemon.frames import Kind
from collector.daemon.links import LinkClosed, WorkerLink
from collector.daemon.shared_state import Slot, WorkerState, shared_array
from collector.daemon.worker import WorkerSetup, run_worker
from collector.daemon.worker_config import worker_config
from collector.telemetry.registry import Telemetry

log = logging.getLogger(__name__)

_START_TIMEOUT_S = 120.0  # a spawned worker imports evald and loads the specs
_RESTART_PAUSE_S = (0.1, 10.0)  # the first and the longest pause before a restart
_STABLE_S = 30.0  # a worker that ran this long restarts at once again
_ASK_TIMEOUT_S = 5.0  # metrics / digest answers
_SOCKET_BUFFER = 1 << 20


class WorkerPool:
    """``config.pipeline.worker_count()`` workers; ``start``, then ``drain`` once."""

    def __init__(self, config: Config, telemetry: Telemetry, log_level: int) -> None:
        self._config = config
        self._telemetry = telemetry
        self._log_level = log_level
        self.count = config.pipeline.worker_count()
        # Any: typeshed's BaseContext does not declare Process/RawArray, the concrete ones do.
        self._context: Any = multiprocessing.get_context("spawn")
        self._shared = shared_array(self._context, self.count)
        self.states = [WorkerState(self._shared, index) for index in range(self.count)]
        self.links: list[WorkerLink | None] = [None] * self.count
        self._processes: list[Any] = [None] * self.count
        self._counted = [False] * self.count  # its exit counted (and a restart due)
        self._started_at = [0.0] * self.count
        self._pause = [_RESTART_PAUSE_S[0]] * self.count
        self._stopping = False
        self._restarts: set[asyncio.Task[None]] = set()
        telemetry.workers.workers.set(self.count)

    async def start(self) -> None:
        """Start every worker and wait until each runs its pipeline."""
        for index in range(self.count):
            await self._spawn(index)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not all(state.get(Slot.READY) for state in self.states):
            dead = [i for i, p in enumerate(self._processes) if p.exitcode is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"evald worker(s) {dead or 'all'} did not start")
            await asyncio.sleep(0.02)

    async def _spawn(self, index: int) -> None:
        self.states[index].clear()
        ours, theirs = socket.socketpair()
        for end in (ours, theirs):  # a 0.5 MB request part in one or two writes, not dozens
            end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SOCKET_BUFFER)
            end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _SOCKET_BUFFER)
        setup = WorkerSetup(worker_config(self._config, index), index, self.count, self._log_level)
        process = self._context.Process(
            target=run_worker,
            args=(setup, theirs, self._shared),
            name=f"evald-worker-{index}",
            daemon=True,
        )
        process.start()
        # Known before the first await: a drain that cancels this (re)start still joins it.
        self._processes[index], self._counted[index] = process, False
        theirs.close()
        link = WorkerLink(index, ours, self._route_turn)
        await link.open()
        self.links[index] = link
        self._started_at[index] = time.monotonic()
        loop = asyncio.get_running_loop()
        loop.add_reader(process.sentinel, self._exited, index, process)

    def _exited(self, index: int, process: Any) -> None:
        asyncio.get_running_loop().remove_reader(process.sentinel)
        if self._stopping:
            # The drain reaps its workers (``_join``, on another thread). Two threads
            # waiting for one child race: the loser's waitpid fails (ECHILD), and its
            # join returns with the child seemingly alive (a clean exit logged as killed).
            return
        process.join(1.0)  # its sentinel fired: it has exited, or is about to be reaped
        if self._processes[index] is not process:
            return
        state = self.states[index]
        traces, spans = state.get(Slot.TRACES), state.get(Slot.SPANS)
        workers = self._telemetry.workers
        workers.restarts.labels(str(index)).inc()
        workers.traces_lost.inc(traces)
        workers.spans_lost.inc(spans)
        log.error(
            "worker %d exited (code %s) holding %d traces, %d spans: counted lost; restarting",
            index,
            process.exitcode,
            traces,
            spans,
        )
        state.clear()
        self._counted[index] = True
        task = asyncio.get_running_loop().create_task(self._restart(index))
        self._restarts.add(task)
        task.add_done_callback(self._restarts.discard)

    async def _restart(self, index: int) -> None:
        link = self.links[index]
        if link is not None:
            await link.close()  # unanswered exports: retryable refusals
        ran = time.monotonic() - self._started_at[index]
        pause = _RESTART_PAUSE_S[0] if ran > _STABLE_S else self._pause[index]
        self._pause[index] = min(_RESTART_PAUSE_S[1], pause * 2)
        await asyncio.sleep(pause)
        if not self._stopping:
            await self._spawn(index)

    def _route_turn(self, owner: int, body: bytes) -> None:
        link = self.links[owner] if 0 <= owner < self.count else None
        if link is None or not link.alive:
            self._telemetry.workers.turns_lost.inc()
            return
        link.send(Kind.TURN, body)

    # --- what the front asks of them -------------------------------------------------
    def accepting(self, index: int) -> bool:
        """Whether worker ``index`` runs and its evaluation queue has room."""
        link = self.links[index]
        state = self.states[index]
        return link is not None and link.alive and not state.get(Slot.FULL)

    @property
    def ready(self) -> bool:
        return not self._stopping and all(
            link is not None and link.alive and state.get(Slot.READY)
            for link, state in zip(self.links, self.states, strict=True)
        )

    def reload(self) -> None:
        """Every worker reloads its specs (SIGHUP at the front)."""
        for link in self.links:
            if link is not None:
                link.send(Kind.RELOAD)

    async def ask(self, kind: Kind) -> list[tuple[int, Any]]:
        """Every running worker's answer to ``kind`` (metrics, digest), unpickled;
        a worker that does not answer within a few seconds is left out."""
        return [(index, pickle.loads(body)) for index, body in await self.ask_bodies(kind)]

    async def ask_bodies(self, kind: Kind) -> list[tuple[int, bytes]]:
        """``ask``, the answers still pickled (to unpickle off the event loop)."""
        asked = [
            (link.index, link.request(kind, b"")) for link in self.links if link and link.alive
        ]
        answers: list[tuple[int, bytes]] = []
        for index, future in asked:
            try:
                answers.append((index, await asyncio.wait_for(future, _ASK_TIMEOUT_S)))
            except (LinkClosed, TimeoutError):
                continue
        return answers

    async def drain(self, grace: float) -> bool:
        """Every worker evaluates what it holds within ``grace`` seconds and exits.

        A worker still running then is killed and what it held counted lost.
        Returns False if any worker was not clean. Safe twice.
        """
        if self._stopping:
            return True
        self._stopping = True
        for task in list(self._restarts):
            task.cancel()
        body = pickle.dumps(grace)
        asked = [link.request(Kind.DRAIN, body) for link in self.links if link is not None]
        results = await asyncio.gather(
            *(asyncio.wait_for(future, grace + 1.0) for future in asked), return_exceptions=True
        )
        clean = all(isinstance(result, bytes) and pickle.loads(result) for result in results)
        await asyncio.to_thread(self._join, self._processes, 2.0)
        for link in self.links:
            if link is not None:
                await link.close()
        return clean

    def _join(self, processes: Sequence[Any], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for index, process in enumerate(processes):
            if process is None or self._counted[index]:  # never started, or already counted
                continue
            process.join(max(0.0, deadline - time.monotonic()))
            state = self.states[index]
            traces, spans = state.get(Slot.TRACES), state.get(Slot.SPANS)
            if process.is_alive():
                self._telemetry.workers.traces_lost.inc(traces)
                self._telemetry.workers.spans_lost.inc(spans)
                log.error("worker %d did not stop within the grace period: killed", index)
                process.kill()
                process.join()
            elif process.exitcode != 0:  # died while draining: what it last held is lost
                self._telemetry.workers.traces_lost.inc(traces)
                self._telemetry.workers.spans_lost.inc(spans)
                log.error(
                    "worker %d exited (code %s) while draining, holding %d traces, %d spans: "
                    "counted lost",
                    index,
                    process.exitcode,
                    traces,
                    spans,
                )
