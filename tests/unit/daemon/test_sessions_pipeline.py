"""Session evaluation in the processor and the daemon pipeline: sinks, ticks, shutdown."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.daemon_harness import poll
from support.session_kit import (
    SESSION_DATA,
    TRACE_SPEC,
    RecordingSink,
    _consume,
    _start,
    make_pipeline,
    make_processor,
    metric,
    trace,
)

from collector.assembly.sessions import SessionCompletion
from collector.sinks.jsonl import ResultsFileSink, TrajectoriesFileSink
from collector.sinks.metrics import MetricsSink
from collector.telemetry.registry import Telemetry
from evaluators.session_merge import session_turns
from evaluators.spec import SpecSet, build_spec

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = pytest.mark.timeout(30)


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
    assert [step.name for step in merged.tool_calls] == ["lookup", "refund"]
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
