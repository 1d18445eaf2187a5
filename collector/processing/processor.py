"""One completed trace → trajectory → evaluations → sinks. Shared by serve and replay.

Deterministic evaluators run here, in the caller's thread (the pipeline's
evaluation thread, or replay's). LLM judge evaluators never do: with a
``JudgeWorker`` they are either handed over without blocking (``wait_for_judges``
False, the daemon: a full judge queue sheds the work, counted, and the results
reach the sinks later through ``write_more``) or awaited within the judges'
limits (True, replay: complete and reproducible results in one ``write``).

Sessions (``scope: session`` specs) are assembled here too, on the same thread:
each evaluated trajectory with a session id becomes a turn of its session while
any session spec is loaded, and a completed session is merged and evaluated
right away. Keeping the ``SessionAssembler`` on the evaluation thread means no
lock, and session results come from the thread that writes every other result;
the pipeline's timer only asks for a check when a session is due (see
``Pipeline.tick``), and every processed trace checks too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

from collector.assembly.sessions import Session, SessionAssembler, SessionCompletion
from collector.config.settings import Sessions
from collector.core.clock import Clock
from collector.core.records import Trace
from collector.normalize import Mappings, normalize
from collector.sinks import ResultSink, close_sink, write_more, write_session_to, write_to
from collector.telemetry.registry import Telemetry
from evaluators.judges.base import JudgeEvaluator
from evaluators.judges.worker import JudgeWorker
from evaluators.runner import BoundEvaluator, EvaluationRunner, Outcome, due
from evaluators.session_merge import merge_session
from evaluators.spec import Scope, SpecSet
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)


class TraceProcessor:
    """Evaluates completed traces and hands the results to every sink.

    ``specs`` is called once per trace so that a reload takes effect on the next
    trace without locking. ``always`` are the evaluators run on every trace
    without a spec (``evaluation.always``: latency, failure). A dataset spec runs
    the evaluators of the trace's item; a trace it matches but no item does is
    counted (``evald_dataset_unmatched_traces_total{spec}``, and a log line per
    spec on ``close``). Never raises: a trace that cannot be normalised and a
    failing sink are logged and counted.

    Sinks are called under one lock: judge results arrive on the judge thread
    while the evaluation thread writes the next trace.

    After ``start_sessions``, session specs are evaluated once per completed
    session on its merged trajectory (``evaluators.session_merge.merge_session``): only
    the matching session specs run (not ``always``, whose facts are per trace),
    and the results reach the sinks through ``write_session_to``, so per-trace
    facts are never counted twice. ``process``, ``tick_sessions``
    and ``flush_sessions`` must be called from one thread.
    """

    def __init__(
        self,
        specs: Callable[[], SpecSet],
        always: Sequence[BoundEvaluator],
        sinks: Sequence[ResultSink],
        telemetry: Telemetry,
        *,
        mappings: Mappings | None = None,
        runner: EvaluationRunner | None = None,
        judges: JudgeWorker | None = None,
        wait_for_judges: bool = True,
        judge_drain_timeout: float = 5.0,
    ) -> None:
        self._specs = specs
        self._always = tuple(always)
        self._sinks = tuple(sinks)
        self._telemetry = telemetry
        self._mappings = mappings
        self._runner = runner or EvaluationRunner()
        self._judges = judges
        self._wait_for_judges = wait_for_judges
        self._judge_drain_timeout = judge_drain_timeout
        self._sink_lock = threading.Lock()
        self._normalize_failures_logged = 0
        self._unmatched: Counter[str] = Counter()
        self._sessions: SessionAssembler | None = None
        self._sessions_until: float | None = None  # monotonic; past it sessions are dropped

    def start_sessions(self, config: Sessions, clock: Clock) -> None:
        """Assemble sessions for ``scope: session`` specs, completed on ``clock`` (the
        one that completes traces). Call once, before the first trace; without it
        session specs are never evaluated."""
        self._sessions = SessionAssembler(config, clock, self._evaluate_session, self._telemetry)

    @property
    def session_deadline(self) -> float | None:
        """The clock time at which ``tick_sessions`` will complete a session, or None.
        Safe to read from any thread (the pipeline's timer does)."""
        return None if self._sessions is None else self._sessions.deadline

    def process(self, trace: Trace) -> list[Outcome] | None:
        """Evaluate ``trace``; returns its outcomes, or None if it could not be normalised.

        With judges handed over (not awaited) the outcomes returned are the
        deterministic ones; the judges' follow. The trajectory then becomes a turn
        of its session (see the class), which may complete sessions.
        """
        trajectory = self._trajectory(trace)
        if trajectory is None:
            return None
        specs = self._specs()
        bound = [*self._always, *self._bound(trajectory, specs, "trace")]
        outcomes = self._run(trajectory, bound, lambda out: self._emit(trajectory, out, trace))
        self._add_turn(trajectory, specs)
        self._tick_sessions_if_due()  # a busy daemon completes sessions here, between traces
        return outcomes

    def _tick_sessions_if_due(self) -> None:
        # After every trace, with or without a session: a busy daemon's timer marker
        # may wait behind a backlog (Pipeline.tick) and due sessions must not.
        if self._sessions is not None and self._sessions.due():
            self._sessions.tick()

    def tick_sessions(self) -> None:
        """Evaluate the sessions that are complete at the clock's current time."""
        if self._sessions is not None:
            self._sessions.tick()

    def flush_sessions(self, reason: SessionCompletion, deadline: float | None = None) -> None:
        """Evaluate every open session now, oldest first (shutdown, end of input).

        ``deadline`` (``time.monotonic``): sessions still to evaluate after it are
        dropped and counted (``evald_sessions_dropped_total{reason="shutdown_timeout"}``).
        """
        if self._sessions is None:
            return
        self._sessions_until = deadline
        try:
            self._sessions.flush(reason)
        finally:
            self._sessions_until = None

    def evaluate(self, trajectory: Trajectory) -> list[Outcome]:
        """Every due evaluator of the always-on set and of the matching specs, judges awaited."""
        bound = [*self._always, *self._bound(trajectory, self._specs(), "trace")]
        inline, judged = self._split(bound, trajectory)
        return [*self._runner.run(trajectory, inline), *self._judge_now(trajectory, judged)]

    def close(self, timeout: float | None = None) -> None:
        """Let pending judge work finish, then close every sink and the runner; safe to
        call twice.

        ``timeout`` is the whole budget (daemon shutdown): judges get at most half of
        it (and at most ``judge_drain_timeout``), the sinks' flush what is left. None:
        judges get ``judge_drain_timeout`` and each sink its own limits (replay).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._judges is not None:
            drain = self._judge_drain_timeout
            self._judges.close(drain if timeout is None else min(drain, timeout / 2))
        for spec_id, count in sorted(dict(self._unmatched).items()):  # copy: the worker may add
            log.info("spec %s: %d trace(s) matched no item of its dataset", spec_id, count)
        self._unmatched.clear()
        for sink in self._sinks:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                close_sink(sink, remaining)
            except Exception:  # one sink failing to close must not keep others open
                log.exception("closing sink %s failed", sink.name)
        self._runner.close()

    def _run(
        self,
        trajectory: Trajectory,
        bound: Sequence[BoundEvaluator],
        emit: Callable[[list[Outcome]], None],
    ) -> list[Outcome]:
        """Run the due evaluators of ``bound``, ``emit`` the outcomes, hand judges over."""
        inline, judged = self._split(bound, trajectory)
        outcomes = self._runner.run(trajectory, inline)
        if judged and self._wait_for_judges:
            outcomes.extend(self._judge_now(trajectory, judged))
        emit(outcomes)
        if judged and not self._wait_for_judges:
            self._hand_over(trajectory, judged)  # after the first write: later ones add to it
        return outcomes

    def _add_turn(self, trajectory: Trajectory, specs: SpecSet) -> None:
        sessions = self._sessions
        if sessions is None or not trajectory.session_id or not specs.has_session_specs:
            return
        # Held when a session spec can match its service (the rest is decided on the
        # merge, so the order turns arrive in does not matter).
        if not specs.may_hold_session_of(trajectory):
            return
        sessions.add(trajectory)

    def _evaluate_session(self, session: Session) -> None:
        """The assembler's callback: merge a completed session, run its session specs."""
        if self._sessions_until is not None and time.monotonic() > self._sessions_until:
            self._telemetry.sessions_dropped.labels("shutdown_timeout").inc()
            return
        trajectory = merge_session(session.turns)
        bound = self._bound(trajectory, self._specs(), "session")
        if bound:
            self._run(trajectory, bound, lambda out: self._emit_session(trajectory, out))

    def _bound(self, trajectory: Trajectory, specs: SpecSet, scope: Scope) -> list[BoundEvaluator]:
        """The evaluators of the matching specs of ``scope`` (dataset misses counted)."""
        bound: list[BoundEvaluator] = []
        for spec in specs.matching(trajectory, scope):
            chosen = spec.evaluators_for(trajectory)
            if chosen is None:
                self._unmatched[spec.id] += 1
                self._telemetry.dataset_unmatched.labels(spec.id).inc()
            else:
                bound.extend(chosen)
        return bound

    def _split(
        self, bound: Sequence[BoundEvaluator], trajectory: Trajectory
    ) -> tuple[list[BoundEvaluator], list[BoundEvaluator]]:
        """(run here, judge) among the due evaluators. Without a judge worker, judge
        evaluators run here too and report that no judge is configured."""
        inline: list[BoundEvaluator] = []
        judged: list[BoundEvaluator] = []
        for item in bound:
            if not due(item, trajectory):
                continue
            is_judge = self._judges is not None and isinstance(item.evaluator, JudgeEvaluator)
            (judged if is_judge else inline).append(item)
        return inline, judged

    def _judge_now(self, trajectory: Trajectory, judged: list[BoundEvaluator]) -> list[Outcome]:
        if not judged or self._judges is None:
            return []
        return self._judges.evaluate(trajectory, judged)

    def _hand_over(self, trajectory: Trajectory, judged: list[BoundEvaluator]) -> None:
        assert self._judges is not None
        for item in judged:
            self._judges.submit(trajectory, item, self._emit_later)  # sheds when full

    def _trajectory(self, trace: Trace) -> Trajectory | None:
        try:
            return normalize(trace, self._mappings)
        except Exception:  # a normalizer bug must cost one trace, not the daemon
            self._telemetry.normalize_errors.inc()
            if self._normalize_failures_logged < 10:
                self._normalize_failures_logged += 1
                log.exception("cannot build the trajectory of trace %s", trace.trace_id.hex())
            return None

    def _emit(
        self, trajectory: Trajectory, outcomes: Sequence[Outcome], trace: Trace | None = None
    ) -> None:
        # The spans go along for sinks that forward them.
        self._to_sinks(trajectory, lambda sink: write_to(sink, trajectory, outcomes, trace))

    def _emit_session(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        if not outcomes:
            return  # every entry sampled out: the turns were written, nothing to add
        self._to_sinks(trajectory, lambda sink: write_session_to(sink, trajectory, outcomes))

    def _emit_later(self, trajectory: Trajectory, outcome: Outcome) -> None:
        """A judge's outcome for a trajectory already written (judge thread)."""
        self._to_sinks(trajectory, lambda sink: write_more(sink, trajectory, [outcome]))

    def _to_sinks(self, trajectory: Trajectory, write: Callable[[ResultSink], None]) -> None:
        """``write`` to every sink, one caller at a time (evaluation and judge threads)."""
        with self._sink_lock:
            for sink in self._sinks:
                try:
                    write(sink)
                except Exception:  # the sink boundary: count, log, go on with the others
                    self._sink_failed(sink, trajectory)

    def _sink_failed(self, sink: ResultSink, trajectory: Trajectory) -> None:
        self._telemetry.sink_errors.labels(sink.name).inc()
        log.exception("sink %s failed for trace %s", sink.name, trajectory.trace_id)
