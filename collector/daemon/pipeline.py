"""The daemon's pipeline: receivers → assembler → bounded queue → evaluation thread.

The assembler belongs to the event loop thread (receivers call ``consume`` there,
the completion timer runs there). Completed traces cross to one evaluation thread
through a bounded queue; when that queue is full the pipeline refuses new spans
with ``Overloaded`` (receivers answer 503 / UNAVAILABLE, senders retry) instead of
dropping accepted data.

Sessions (``scope: session`` specs) live on the evaluation thread, inside the
evaluation stage; the timer only asks for them to be checked: when the processor's
published session deadline has passed, ``tick`` puts one marker in the same
queue, so a quiet daemon completes sessions too, on the thread that evaluates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

from collector.assembly.sessions import SessionCompletion
from collector.assembly.traces import Offer, TraceAssembler
from collector.config.settings import Config
from collector.core.clock import Clock
from collector.core.records import CompletionReason, LogRecord, Span, Trace
from collector.processing.stage import EvaluationStage
from collector.receivers.handoff import ConsumeResult, Overloaded
from collector.telemetry.registry import Telemetry

log = logging.getLogger(__name__)

_SESSIONS_DUE = object()  # "check the sessions": at most one in the queue at a time


class _Stop(NamedTuple):
    """The last item the evaluation thread takes: evaluate open sessions until
    ``deadline`` (``time.monotonic``), count the rest dropped, end."""

    deadline: float


_MAX_TIMER_WAIT_S = 0.5  # re-check at least this often (deadlines move as spans arrive)
_MIN_TIMER_WAIT_S = 0.005


class Pipeline:
    """Implements ``SignalConsumer`` (spans and log records) for the receivers and runs
    the evaluation thread."""

    def __init__(
        self, config: Config, clock: Clock, stage: EvaluationStage, telemetry: Telemetry
    ) -> None:
        """``stage`` completes sessions on ``clock``, the clock that completes traces."""
        self._clock = clock
        self._stage = stage
        self._telemetry = telemetry
        self._retry_after = config.receivers.otlp.retry_after
        self._queue: queue.Queue[object] = queue.Queue(maxsize=config.pipeline.queue_size)
        # Read when scraped, not set per trace: exact at every scrape, and ≈ 1 µs per
        # trace (two locked qsize() and gauge writes) off the hot path.
        telemetry.evaluation.queue_depth.set_function(self._queue.qsize)
        self._assembler = TraceAssembler(config.assembly, clock, telemetry)
        # Session checks queued and done: each counter has one writer (the event loop
        # and the evaluation thread); a check is pending while they differ.
        self._session_checks_queued = 0
        self._session_checks_done = 0
        self._worker: threading.Thread | None = None
        self._timer: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._accepting = False

    # --- SignalConsumer -------------------------------------------------------
    def consume(self, spans: Sequence[Span]) -> ConsumeResult:
        """Hand spans to the assembler; ``Overloaded`` if evaluation is behind or stopping."""
        return self._hand_over(lambda offer: self._assembler.add(spans, offer))

    def consume_logs(self, records: Sequence[LogRecord]) -> ConsumeResult:
        """Hand log records to the assembler, with ``consume``'s refusals: a record can
        evict a trace like a span, so a full queue refuses both signals alike."""
        return self._hand_over(lambda offer: self._assembler.add_logs(records, offer))

    def _hand_over(self, add: Callable[[Offer], ConsumeResult | None]) -> ConsumeResult:
        if not self._accepting:
            raise Overloaded("evald is shutting down", self._retry_after)
        if self._queue.full():
            raise Overloaded("evaluation queue is full", self._retry_after)
        result = add(self._offer)
        if result is None:  # a trace evicted to make room found the queue full
            raise Overloaded("evaluation queue is full", self._retry_after)
        self._wake.set()  # a new trace may bring the next deadline forward
        return result

    def _offer(self, trace: Trace) -> bool:
        """A completed trace into the queue, if it has room now."""
        try:
            self._queue.put_nowait(trace)
        except queue.Full:
            return False
        return True

    def tick(self) -> None:
        """Release the traces that are due at the clock's current time.

        The completion timer calls this on its own; call it directly after moving an
        injected clock. Event loop thread only. A full queue leaves traces held.
        """
        self._check_sessions_if_due()  # first: released traces may fill the queue
        self._assembler.tick(self._offer)  # a full queue: traces stay held, the next tick retries

    def _check_sessions_if_due(self) -> None:
        """Ask the evaluation thread to complete due sessions (one marker at a time).

        A full queue skips it: the evaluation thread is busy and checks the sessions
        after each trace anyway. The evaluation thread counts a check done before it
        checks, so a due session is never missed.
        """
        deadline = self._stage.session_deadline
        pending = self._session_checks_queued != self._session_checks_done
        if pending or deadline is None or deadline > self._clock.now():
            return
        try:
            self._queue.put_nowait(_SESSIONS_DUE)
        except queue.Full:
            return
        self._session_checks_queued += 1

    @property
    def queue_depth(self) -> int:
        """Completed traces waiting for, or in, evaluation."""
        return self._queue.unfinished_tasks

    def submit(self, task: Callable[[], None]) -> bool:
        """Run ``task`` on the evaluation thread, after what is queued; False (not run)
        if the queue is full or the pipeline stopped accepting."""
        if not self._accepting:
            return False
        try:
            self._queue.put_nowait(task)
        except queue.Full:
            return False
        return True

    @property
    def full(self) -> bool:
        """True while ``consume`` would refuse everything (queue full, or stopping)."""
        return not self._accepting or self._queue.full()

    def held(self) -> tuple[int, int]:
        """(traces, spans and log records) this pipeline holds: assembling or queued
        (queued traces count as traces only). Event loop thread."""
        assembler = self._assembler
        spans = assembler.in_flight_spans + assembler.in_flight_log_records
        return assembler.in_flight_traces + self.queue_depth, spans

    # --- lifecycle ------------------------------------------------------------
    def start(self) -> None:
        """Start the evaluation thread and the completion timer (needs a running loop)."""
        if self._worker is not None:
            return
        # No evaluation thread runs here: a marker dropped at shutdown is forgotten.
        self._session_checks_queued = self._session_checks_done = 0
        self._worker = threading.Thread(
            target=self._evaluate_forever, name="evald-evaluation", daemon=True
        )
        self._worker.start()
        self._timer = asyncio.get_running_loop().create_task(self._tick_forever())
        self._accepting = True

    @property
    def ready(self) -> bool:
        """True while spans are being accepted, completed and evaluated.

        A completion timer that died (a bug) makes the daemon unready, so an
        orchestrator restarts it rather than letting traces pile up unseen.
        """
        timer_alive = self._timer is not None and not self._timer.done()
        worker_alive = self._worker is not None and self._worker.is_alive()
        return self._accepting and timer_alive and worker_alive

    async def shutdown(self, timeout: float) -> bool:
        """Stop accepting, release every held trace, evaluate what is queued, stop.

        Returns False if the evaluation thread did not finish within ``timeout``
        (traces still queued then are counted as dropped). Safe before start and twice.
        """
        self._accepting = False
        deadline = time.monotonic() + timeout
        if self._timer is not None:
            self._timer.cancel()
            # A timer that died of a bug was logged when it died; shutdown goes on.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._timer
            self._timer = None
        worker, self._worker = self._worker, None
        if worker is None:
            return True
        await asyncio.to_thread(self._flush_held, deadline)
        await asyncio.to_thread(worker.join, _remaining(deadline))
        if worker.is_alive():
            self._drop_queued("shutdown_timeout")
            # The worker still owes a stop: past the deadline it counts open sessions as
            # dropped instead of evaluating them, then ends (never two workers later).
            self._queue.put_nowait(_Stop(deadline))
            log.error("evaluation did not finish within the shutdown grace period")
            return False
        return True

    # --- completion timer (event loop) -----------------------------------------
    async def _tick_forever(self) -> None:
        try:
            await self._tick_loop()
        except Exception:  # a bug: say so once; `ready` turns false (see there)
            log.exception("the trace completion timer stopped")
            raise

    async def _tick_loop(self) -> None:
        while True:
            self.tick()
            self._wake.clear()
            deadline = self._assembler.next_deadline()
            wait = _MAX_TIMER_WAIT_S
            if deadline is not None:
                wait = min(wait, max(_MIN_TIMER_WAIT_S, deadline - self._clock.now()))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    def _flush_held(self, deadline: float) -> None:
        """Release every held trace into the queue, waiting for room until ``deadline``.

        Runs off the event loop (it may block), once receivers and timer are stopped,
        so nothing else touches the assembler any more.
        """

        def offer(trace: Trace) -> bool:
            try:
                # Past the deadline, no wait at all: 50 000 held traces times even 1 ms
                # each would overrun the grace period by a minute.
                self._queue.put(trace, timeout=_remaining(deadline))
            except queue.Full:
                self._telemetry.evaluation.traces_dropped.labels("shutdown_timeout").inc()
            return True  # taken or counted as dropped: released either way

        self._assembler.flush(CompletionReason.SHUTDOWN, offer)
        try:
            self._queue.put(_Stop(deadline), timeout=_remaining(deadline))
        except queue.Full:
            self._drop_queued("shutdown_timeout")
            self._queue.put_nowait(_Stop(deadline))

    def _drop_queued(self, reason: str) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            self._queue.task_done()
            if isinstance(item, Trace):
                self._telemetry.evaluation.traces_dropped.labels(reason).inc()

    # --- evaluation thread -------------------------------------------------------
    def _evaluate_forever(self) -> None:
        while True:
            item = self._queue.get()
            try:
                self._evaluate(item)
            except Exception:  # never let one trace kill the only evaluation thread
                self._telemetry.evaluation.traces_dropped.labels("internal_error").inc()
                log.exception("evaluating a trace failed")
            finally:
                self._queue.task_done()
            if isinstance(item, _Stop):
                return

    def _evaluate(self, item: object) -> None:
        if isinstance(item, _Stop):
            # Open sessions are evaluated like held traces, within the same deadline.
            self._stage.flush_sessions(SessionCompletion.SHUTDOWN, item.deadline)
        elif item is _SESSIONS_DUE:
            self._session_checks_done += 1
            self._stage.tick_sessions()
        elif isinstance(item, Trace):
            self._stage.process(item)
        else:  # a task from ``submit``
            assert callable(item)
            item()


def _remaining(deadline: float) -> float:
    """Seconds until ``deadline`` (monotonic), never negative: a ``Queue.put`` timeout."""
    return max(0.0, deadline - time.monotonic())
