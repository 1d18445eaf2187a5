"""One completed trace → trajectory → evaluations → sinks. Shared by serve and replay.

``TraceProcessor`` does the four steps of evaluation and nothing else: normalize
the trace, match it to the specs in force, run the due evaluators (deterministic
ones here, in the caller's thread; LLM judges through ``JudgeHandoff``) and emit the
results through ``SinkFanout``. Sessions are ``SessionStage``'s; the two are put
together, with their lifecycle, by ``EvaluationStage``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from collector.core.records import Trace
from collector.normalize import Mappings, Run, inherit_session, normalize_for, normalize_runs
from collector.processing.fanout import SinkFanout
from collector.processing.judging import JudgeHandoff
from collector.telemetry.registry import Telemetry
from evaluators.runner import BoundEvaluator, EvaluationRunner, Outcome
from evaluators.spec import Scope, SpecSet, parts_read_by
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)
_NORMALIZE_FAILURES_LOGGED = 10


@dataclass(frozen=True)
class EvaluationPlan:
    """What every trace is evaluated with.

    ``specs`` is called once per trace so that a reload takes effect on the next trace
    without locking; ``always`` runs on every trace without a spec
    (``evaluation.always``: latency, failure).
    """

    specs: Callable[[], SpecSet]
    always: Sequence[BoundEvaluator] = ()
    runner: EvaluationRunner | None = None
    mappings: Mappings | None = None


class Evaluated(NamedTuple):
    """A processed run: its trajectory, the outcomes written first, the specs used;
    ``skipped``: no agent run, not evaluated (``Trajectory.skip_reason``)."""

    trajectory: Trajectory
    outcomes: list[Outcome]
    specs: SpecSet
    skipped: bool = False


class TraceProcessor:
    """Normalize → match → evaluate → emit, for traces and merged sessions.

    A dataset spec runs the evaluators of the trace's item; a trace it matches but no
    item does is counted (``evald_dataset_unmatched_traces_total{spec}``, and a log
    line per spec on ``close``). Never raises: a trace that cannot be normalised and a
    failing sink are logged and counted.
    """

    def __init__(
        self,
        plan: EvaluationPlan,
        fanout: SinkFanout,
        telemetry: Telemetry,
        judges: JudgeHandoff | None = None,
    ) -> None:
        self._plan = plan
        self._always = tuple(plan.always)
        self._runner = plan.runner or EvaluationRunner()
        self._fanout = fanout
        self._telemetry = telemetry
        self._judges = judges or JudgeHandoff(None, wait=True, drain_timeout=0.0)
        self._normalize_failures_logged = 0
        self._unmatched: Counter[str] = Counter()
        # What every trace is normalised with: what the always-on evaluators and the
        # sinks read; a trace whose specs read more is normalised again (``_deepened``).
        self._parts = parts_read_by(self._always) | fanout.reads

    def process(self, trace: Trace) -> list[Evaluated] | None:
        """Evaluate each run of ``trace`` (one, or one per turn of a conversation it
        holds: ``normalize_runs``) and write its results; None if it could not be
        normalised.

        With judges handed over (not awaited) the outcomes returned are the
        deterministic ones; the judges' reach the sinks later.
        """
        runs = self._runs(trace)
        if runs is None:
            return None
        specs = self._plan.specs()
        return [self._evaluated(run, specs) for run in runs]

    def _evaluated(self, run: Run, specs: SpecSet) -> Evaluated:
        trace, trajectory = run.trace, run.trajectory
        if trajectory.skip_reason is not None:  # a setup span, a stray trace: not a run
            self._telemetry.evaluation.traces_skipped.labels(trajectory.skip_reason).inc()
            self._fanout.write_skipped(trajectory)
            return Evaluated(trajectory, [], specs, skipped=True)
        matched = self._bound(trajectory, specs, "trace")
        if run.left_out:  # (a turn's spans alone may not record the session it inherited)
            deepened = self._deepened(trace, trajectory, matched, specs)
            trajectory = inherit_session(deepened, trajectory.session_id)
        bound = [*self._always, *matched]
        outcomes = self._run(
            trajectory, bound, lambda out: self._fanout.write(trajectory, out, trace)
        )
        return Evaluated(trajectory, outcomes, specs)

    def process_session(self, trajectory: Trajectory) -> None:
        """Run the matching session specs (not ``always``, whose facts are per trace)
        on a merged session trajectory; results reach the sinks as a session's."""
        bound = self._bound(trajectory, self._plan.specs(), "session")
        if bound:
            self._run(trajectory, bound, lambda out: self._emit_session(trajectory, out))

    def evaluate(self, trajectory: Trajectory) -> list[Outcome]:
        """Every due evaluator of the always-on set and of the matching specs, judges
        awaited; nothing is written."""
        bound = [*self._always, *self._bound(trajectory, self._plan.specs(), "trace")]
        inline, judged = self._judges.split(bound, trajectory)
        return [*self._run_inline(trajectory, inline), *self._judges.judge_now(trajectory, judged)]

    def close(self, timeout: float | None = None) -> None:
        """Let pending judge work finish, then close every sink and the runner; safe to
        call twice.

        ``timeout`` is the whole budget (daemon shutdown): judges get at most half of
        it (and at most ``judges.drain_timeout``), the sinks' flush what is left.
        None: judges get ``judges.drain_timeout`` and each sink its own limits.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        self._judges.close(timeout)
        for spec_id, count in sorted(dict(self._unmatched).items()):  # copy: the worker may add
            log.info("spec %s: %d trace(s) matched no item of its dataset", spec_id, count)
        self._unmatched.clear()
        self._fanout.close(deadline)
        self._runner.close()

    def _run(
        self,
        trajectory: Trajectory,
        bound: Sequence[BoundEvaluator],
        emit: Callable[[list[Outcome]], None],
    ) -> list[Outcome]:
        """Run the due evaluators of ``bound``, ``emit`` the outcomes, hand judges over."""
        inline, judged = self._judges.split(bound, trajectory)
        outcomes = self._run_inline(trajectory, inline)
        if judged and self._judges.waits:
            outcomes.extend(self._judges.judge_now(trajectory, judged))
        emit(outcomes)
        if judged and not self._judges.waits:  # after the first write: later ones add to it
            self._judges.hand_over(trajectory, judged, self._fanout.write_more)
        return outcomes

    def _run_inline(
        self, trajectory: Trajectory, inline: Sequence[BoundEvaluator]
    ) -> list[Outcome]:
        # ``split`` kept the due evaluators only: run each, without asking again.
        run_one = self._runner.run_one
        return [run_one(trajectory, item) for item in inline]

    def _bound(self, trajectory: Trajectory, specs: SpecSet, scope: Scope) -> list[BoundEvaluator]:
        """The evaluators of the matching specs of ``scope`` (dataset misses counted)."""
        bound: list[BoundEvaluator] = []
        for spec in specs.matching(trajectory, scope):
            chosen = spec.evaluators_for(trajectory)
            if chosen is None:
                self._unmatched[spec.id] += 1
                self._telemetry.evaluation.dataset_unmatched.labels(spec.id).inc()
            else:
                bound.extend(chosen)
        return bound

    def _deepened(
        self, trace: Trace, trajectory: Trajectory, matched: list[BoundEvaluator], specs: SpecSet
    ) -> Trajectory:
        """``trajectory``, normalised again with every part when its specs read one
        that was left out (``evaluators.depth``); the parts never change which specs
        match. A turn a session spec may hold is built for the session specs too."""
        wanted = parts_read_by(matched)
        session = bool(trajectory.session_id) and specs.has_session_specs
        if session and specs.may_hold_session_of(trajectory):
            wanted |= specs.session_parts
        if wanted <= self._parts:
            return trajectory
        built = self._trajectory(trace, self._parts | wanted)
        return trajectory if built is None else built[0]

    def _runs(self, trace: Trace) -> list[Run] | None:
        try:
            return normalize_runs(trace, self._plan.mappings, self._parts)
        except Exception:  # a normalizer bug must cost one trace, not the daemon
            self._normalize_failed(trace)
            return None

    def _trajectory(self, trace: Trace, parts: frozenset[str]) -> tuple[Trajectory, bool] | None:
        try:
            return normalize_for(trace, self._plan.mappings, parts)
        except Exception:  # a normalizer bug must cost one trace, not the daemon
            self._normalize_failed(trace)
            return None

    def _normalize_failed(self, trace: Trace) -> None:
        self._telemetry.evaluation.normalize_errors.inc()
        if self._normalize_failures_logged < _NORMALIZE_FAILURES_LOGGED:
            self._normalize_failures_logged += 1
            log.exception("cannot build the trajectory of trace %s", trace.trace_id.hex())

    def _emit_session(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        if outcomes:  # every entry sampled out: the turns were written, nothing to add
            self._fanout.write_session(trajectory, outcomes)
