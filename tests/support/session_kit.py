"""Shared test helpers (moved from test_sessions_pipeline.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from collector.config.settings import Config, Sessions
from collector.core.clock import ManualClock
from collector.core.records import CompletionReason, Resource, Span, Trace
from collector.daemon.pipeline import Pipeline
from collector.processing.processor import TraceProcessor
from collector.processing.stage import EvaluationStage
from collector.sinks.base import ResultSink
from collector.telemetry.registry import Telemetry
from evaluators.runner import Outcome
from evaluators.session_merge import session_turns
from evaluators.spec import SpecSet, build_spec
from evaluators.trajectory import Trajectory
from support.stages import make_stage

RESOURCE = Resource("svc", {"service.name": "svc"})


SESSION_DATA: dict[str, Any] = {
    "id": "conversation",
    "scope": "session",
    "reference": {"trajectory": [{"tool": "lookup"}, {"tool": "refund"}]},
    "evaluators": ["trajectory_exact_match"],
}


SESSION_SPEC = build_spec(SESSION_DATA)


TRACE_SPEC = build_spec(
    {"id": "per-turn", "evaluators": [{"name": "max_steps", "criteria": {"limit": 5}}]}
)


def trace(n: int, *tools: str, session: str | None = "s-1") -> Trace:
    """Turn ``n``: a root agent span (with the conversation id), its model call and one
    span per tool."""
    trace_id, root_id = n.to_bytes(16, "big"), b"\x01" * 8
    start = n * 10**9
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
    }
    if session is not None:
        attributes["gen_ai.conversation.id"] = session
    spans = [Span(trace_id, root_id, b"", "invoke_agent", 1, start, start + 5000, 0, "",
                  attributes, (), RESOURCE, "")]  # fmt: skip
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    spans.append(Span(trace_id, b"\x09" * 8, root_id, "chat m", 3, start + 1, start + 2, 0, "",
                      chat, (), RESOURCE, ""))  # fmt: skip
    for i, tool in enumerate(tools):
        tool_attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
        spans.append(Span(trace_id, bytes([i + 2]) * 8, root_id, tool, 1, start + i + 3,
                          start + i + 4, 0, "", tool_attributes, (), RESOURCE, ""))  # fmt: skip
    return Trace(trace_id, tuple(spans), CompletionReason.IDLE, 0.0, 0.0)


class RecordingSink(ResultSink):
    """Remembers which path each write took."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple[str, Trajectory, list[str]]] = []

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self.calls.append(("write", trajectory, [o.evaluator for o in outcomes]))

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self.calls.append(("write_outcomes", trajectory, [o.evaluator for o in outcomes]))

    def close(self) -> None:
        """Nothing to release."""

    def sessions(self) -> list[tuple[str, Trajectory, list[str]]]:
        return [call for call in self.calls if session_turns(call[1]) is not None]


def make_processor(
    telemetry: Telemetry, sinks: list[Any], specs: SpecSet | None = None
) -> tuple[EvaluationStage, ManualClock]:
    """An evaluation stage with sessions (idle 60 s) on a manual clock at 100."""
    chosen = specs if specs is not None else SpecSet([TRACE_SPEC, SESSION_SPEC])
    clock = ManualClock(100.0)
    stage = make_stage(
        chosen,
        sinks,
        telemetry,
        always=["failure"],
        sessions=Sessions(idle_timeout=60),
        clock=clock,
    )
    return stage, clock


def metric(telemetry: Telemetry, name: str, **labels: str) -> float:
    return telemetry.registry.get_sample_value(name, labels) or 0.0


def make_pipeline(
    telemetry: Telemetry,
    sink: RecordingSink,
    processor_class: type[TraceProcessor] = TraceProcessor,
) -> tuple[Pipeline, ManualClock]:
    config = Config.model_validate(
        {"assembly": {"idle_timeout": 1}, "sessions": {"idle_timeout": 60}}
    )
    specs = SpecSet([TRACE_SPEC, SESSION_SPEC])
    clock = ManualClock(100.0)
    stage = make_stage(
        specs, [sink], telemetry, always=["failure"], sessions=config.sessions, clock=clock,
        processor_class=processor_class,
    )  # fmt: skip
    return Pipeline(config, clock, stage, telemetry), clock


async def _start(pipeline: Pipeline) -> None:
    pipeline.start()


async def _consume(pipeline: Pipeline, *traces: Trace) -> None:
    for item in traces:
        pipeline.consume(list(item.spans))
