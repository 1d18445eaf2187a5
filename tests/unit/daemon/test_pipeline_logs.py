"""The daemon pipeline's logs entry point: records reach the trajectory through the
assembler, with the same back-pressure as spans."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest
from support.stages import make_stage

from collector.config.settings import Config
from collector.core.clock import ManualClock
from collector.core.records import LogRecord, Resource, Span
from collector.daemon.pipeline import Pipeline
from collector.receivers.handoff import ConsumeResult, Overloaded
from collector.sinks.base import ResultSink
from collector.telemetry.registry import Telemetry
from evaluators.runner import Outcome
from evaluators.spec import SpecSet
from evaluators.trajectory import Trajectory

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = pytest.mark.timeout(30)

RESOURCE = Resource("svc", {"service.name": "svc"})
DETAILS = "gen_ai.client.inference.operation.details"


def chat_span(n: int) -> Span:
    """A root chat span without content, as the openai-v2 instrumentation records it."""
    return Span(n.to_bytes(16, "big"), b"\x01" * 8, b"", "chat m", 3, 0, 10, 0, "",
                {"gen_ai.operation.name": "chat"}, (), RESOURCE, "")  # fmt: skip


def details(n: int, question: str, answer: str) -> LogRecord:
    attributes = {
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": question}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
        ),
    }
    return LogRecord(n.to_bytes(16, "big"), b"\x01" * 8, DETAILS, 5, attributes, None, RESOURCE, "")


class Sink(ResultSink):
    """Keeps the trajectories written; blocks while ``gate`` is clear."""

    name = "keep"

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.written: list[Trajectory] = []

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self.entered.set()
        self.gate.wait(10)
        self.written.append(trajectory)

    def close(self) -> None:
        """Nothing to release."""


def make_pipeline(telemetry: Telemetry, sink: Sink) -> tuple[Pipeline, ManualClock]:
    config = Config.model_validate({"pipeline": {"queue_size": 1}, "assembly": {"idle_timeout": 1}})
    clock = ManualClock()
    stage = make_stage(SpecSet, [sink], telemetry, sessions=config.sessions, clock=clock)
    return Pipeline(config, clock, stage, telemetry), clock


async def _start(pipeline: Pipeline) -> None:
    pipeline.start()


async def _complete(pipeline: Pipeline, clock: ManualClock) -> None:
    clock.advance(1.5)
    pipeline.tick()


def test_records_reach_the_trajectory_of_their_trace(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = Sink()
    sink.gate.set()
    pipeline, clock = make_pipeline(telemetry, sink)
    loop_thread.run(_start(pipeline))
    try:
        assert pipeline.consume_logs([details(1, "refund me", "done")]) == ConsumeResult(1)
        assert pipeline.consume([chat_span(1)]) == ConsumeResult(1)
        loop_thread.run(_complete(pipeline, clock))
    finally:
        assert loop_thread.run(pipeline.shutdown(10.0)) is True
    (trajectory,) = sink.written
    assert (trajectory.input, trajectory.output) == ("refund me", "done")


def test_a_full_queue_refuses_records_as_it_refuses_spans(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = Sink()
    pipeline, clock = make_pipeline(telemetry, sink)
    loop_thread.run(_start(pipeline))
    try:
        pipeline.consume([chat_span(1)])
        loop_thread.run(_complete(pipeline, clock))
        assert sink.entered.wait(10)  # trace 1 is in the (blocked) evaluation thread
        pipeline.consume([chat_span(2)])
        loop_thread.run(_complete(pipeline, clock))  # trace 2 fills the queue
        with pytest.raises(Overloaded, match="queue is full"):
            pipeline.consume_logs([details(3, "q", "a")])
        assert telemetry.registry.get_sample_value("evald_log_records_in_flight") == 0
    finally:
        sink.gate.set()
        loop_thread.run(pipeline.shutdown(10.0))


def test_records_are_refused_before_start_and_after_shutdown(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = Sink()
    sink.gate.set()
    pipeline, _ = make_pipeline(telemetry, sink)
    with pytest.raises(Overloaded, match="shutting down"):
        pipeline.consume_logs([details(1, "q", "a")])
    loop_thread.run(_start(pipeline))
    loop_thread.run(pipeline.shutdown(1.0))
    with pytest.raises(Overloaded, match="shutting down"):
        pipeline.consume_logs([details(1, "q", "a")])
