"""Session evaluation: the cases an independent review found wrong, kept as tests.

Which turn is "first", what a session's agents are, and what ``evald.session.*``
says are known on the merge only: the order turns complete in must not change
results. Shutdown past the grace counts the sessions it drops; due sessions never
wait behind a backlog; a session's failure is not a failing trace in reports;
replay with workers counts spans as one process does.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.daemon_harness import poll
from support.paths import ROOT
from support.session_kit import (
    SESSION_DATA,
    RecordingSink,
    _consume,
    _start,
    make_pipeline,
    make_processor,
    metric,
    trace,
)

from collector.assembly.sessions import SessionCompletion
from collector.cli.command import main
from collector.core.records import Trace
from collector.offline.reports.sink import SummarySink
from collector.offline.reports.summary import RunSummary
from collector.processing.processor import TraceProcessor
from collector.telemetry.registry import Telemetry
from evaluators.runner import Outcome
from evaluators.session_merge import session_turns
from evaluators.spec import SpecSet, build_spec

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = pytest.mark.timeout(60)

MULTI_TURN = ROOT / "tests" / "golden" / "traces" / "pydantic-ai" / "multi_turn.jsonl"
SESSION_EXAMPLE = ROOT / "config" / "specs" / "sessions" / "music-store-conversation.yaml"


def with_root(turn: Trace, **attributes: Any) -> Trace:
    root = turn.spans[0]
    changed = root._replace(attributes={**root.attributes, **attributes})
    return turn._replace(spans=(changed, *turn.spans[1:]))


def with_input(turn: Trace, text: str) -> Trace:
    message = [{"role": "user", "parts": [{"type": "text", "content": text}]}]
    return with_root(turn, **{"gen_ai.input.messages": json.dumps(message)})


def sessions_of(telemetry: Telemetry, spec_data: dict[str, Any], *turns: Trace) -> RecordingSink:
    recording = RecordingSink()
    processor, _ = make_processor(telemetry, [recording], SpecSet([build_spec(spec_data)]))
    for turn in turns:
        processor.process(turn)
    processor.flush_sessions(SessionCompletion.END_OF_INPUT)
    return recording


def test_a_later_turn_asking_is_not_the_first_question(telemetry: Telemetry) -> None:
    spec = {**SESSION_DATA, "match": {"input_regex": "refund"}}
    first = with_input(trace(1, "lookup"), "hi there")
    later = with_input(trace(2, "refund"), "I want a refund")
    assert sessions_of(telemetry, spec, first, later).sessions() == []  # it began with "hi"


def test_a_first_turn_completing_last_still_leads(telemetry: Telemetry) -> None:
    spec = {**SESSION_DATA, "match": {"input_regex": "album"}}
    first = with_input(trace(1, "lookup"), "what album is it on")
    later = with_input(trace(2, "refund"), "refund it")
    ((_, merged, _),) = sessions_of(telemetry, spec, later, first).sessions()
    assert (merged.input, [step.name for step in merged.tool_calls]) == (
        "what album is it on",
        ["lookup", "refund"],
    )


def test_the_turn_count_attribute_can_be_matched(telemetry: Telemetry) -> None:
    spec = {**SESSION_DATA, "match": {"attributes": {"evald.session.turns": 2}}}
    recording = sessions_of(telemetry, spec, trace(1, "lookup"), trace(2, "refund"))
    assert len(recording.sessions()) == 1


def test_an_agent_of_a_later_turn_matches(telemetry: Telemetry) -> None:
    spec = {**SESSION_DATA, "match": {"agent": "refund_agent"}}
    first = with_root(trace(1, "lookup"), **{"gen_ai.agent.name": "router"})
    later = with_root(trace(2, "refund"), **{"gen_ai.agent.name": "refund_agent"})
    ((_, merged, _),) = sessions_of(telemetry, spec, first, later).sessions()
    assert session_turns(merged) == 2
    assert "refund_agent" in merged.agents


def test_a_session_failure_is_not_a_failing_trace_in_reports(telemetry: Telemetry) -> None:
    summary = RunSummary()
    no_steps = build_spec(
        {"id": "per-turn", "evaluators": [{"name": "max_steps", "criteria": {"limit": 0}}]}
    )
    failing_session = build_spec({**SESSION_DATA, "reference": {"trajectory": [{"tool": "x"}]}})
    processor, _ = make_processor(
        telemetry, [SummarySink(summary)], SpecSet([no_steps, failing_session])
    )
    processor.process(trace(1))  # no step: passes
    processor.process(trace(2, "refund"))  # one step: fails max_steps
    processor.flush_sessions(SessionCompletion.END_OF_INPUT)
    assert summary.failures.total == 1
    session_metric = summary.metrics[("conversation", "trajectory_exact_match")]
    assert session_metric.count == 1  # counted per spec all the same


def test_a_trace_without_a_session_completes_due_sessions(telemetry: Telemetry) -> None:
    recording = RecordingSink()
    processor, clock = make_processor(telemetry, [recording])
    processor.process(trace(1, "lookup", session="old"))
    clock.advance(61)
    processor.process(trace(2, "lookup", session=None))  # a busy daemon's other traffic
    assert [call[1].session_id for call in recording.sessions()] == ["old"]


class _SlowOnTrace3(TraceProcessor):
    release = threading.Event()
    started = threading.Event()

    def process(self, trace: Trace) -> list[Outcome] | None:
        if trace.trace_id == (3).to_bytes(16, "big"):
            self.started.set()
            self.release.wait(10)  # an evaluation slower than the shutdown grace
        return super().process(trace)


def test_sessions_dropped_by_a_shutdown_past_its_grace_are_counted(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = RecordingSink()
    pipeline, clock = make_pipeline(telemetry, sink, _SlowOnTrace3)
    loop_thread.run(_start(pipeline))
    try:
        loop_thread.run(_consume(pipeline, trace(1, "lookup")))
        clock.advance(1.5)
        assert poll(lambda: metric(telemetry, "evald_sessions_in_flight") == 1)
        loop_thread.run(_consume(pipeline, trace(3, "lookup", session=None)))
        clock.advance(1.5)
        assert poll(_SlowOnTrace3.started.is_set)
        assert loop_thread.run(pipeline.shutdown(0.3)) is False  # the grace ran out
    finally:
        _SlowOnTrace3.release.set()
    dropped = "evald_sessions_dropped_total"
    assert poll(lambda: metric(telemetry, dropped, reason="shutdown_timeout") == 1)
    assert sink.sessions() == []


def replay_totals(tmp_path: Path, source: Path, workers: int) -> dict[str, Any]:
    report = tmp_path / f"report-{workers}.json"
    main(["--log-level", "ERROR", "replay", str(source), "--spec", str(SESSION_EXAMPLE),
          "--workers", str(workers), "--report", "json", "--report-out", str(report)])  # fmt: skip
    totals: dict[str, Any] = json.loads(report.read_text())["totals"]
    return totals


def test_workers_count_duplicate_spans_as_one_process_does(tmp_path: Path) -> None:
    lines = MULTI_TURN.read_text().splitlines()
    source = tmp_path / "duplicates.jsonl"
    source.write_text("\n".join([*lines, lines[0]]) + "\n")  # OTLP is at-least-once
    assert replay_totals(tmp_path, source, 1) == replay_totals(tmp_path, source, 2)
