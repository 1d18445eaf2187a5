"""Session evaluation in the processor and the daemon pipeline: sinks, ticks, shutdown."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from daemon_harness import poll

from collector.clock import ManualClock
from collector.config import Config, Sessions
from collector.model import CompletionReason, Resource, Span, Trace
from collector.pipeline import Pipeline
from collector.processor import TraceProcessor
from collector.sessions import SessionCompletion
from collector.sinks.jsonl import ResultsFileSink, TrajectoriesFileSink
from collector.sinks.metrics import MetricsSink
from collector.telemetry import Telemetry
from evaluators.runner import Outcome, bind_always
from evaluators.session import session_turns
from evaluators.spec import SpecSet, build_spec
from evaluators.trajectory import Trajectory

if TYPE_CHECKING:
    from conftest import LoopThread

pytestmark = pytest.mark.timeout(30)

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
    """Turn ``n``: a root agent span (with the conversation id) and one span per tool."""
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
    for i, tool in enumerate(tools):
        tool_attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
        spans.append(Span(trace_id, bytes([i + 2]) * 8, root_id, tool, 1, start + i + 1,
                          start + i + 2, 0, "", tool_attributes, (), RESOURCE, ""))  # fmt: skip
    return Trace(trace_id, tuple(spans), CompletionReason.IDLE, 0.0, 0.0)


class RecordingSink:
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
) -> tuple[TraceProcessor, ManualClock]:
    chosen = specs if specs is not None else SpecSet([TRACE_SPEC, SESSION_SPEC])
    processor = TraceProcessor(lambda: chosen, bind_always(["failure"]), sinks, telemetry)
    clock = ManualClock(100.0)
    processor.start_sessions(Sessions(idle_timeout=60), clock)
    return processor, clock


def metric(telemetry: Telemetry, name: str, **labels: str) -> float:
    return telemetry.registry.get_sample_value(name, labels) or 0.0


def test_a_session_is_evaluated_once_on_its_merged_turns(
    telemetry: Telemetry, tmp_path: Path
) -> None:
    recording = RecordingSink()
    results = tmp_path / "results.jsonl"
    trajectories = tmp_path / "trajectories.jsonl"
    sinks = [recording, MetricsSink(telemetry), ResultsFileSink(results),
             TrajectoriesFileSink(trajectories)]  # fmt: skip
    processor, clock = make_processor(telemetry, sinks)
    processor.process(trace(1, "lookup"))
    processor.process(trace(2, "refund"))
    assert recording.sessions() == []
    clock.advance(60)
    processor.tick_sessions()
    processor.close()

    ((path, merged, evaluators),) = recording.sessions()
    assert path == "write_outcomes"  # the turns' facts were written already
    assert evaluators == ["trajectory_exact_match"]  # session specs only: no `always`
    assert merged.trace_id == f"{2:032x}" and merged.tool_names == ("lookup", "refund")
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    (session_line,) = [line for line in lines if line["scope"] == "session"]
    assert session_line["spec"] == "conversation" and session_line["passed"] is True
    assert session_line["session_id"] == "s-1" and session_line["turns"] == 2
    assert session_line["trace_ids"] == [f"{1:032x}", f"{2:032x}"]
    assert {line["scope"] for line in lines if line["spec"] != "conversation"} == {"trace"}
    assert len(trajectories.read_text().splitlines()) == 2  # one per trace, none per session


def test_session_results_count_as_evaluations_never_as_trajectory_facts(
    telemetry: Telemetry,
) -> None:
    processor, clock = make_processor(telemetry, [MetricsSink(telemetry)])
    processor.process(trace(1, "lookup"))
    processor.process(trace(2, "refund"))
    clock.advance(60)
    processor.tick_sessions()
    labels = {"service": "svc", "agent": "support"}
    assert metric(telemetry, "evald_traces_evaluated_total", **labels) == 2
    assert metric(telemetry, "evald_tool_calls_total", service="svc", tool="refund") == 1
    assert metric(telemetry, "evald_trace_steps_count", **labels) == 2
    conversation = {"spec": "conversation", "evaluator": "trajectory_exact_match", **labels}
    assert metric(telemetry, "evald_evaluations_total", outcome="pass", **conversation) == 1
    assert metric(telemetry, "evald_evaluation_score_count", **conversation) == 1
    failure = {"spec": "none", "evaluator": "failure", **labels}
    assert metric(telemetry, "evald_evaluations_total", outcome="pass", **failure) == 2
    assert metric(telemetry, "evald_sessions_completed_total", reason="idle") == 1


def test_without_session_specs_no_turn_is_held(telemetry: Telemetry) -> None:
    recording = RecordingSink()
    processor, _ = make_processor(telemetry, [recording], SpecSet([TRACE_SPEC]))
    processor.process(trace(1, "lookup"))
    assert processor.session_deadline is None
    assert metric(telemetry, "evald_sessions_in_flight") == 0
    processor.flush_sessions(SessionCompletion.END_OF_INPUT)
    assert recording.sessions() == []


def test_traces_without_session_id_and_unmatched_sessions_give_no_session_result(
    telemetry: Telemetry,
) -> None:
    recording = RecordingSink()
    picky = build_spec({**SESSION_DATA, "match": {"service": "elsewhere"}})
    processor, _ = make_processor(telemetry, [recording], SpecSet([picky]))
    processor.process(trace(1, "lookup", session=None))
    assert processor.session_deadline is None
    processor.process(trace(2, "lookup"))
    # No session spec can match a conversation that starts on another service: its
    # turns are not even held (a busy daemon's other conversations cost nothing).
    assert metric(telemetry, "evald_sessions_in_flight") == 0
    processor.flush_sessions(SessionCompletion.END_OF_INPUT)
    assert recording.sessions() == []
    assert metric(telemetry, "evald_sessions_completed_total", reason="end_of_input") == 0


def test_turns_are_held_whatever_order_they_arrive_in(telemetry: Telemetry) -> None:
    # The merge decides what its first turn is; the order traces complete in must not
    # (a later turn completing first, replay files in another order).
    recording = RecordingSink()
    opener = build_spec({**SESSION_DATA, "match": {"attributes": {"turn": "first"}}})
    processor, _ = make_processor(telemetry, [recording], SpecSet([opener]))
    first, second = trace(1, "lookup"), trace(2, "refund")
    root = first.spans[0]
    first = first._replace(
        spans=(root._replace(attributes={**root.attributes, "turn": "first"}), *first.spans[1:])
    )
    processor.process(second)  # arrives first, matches nothing on its own
    processor.process(first)
    processor.flush_sessions(SessionCompletion.END_OF_INPUT)
    ((_, merged, evaluators),) = recording.sessions()
    assert session_turns(merged) == 2
    assert [step.name for step in merged.steps] == ["lookup", "refund"]
    assert evaluators == ["trajectory_exact_match"]


def test_processing_a_trace_completes_due_sessions(telemetry: Telemetry) -> None:
    recording = RecordingSink()
    processor, clock = make_processor(telemetry, [recording])
    processor.process(trace(1, "lookup", session="old"))
    clock.advance(61)
    processor.process(trace(2, "lookup", session="new"))  # a busy daemon: no idle tick
    assert [call[1].session_id for call in recording.sessions()] == ["old"]


def test_a_shutdown_past_its_deadline_drops_open_sessions_and_counts_them(
    telemetry: Telemetry,
) -> None:
    recording = RecordingSink()
    processor, _ = make_processor(telemetry, [recording])
    processor.process(trace(1, "lookup"))
    processor.flush_sessions(SessionCompletion.SHUTDOWN, deadline=time.monotonic() - 1)
    assert recording.sessions() == []
    assert metric(telemetry, "evald_sessions_dropped_total", reason="shutdown_timeout") == 1
    processor.process(trace(2, "lookup"))
    processor.flush_sessions(SessionCompletion.SHUTDOWN, deadline=time.monotonic() + 60)
    assert len(recording.sessions()) == 1  # the deadline applied to that flush only


# --- the daemon pipeline --------------------------------------------------------------------


def make_pipeline(
    telemetry: Telemetry,
    sink: RecordingSink,
    processor_class: type[TraceProcessor] = TraceProcessor,
) -> tuple[Pipeline, ManualClock]:
    config = Config.model_validate(
        {"assembly": {"idle_timeout": 1}, "sessions": {"idle_timeout": 60}}
    )
    specs = SpecSet([TRACE_SPEC, SESSION_SPEC])
    processor = processor_class(lambda: specs, bind_always(["failure"]), [sink], telemetry)
    clock = ManualClock(100.0)
    return Pipeline(config, clock, processor, telemetry), clock


async def _start(pipeline: Pipeline) -> None:
    pipeline.start()


async def _consume(pipeline: Pipeline, *traces: Trace) -> None:
    for item in traces:
        pipeline.consume(list(item.spans))


def test_a_quiet_daemon_completes_sessions_on_its_timer(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = RecordingSink()
    pipeline, clock = make_pipeline(telemetry, sink)
    loop_thread.run(_start(pipeline))
    try:
        loop_thread.run(_consume(pipeline, trace(1, "lookup"), trace(2, "refund")))
        clock.advance(1.5)  # the timer releases both traces
        assert poll(lambda: len(sink.calls) == 2)
        assert metric(telemetry, "evald_sessions_in_flight") == 1
        clock.advance(60)  # nothing arrives any more: only the timer can notice
        assert poll(lambda: len(sink.sessions()) == 1)
        assert pipeline.queue_depth == 0
    finally:
        assert loop_thread.run(pipeline.shutdown(10.0)) is True
    ((_, merged, _),) = sink.sessions()
    assert merged.tool_names == ("lookup", "refund")


def test_shutdown_evaluates_open_sessions_with_the_held_traces(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = RecordingSink()
    pipeline, _ = make_pipeline(telemetry, sink)
    loop_thread.run(_start(pipeline))
    loop_thread.run(_consume(pipeline, trace(1, "lookup"), trace(2, "refund")))
    assert loop_thread.run(pipeline.shutdown(10.0)) is True  # traces still held, session open
    assert len([c for c in sink.calls if c[0] == "write"]) == 2
    ((_, merged, _),) = sink.sessions()
    assert session_turns(merged) == 2
    assert metric(telemetry, "evald_sessions_completed_total", reason="shutdown") == 1
    assert metric(telemetry, "evald_traces_dropped_total", reason="shutdown_timeout") == 0
