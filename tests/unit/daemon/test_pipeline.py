"""The daemon pipeline: back-pressure when evaluation falls behind, drain on shutdown."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.stages import make_stage

from collector.config.settings import Config
from collector.core.clock import ManualClock
from collector.core.records import Resource, Span, Trace
from collector.daemon.pipeline import Pipeline
from collector.processing.processor import Evaluated, TraceProcessor
from collector.receivers.handoff import Overloaded
from collector.sinks.base import ResultSink
from collector.sinks.jsonl import ResultsFileSink
from collector.telemetry.registry import Telemetry
from evaluators.runner import Outcome
from evaluators.spec import SpecSet
from evaluators.trajectory import Trajectory

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = pytest.mark.timeout(30)

AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
RESOURCE = Resource("svc", {"service.name": "svc"})


def root_span(n: int) -> Span:
    trace_id = n.to_bytes(16, "big")
    return Span(
        trace_id, b"\x01" * 8, b"", "invoke_agent a", 1, 0, 10, 0, "", AGENT, (), RESOURCE, ""
    )


class GateSink(ResultSink):
    """Blocks every write until ``gate`` is set: a slow evaluation stage."""

    name = "gate"

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.written: list[str] = []

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self.entered.set()
        self.gate.wait(10)
        self.written.append(trajectory.trace_id)

    def close(self) -> None:
        """Nothing to release."""


def make_pipeline(telemetry: Telemetry, sink: GateSink) -> tuple[Pipeline, ManualClock]:
    config = Config.model_validate({"pipeline": {"queue_size": 1}, "assembly": {"idle_timeout": 1}})
    clock = ManualClock()
    stage = make_stage(
        SpecSet, [sink], telemetry, always=["failure"], sessions=config.sessions, clock=clock
    )
    return Pipeline(config, clock, stage, telemetry), clock


async def _consume(pipeline: Pipeline, *numbers: int) -> None:
    for n in numbers:
        pipeline.consume([root_span(n)])


async def _complete(pipeline: Pipeline, clock: ManualClock) -> None:
    clock.advance(1.5)
    pipeline.tick()


def started_with_trace_in_evaluation(
    loop_thread: LoopThread, telemetry: Telemetry
) -> tuple[Pipeline, ManualClock, GateSink]:
    """A started pipeline whose evaluation thread holds trace 1 (blocked in the sink)."""
    sink = GateSink()
    pipeline, clock = make_pipeline(telemetry, sink)

    async def start() -> None:
        pipeline.start()

    loop_thread.run(start())
    loop_thread.run(_consume(pipeline, 1))
    loop_thread.run(_complete(pipeline, clock))
    assert sink.entered.wait(10)
    return pipeline, clock, sink


def test_full_queue_refuses_with_overloaded_then_drains_on_shutdown(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    pipeline, clock, sink = started_with_trace_in_evaluation(loop_thread, telemetry)
    loop_thread.run(_consume(pipeline, 2, 3))
    loop_thread.run(_complete(pipeline, clock))  # 2 fills the queue; 3 stays held
    assert telemetry.registry.get_sample_value("evald_traces_in_flight") == 1
    with pytest.raises(Overloaded, match="queue is full"):
        loop_thread.run(_consume(pipeline, 4))

    sink.gate.set()
    assert loop_thread.run(pipeline.shutdown(10.0)) is True
    assert sorted(sink.written) == [n.to_bytes(16, "big").hex() for n in (1, 2, 3)]
    assert (
        telemetry.registry.get_sample_value(
            "evald_traces_dropped_total", {"reason": "shutdown_timeout"}
        )
        == 0  # the series exists from start, at 0
    )


def test_queue_depth_is_what_is_queued_when_scraped(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    pipeline, _, sink = started_with_trace_in_evaluation(loop_thread, telemetry)
    depth = "evald_evaluation_queue_depth"
    assert telemetry.registry.get_sample_value(depth) == 0
    assert pipeline.submit(lambda: None)  # whatever enters the queue, by any path
    assert telemetry.registry.get_sample_value(depth) == 1
    sink.gate.set()
    assert loop_thread.run(pipeline.shutdown(10.0)) is True
    assert telemetry.registry.get_sample_value(depth) == 0


def test_refuses_after_shutdown_and_shutdown_is_idempotent(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = GateSink()
    sink.gate.set()
    pipeline, _ = make_pipeline(telemetry, sink)
    assert loop_thread.run(pipeline.shutdown(1.0)) is True  # before start

    async def start() -> None:
        pipeline.start()

    loop_thread.run(start())
    assert pipeline.ready
    assert loop_thread.run(pipeline.shutdown(1.0)) is True
    assert loop_thread.run(pipeline.shutdown(1.0)) is True
    assert not pipeline.ready
    with pytest.raises(Overloaded, match="shutting down"):
        pipeline.consume([root_span(9)])


def test_shutdown_past_its_deadline_drops_held_traces_without_waiting_per_trace(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    # Evaluation is stuck and the queue is full: every held trace beyond the first
    # must be dropped at once, not after a wait of its own (1 ms x 50 000 traces).
    sink = GateSink()
    pipeline, clock = make_pipeline(telemetry, sink)
    held = 2000

    async def start() -> None:
        pipeline.start()

    loop_thread.run(start())
    loop_thread.run(_consume(pipeline, 0))
    loop_thread.run(_complete(pipeline, clock))
    assert sink.entered.wait(10)  # the evaluation thread is stuck on trace 0
    loop_thread.run(_consume(pipeline, *range(1, held + 1)))
    started = time.monotonic()
    try:
        assert loop_thread.run(pipeline.shutdown(0.05)) is False
        took = time.monotonic() - started
    finally:
        sink.gate.set()
    assert took < 1.0
    dropped = telemetry.registry.get_sample_value(
        "evald_traces_dropped_total", {"reason": "shutdown_timeout"}
    )
    assert dropped == held


def test_a_restarted_pipeline_refuses_again_instead_of_dropping(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = GateSink()
    pipeline, clock = make_pipeline(telemetry, sink)

    async def start() -> None:
        pipeline.start()

    loop_thread.run(start())
    loop_thread.run(pipeline.shutdown(1.0))
    loop_thread.run(start())
    try:
        loop_thread.run(_consume(pipeline, 1))
        loop_thread.run(_complete(pipeline, clock))
        assert sink.entered.wait(10)  # trace 1 is in the (blocked) evaluation thread
        loop_thread.run(_consume(pipeline, 2, 3))
        loop_thread.run(_complete(pipeline, clock))  # 2 fills the queue; 3 must stay held
        assert telemetry.registry.get_sample_value("evald_traces_in_flight") == 1
        assert (
            telemetry.registry.get_sample_value(
                "evald_traces_dropped_total", {"reason": "shutdown_timeout"}
            )
            == 0  # the series exists from start, at 0
        )
    finally:
        sink.gate.set()
        loop_thread.run(pipeline.shutdown(10.0))
    assert sorted(sink.written) == [n.to_bytes(16, "big").hex() for n in (1, 2, 3)]


def test_a_dead_completion_timer_makes_the_pipeline_unready(
    loop_thread: LoopThread, telemetry: Telemetry
) -> None:
    sink = GateSink()
    sink.gate.set()
    pipeline, _ = make_pipeline(telemetry, sink)

    def broken_tick() -> None:
        raise RuntimeError("bug in the assembler")

    async def start() -> None:
        pipeline.start()

    loop_thread.run(start())
    assert pipeline.ready
    pipeline.tick = broken_tick  # type: ignore[method-assign]

    async def wake_and_wait() -> None:
        pipeline._wake.set()
        while pipeline.ready:
            await asyncio.sleep(0.001)

    loop_thread.run(wake_and_wait())
    assert not pipeline.ready
    loop_thread.run(pipeline.shutdown(1.0))


class _SlowProcessor(TraceProcessor):
    """Evaluation that takes until ``GATE`` opens (a slow evaluator at the deadline)."""

    gate = threading.Event()
    entered = threading.Event()

    def process(self, trace: Trace) -> Evaluated | None:
        self.entered.set()
        self.gate.wait(10)
        return super().process(trace)


def test_a_trace_evaluated_past_the_grace_is_counted_dropped_not_raised(
    loop_thread: LoopThread,
    telemetry: Telemetry,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Shutdown ran out of time while trace 0 was being evaluated; the sinks were
    # closed; the evaluation then ends and its results reach the closed results file.
    config = Config.model_validate({"assembly": {"idle_timeout": 1}})
    clock = ManualClock()
    results = ResultsFileSink(tmp_path / "results.jsonl")
    stage = make_stage(
        SpecSet, [results], telemetry, always=["failure"], processor_class=_SlowProcessor
    )
    pipeline = Pipeline(config, clock, stage, telemetry)
    _SlowProcessor.gate.clear()
    _SlowProcessor.entered.clear()

    async def start() -> None:
        pipeline.start()

    loop_thread.run(start())
    loop_thread.run(_consume(pipeline, 0))
    loop_thread.run(_complete(pipeline, clock))
    assert _SlowProcessor.entered.wait(10)
    assert loop_thread.run(pipeline.shutdown(0.05)) is False
    stage.close(0.0)
    _SlowProcessor.gate.set()

    def dropped() -> float:
        sample = {"reason": "shutdown_timeout"}
        return telemetry.registry.get_sample_value("evald_traces_dropped_total", sample) or 0.0

    deadline = time.monotonic() + 10
    while dropped() < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert dropped() == 1
    assert (
        telemetry.registry.get_sample_value("evald_sink_errors_total", {"sink": "results_file"})
        is None
    )
    assert not [record for record in caplog.records if record.exc_info]
