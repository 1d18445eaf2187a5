"""Plug-in evaluators on threads of their own, so one that hangs cannot stall evaluation.

Python cannot interrupt a running function. ``IsolatedCalls`` therefore runs each
plug-in evaluator's ``evaluate`` on a daemon thread dedicated to that evaluator and
waits at most ``timeout``: past it the caller gets ``EvaluatorTimeout`` and moves on
to the next evaluator and the next trace. The stuck call keeps its thread; until it
returns, that evaluator's later calls fail at once with ``EvaluatorBusy`` instead of
queueing behind it, so a hung evaluator holds one thread and nothing grows. An async
``evaluate`` is awaited on the thread's own event loop and cancelled at ``timeout``.

Built-in evaluators (``evaluators.builtin``) and the judges' front ends
(``evaluators.judges``, whose calls go through the judge worker or fail fast) are
bounded and run inline: handing a call to a thread costs tens of microseconds.

A thread with no call for ``idle_exit`` seconds exits (a spec reload replaces the
evaluator objects; their threads must not pile up). Daemon threads never delay the
process's exit.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["EvaluatorBusy", "EvaluatorTimeout", "IsolatedCalls", "runs_inline"]

_INLINE_MODULES = ("evaluators.builtin.", "evaluators.judges.")


class EvaluatorTimeout(Exception):
    """``evaluate`` did not return in time; it is still running on its thread."""


class EvaluatorBusy(Exception):
    """The evaluator's previous call, which timed out, has not returned yet."""


def runs_inline(evaluator: object) -> bool:
    """True for evald's own evaluators, which run on the caller's thread."""
    return type(evaluator).__module__.startswith(_INLINE_MODULES)


class _Call:
    """One ``evaluate`` call handed to a worker thread; ``done`` is set when it ends."""

    __slots__ = ("done", "error", "function", "value")

    def __init__(self, function: Callable[[], object]) -> None:
        self.function = function
        self.done = threading.Event()
        self.value: object = None
        self.error: BaseException | None = None


class _Worker(threading.Thread):
    """The thread of one evaluator object: runs its calls one at a time."""

    def __init__(self, owner: IsolatedCalls, evaluator: object) -> None:
        super().__init__(name=f"evald-evaluator-{type(evaluator).__name__}", daemon=True)
        self.owner = owner
        self.evaluator = evaluator  # held, so its id() is not reused while this runs
        self.calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self.current: _Call | None = None  # the last call handed over (owner's lock)
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self) -> None:
        try:
            while True:
                try:
                    call = self.calls.get(timeout=self.owner.idle_exit)
                except queue.Empty:
                    if self.owner.retire(self):
                        return
                    continue
                if call is None:  # the owner closed
                    return
                self._run(call)
        finally:
            if self._loop is not None:
                self._loop.close()

    def _run(self, call: _Call) -> None:
        try:
            value = call.function()
            if inspect.isawaitable(value):
                value = self._await(value)
            call.value = value
        # Not swallowed: the caller re-raises it (EvaluationRunner reports it as an
        # ErrorResult). BaseException too: a plug-in raising SystemExit or
        # CancelledError here must not kill the thread with the call unanswered.
        except BaseException as exc:
            call.error = exc
        finally:
            call.done.set()

    def _await(self, awaitable: Awaitable[object]) -> object:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        try:
            return self._loop.run_until_complete(self._bounded(awaitable))
        finally:
            if inspect.iscoroutine(awaitable):
                awaitable.close()  # no-op once finished; avoids "never awaited" otherwise

    async def _bounded(self, awaitable: Awaitable[object]) -> object:
        # Whichever timer fires first (this one or the caller's wait), the result
        # reads the same; a TimeoutError of the evaluator's own passes through.
        scope = asyncio.timeout(self.owner.timeout)
        try:
            async with scope:
                return await awaitable
        except TimeoutError:
            if scope.expired():
                raise EvaluatorTimeout(_timed_out(self.owner.timeout)) from None
            raise


class IsolatedCalls:
    """Calls evaluators on their own threads, each call bounded by ``timeout`` seconds.

    Thread-safe. ``close`` lets idle threads exit; a stuck one exits when its call
    returns (it is a daemon thread meanwhile).
    """

    def __init__(self, timeout: float, idle_exit: float = 60.0) -> None:
        self.timeout = timeout
        self.idle_exit = idle_exit
        self._workers: dict[int, _Worker] = {}
        self._lock = threading.Lock()

    def call(self, evaluator: object, function: Callable[[], object]) -> Any:
        """``function()`` (awaited if it returns an awaitable) on ``evaluator``'s thread.

        Raises what it raises, ``EvaluatorTimeout`` if it takes longer than
        ``timeout``, or at once ``EvaluatorBusy`` while a timed-out call of the same
        evaluator is still running.
        """
        call = _Call(function)
        with self._lock:
            worker = self._workers.get(id(evaluator))
            if worker is None:
                worker = self._workers[id(evaluator)] = _Worker(self, evaluator)
                worker.start()
            elif worker.current is not None and not worker.current.done.is_set():
                raise EvaluatorBusy(
                    "its previous call timed out and has not returned yet; "
                    "calls fail at once until it does"
                )
            worker.current = call
            worker.calls.put(call)
        if not call.done.wait(self.timeout):
            raise EvaluatorTimeout(_timed_out(self.timeout))
        if call.error is not None:
            raise call.error
        return call.value

    def retire(self, worker: _Worker) -> bool:
        """Called by an idle worker: True (and forgotten) unless a call just arrived."""
        with self._lock:
            if not worker.calls.empty():
                return False
            if self._workers.get(id(worker.evaluator)) is worker:
                del self._workers[id(worker.evaluator)]
            return True

    def close(self) -> None:
        """Ask every thread to exit once its current call (if any) returns."""
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            worker.calls.put(None)

    @property
    def threads(self) -> int:
        """Evaluator threads alive (idle or busy)."""
        with self._lock:
            return len(self._workers)


def _timed_out(timeout: float) -> str:
    return f"evaluate() did not return within {timeout:g} s"
