"""Evaluation stages built by hand for tests (the product builds them in
``collector.processing.wiring.build_stage`` from a config)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from collector.config.settings import Sessions
from collector.core.clock import ManualClock
from collector.processing.fanout import SinkFanout
from collector.processing.judging import JudgeHandoff
from collector.processing.processor import EvaluationPlan, TraceProcessor
from collector.processing.sessions import SessionStage
from collector.processing.stage import EvaluationStage
from collector.sinks.base import ResultSink
from collector.telemetry.registry import Telemetry
from evaluators.judges.worker import JudgeWorker
from evaluators.runner import bind_always
from evaluators.spec import SpecSet


def make_stage(
    specs: SpecSet | Callable[[], SpecSet],
    sinks: Sequence[ResultSink],
    telemetry: Telemetry,
    *,
    always: Sequence[str] = (),
    sessions: Sessions | None = None,
    clock: ManualClock | None = None,
    judges: JudgeWorker | None = None,
    wait_for_judges: bool = True,
    processor_class: type[TraceProcessor] = TraceProcessor,
) -> EvaluationStage:
    """A stage over ``specs`` (a set, or a callable returning the set in force)."""
    current = specs if callable(specs) else (lambda: specs)
    plan = EvaluationPlan(current, bind_always(list(always)))
    handoff = JudgeHandoff(judges, wait=wait_for_judges, drain_timeout=5.0)
    processor = processor_class(plan, SinkFanout(sinks, telemetry), telemetry, handoff)
    session_stage = None
    if sessions is not None:
        session_clock = clock or ManualClock(100.0)
        session_stage = SessionStage(sessions, session_clock, telemetry, processor.process_session)
    return EvaluationStage(processor, session_stage)
