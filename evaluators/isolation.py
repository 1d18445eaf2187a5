"""Plug-in evaluators on threads of their own, so one that hangs cannot stall evaluation.

Python cannot interrupt a running function. ``IsolatedCalls`` therefore runs each
plug-in evaluator's ``evaluate`` on a daemon thread dedicated to that evaluator and
waits at most ``timeout``: past it the caller gets ``EvaluatorTimeout`` and moves on
to the next evaluator and the next trace. The stuck call keeps its thread; until it
returns, that evaluator's later calls fail at once with ``EvaluatorBusy`` instead of
queueing behind it, so a hung evaluator holds one thread. A spec reload builds new
evaluator objects, which would each get a thread to hang in: at most ``max_stuck``
calls may be stuck at once, beyond which every plug-in call fails at once with
``EvaluatorBusy`` until one returns, so threads stay bounded however often specs
are reloaded. An async ``evaluate`` is awaited on the thread's own event loop and
cancelled at ``timeout``.

Built-in evaluators (``evaluators.builtin``) and the judges' front ends
(``evaluators.judges``, whose calls go through the judge worker or fail fast) are
bounded and run inline: handing a call to a thread costs tens of microseconds.

A thread with no call for ``idle_exit`` seconds exits (a spec reload replaces the
evaluator objects; their threads must not pile up), except the thread of an async
evaluator that is still in use: its event loop lives as long as the evaluator, as
clients bound to it (``httpx.AsyncClient``) expect. Threads hold their evaluator
weakly and exit once it is gone. Daemon threads never delay the process's exit.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["EvaluatorAborted", "EvaluatorBusy", "EvaluatorTimeout", "IsolatedCalls", "runs_inline"]

_INLINE_MODULES = ("evaluators.builtin.", "evaluators.judges.")
_CANCEL_GRACE_S = 0.5
MAX_STUCK_CALLS = 16


class EvaluatorTimeout(Exception):
    """``evaluate`` did not return in time; it is still running on its thread."""


class EvaluatorBusy(Exception):
    """The evaluator's previous call, which timed out, has not returned yet."""


class EvaluatorAborted(Exception):
    """``evaluate`` raised a ``BaseException`` (``SystemExit``, ``KeyboardInterrupt``):
    reported as the evaluator's error, never let through to end evaluation."""


def runs_inline(evaluator: object) -> bool:
    """True for evald's own evaluators, which run on the caller's thread (asked once per
    evaluation: answered per class from a cache)."""
    cls = type(evaluator)
    found = _INLINE_CLASSES.get(cls)
    if found is None:
        if len(_INLINE_CLASSES) > _MAX_CLASSES:
            _INLINE_CLASSES.clear()  # classes come from specs: a few dozen; never unbounded
        found = _INLINE_CLASSES[cls] = cls.__module__.startswith(_INLINE_MODULES)
    return found


_INLINE_CLASSES: dict[type, bool] = {}
_MAX_CLASSES = 1024


class _Call:
    """One ``evaluate`` call handed to a worker thread; ``done`` is set when it ends."""

    __slots__ = ("awaiting", "done", "error", "function", "stuck", "value")

    def __init__(self, function: Callable[[], object]) -> None:
        self.function: Callable[[], object] | None = function
        self.done = threading.Event()
        self.awaiting = False  # an async evaluate: the worker's own timer cancels it
        self.stuck = False  # timed out and still running (counted by the owner)
        self.value: object = None
        self.error: BaseException | None = None


class _Worker(threading.Thread):
    """The thread of one evaluator object: runs its calls one at a time."""

    def __init__(self, owner: IsolatedCalls, evaluator: object) -> None:
        super().__init__(name=f"evald-evaluator-{type(evaluator).__name__}", daemon=True)
        self.owner = owner
        # Weak: a thread must not keep a replaced evaluator (spec reload) alive.
        self._evaluator = weakref.ref(evaluator)
        self.calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self.current: _Call | None = None  # the last call handed over (owner's lock)
        self.loop: asyncio.AbstractEventLoop | None = None

    def serves(self, evaluator: object) -> bool:
        """Whether this is ``evaluator``'s thread (not a dead one's whose id was reused)."""
        return self._evaluator() is evaluator

    @property
    def evaluator_alive(self) -> bool:
        return self._evaluator() is not None

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
            if self.loop is not None:
                self.loop.close()

    def _run(self, call: _Call) -> None:
        function, call.function = call.function, None  # holds the evaluator: let it go
        try:
            assert function is not None
            value = function()
            if inspect.isawaitable(value):
                value = self._await(value, call)
            call.value = value
        # Not swallowed: the caller re-raises it (EvaluationRunner reports it as an
        # ErrorResult). BaseException too: a plug-in raising SystemExit or
        # CancelledError here must not kill the thread with the call unanswered.
        except BaseException as exc:
            call.error = exc
        finally:
            del function
            self.owner.finished(call)

    def _await(self, awaitable: Awaitable[object], call: _Call) -> object:
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        call.awaiting = True
        try:
            return self.loop.run_until_complete(self._bounded(awaitable))
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
    returns (it is a daemon thread meanwhile). At most ``max_stuck`` calls are stuck
    (timed out, still running) at once; see the module docstring.
    """

    def __init__(
        self, timeout: float, idle_exit: float = 60.0, max_stuck: int = MAX_STUCK_CALLS
    ) -> None:
        self.timeout = timeout
        self.idle_exit = idle_exit
        self.max_stuck = max_stuck
        self._workers: dict[int, _Worker] = {}
        self._lock = threading.Lock()
        self._stuck = 0

    def call(self, evaluator: object, function: Callable[[], object]) -> Any:
        """``function()`` (awaited if it returns an awaitable) on ``evaluator``'s thread.

        Raises what it raises, ``EvaluatorTimeout`` if it takes longer than
        ``timeout``, or at once ``EvaluatorBusy`` while a timed-out call of the same
        evaluator is still running, or while ``max_stuck`` calls are.
        """
        call = _Call(function)
        with self._lock:
            if self._stuck >= self.max_stuck:
                raise EvaluatorBusy(
                    f"{self._stuck} plug-in calls timed out and have not returned; "
                    "plug-in calls fail at once until one does"
                )
            worker = self._workers.get(id(evaluator))
            if worker is None or not worker.serves(evaluator):
                worker = self._workers[id(evaluator)] = _Worker(self, evaluator)
                worker.start()
            elif worker.current is not None and not worker.current.done.is_set():
                raise EvaluatorBusy(
                    "its previous call timed out and has not returned yet; "
                    "calls fail at once until it does"
                )
            worker.current = call
            worker.calls.put(call)
        if not call.done.wait(self.timeout) and not (
            # An async call is cancelled by the worker's own timer, started a moment
            # after this wait: give it that moment, so the evaluator is free again.
            call.awaiting and call.done.wait(_CANCEL_GRACE_S)
        ):
            with self._lock:
                if not call.done.is_set():
                    call.stuck = True
                    self._stuck += 1
            raise EvaluatorTimeout(_timed_out(self.timeout))
        error = call.error
        if error is None:
            return call.value
        if isinstance(error, Exception | asyncio.CancelledError):
            raise error
        raise EvaluatorAborted(f"{type(error).__name__}: {error}") from error

    def finished(self, call: _Call) -> None:
        """Called by a worker when ``call`` returned (on time or not)."""
        with self._lock:
            if call.stuck:
                call.stuck = False
                self._stuck -= 1
            call.done.set()

    @property
    def stuck(self) -> int:
        """Calls that timed out and are still running."""
        with self._lock:
            return self._stuck

    def retire(self, worker: _Worker) -> bool:
        """Called by an idle worker: True (and forgotten) unless a call just arrived or
        it keeps the event loop of an evaluator still in use."""
        with self._lock:
            if not worker.calls.empty():
                return False
            if worker.loop is not None and worker.evaluator_alive:
                return False
            for key, held in list(self._workers.items()):
                if held is worker:
                    del self._workers[key]
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
