"""Judges never slow ingestion (acceptance 2, the structural property): judge work is
handed to a bounded queue served by its own thread; when it is full the work is shed
and counted, ``process()`` returns without waiting, and accepted verdicts reach the
sinks later through ``write_outcomes``. Every judge reply here is held by the fake
server until the test releases it, so a processor that waited would hang the test."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.daemon_harness import daemon_config, golden_files, running_daemon
from support.fake_openai import FakeChatServer, Reply
from support.judge_kit import worker
from support.stages import make_stage

from collector.core.records import CompletionReason, Resource, Span, Trace
from collector.processing.judge_metrics import PrometheusJudgeMetrics
from collector.sinks.base import ResultSink
from collector.telemetry.registry import Telemetry
from evaluators.results import NumericResult
from evaluators.runner import Outcome
from evaluators.spec import SpecSet, build_spec
from evaluators.trajectory import Trajectory

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
RESOURCE = Resource("svc", {"service.name": "svc"})
HELD = Reply(hold=True, content=json.dumps({"reasoning": "follows", "score": 1}))
JUDGED_SPEC = {"id": "judged", "evaluators": ["response_follows_trajectory"]}


class RecordingSink(ResultSink):
    """Counts first writes; keeps later outcomes and signals when ``expected`` arrived."""

    name = "recording"

    def __init__(self, expected: int) -> None:
        self.writes: list[tuple[str, int]] = []
        self.later: list[Outcome] = []
        self.expected = expected
        self.all_later = threading.Event()

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self.writes.append((trajectory.trace_id, len(outcomes)))

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self.later.extend(outcomes)
        if len(self.later) >= self.expected:
            self.all_later.set()

    def close(self) -> None:
        """Nothing to flush."""


def trace(n: int) -> Trace:
    trace_id = n.to_bytes(16, "big")
    root = Span(
        trace_id, b"\x01" * 8, b"", "invoke_agent a", 1, 0, 10, 0, "", AGENT, (), RESOURCE, ""
    )
    return Trace(trace_id, (root,), CompletionReason.IDLE, 0.0, 0.0)


@pytest.fixture
def server(loop_thread: LoopThread, start: Callable[[Any], Any]) -> FakeChatServer:
    server: FakeChatServer = start(FakeChatServer(loop_thread))
    server.default = HELD
    return server


def test_full_judge_queue_sheds_and_counts_and_process_never_waits(
    server: FakeChatServer, telemetry: Telemetry, metric: Callable[..., float]
) -> None:
    metrics = PrometheusJudgeMetrics(telemetry.registry)
    judges = worker(server, metrics=metrics, queue_size=2, max_concurrency=4)
    sink = RecordingSink(expected=2)
    specs = SpecSet([build_spec(JUDGED_SPEC)])
    processor = make_stage(
        specs, [sink], telemetry, always=["failure"], judges=judges, wait_for_judges=False
    )
    try:
        returned = [processor.process(trace(n)) for n in range(10)]
        server.wait_arrivals(2)  # both accepted calls are at the judge, held there

        # process() returned for every trace with its deterministic outcome only ...
        assert [[o.evaluator for o in outcomes or []] for outcomes in returned] == [
            ["failure"]
        ] * 10
        assert [count for _, count in sink.writes] == [1] * 10
        # ... the judge queue took 2, the other 8 were shed and counted, nothing delivered yet.
        assert metric("evald_judge_shed_total", judge="default", reason="queue_full") == 8
        assert metric("evald_judge_queue_depth") == 2
        assert judges.pending == 2 and sink.later == []

        server.release()
        assert sink.all_later.wait(10)
    finally:
        processor.close(5.0)
    assert [o.evaluator for o in sink.later] == ["response_follows_trajectory"] * 2
    assert all(isinstance(o.result, NumericResult) and o.result.score == 1 for o in sink.later)
    assert metric("evald_judge_queue_depth") == 0
    assert metric("evald_judge_calls_total", judge="default", outcome="ok") == 2


def test_shutdown_cancels_judge_work_that_outlives_the_drain_timeout(
    server: FakeChatServer, telemetry: Telemetry, metric: Callable[..., float]
) -> None:
    judges = worker(server, metrics=PrometheusJudgeMetrics(telemetry.registry), queue_size=5)
    specs = SpecSet([build_spec(JUDGED_SPEC)])
    sink = RecordingSink(expected=1)
    processor = make_stage(specs, [sink], telemetry, judges=judges, wait_for_judges=False)
    for n in range(3):
        processor.process(trace(n))
    server.wait_arrivals(3)
    processor.close(0.05)  # replies are held: nothing finishes in time
    assert metric("evald_judge_shed_total", judge="default", reason="shutdown") == 3
    assert sink.later == []
    late = Trajectory("ab" * 16, "svc", None, None, None, None, False, 0.0, 0, ())
    bound = next(iter(specs)).bound[0]
    assert judges.submit(late, bound, lambda *_: None) is False  # closed: shed at once
    assert metric("evald_judge_shed_total", judge="default", reason="shutdown") == 4


def test_the_daemon_evaluates_on_while_the_judge_hangs(
    server: FakeChatServer, loop_thread: LoopThread, tmp_path: Path
) -> None:
    """End to end: OTLP/HTTP → pipeline → processor; the evaluation queue drains while
    every judge reply is held; shed work is counted; the accepted verdict lands later."""
    spec = tmp_path / "judged.yaml"
    spec.write_text(
        "id: judged\n"
        "match: {service: {regex: '^music-store-support'}}\n"
        "evaluators: [{name: response_follows_trajectory, judge: slow}]\n"
    )
    results = tmp_path / "results.jsonl"
    config = daemon_config(
        specs=[str(spec)],
        outputs={"results_file": str(results)},
        judges={
            "queue_size": 1,
            "drain_timeout": "10s",
            "endpoints": {"slow": {"base_url": server.url, "model": "m", "max_concurrency": 1}},
        },
    )
    files = golden_files("pydantic-ai/*.jsonl")
    with running_daemon(config, loop_thread) as running:
        for path in files:
            running.post_file(path)
        running.complete_traces()  # returns: the evaluation thread never waits for the judge
        evaluated = running.metric(
            "evald_evaluations_total", spec="none", evaluator="failure",
            service="music-store-support-pydantic-ai", agent="music_store_support",
            outcome="pass",
        ) + running.metric(
            "evald_evaluations_total", spec="none", evaluator="failure",
            service="music-store-support-pydantic-ai", agent="music_store_support",
            outcome="fail",
        )  # fmt: skip
        assert evaluated >= len(files)
        server.wait_arrivals(1)
        assert running.metric("evald_judge_shed_total", judge="slow", reason="queue_full") == (
            evaluated - 1
        )
        server.release()
    judged = [
        line for line in map(json.loads, results.read_text().splitlines())
        if line["evaluator"] == "response_follows_trajectory"
    ]  # fmt: skip
    assert len(judged) == 1 and judged[0]["score"] == 1.0 and judged[0]["spec"] == "judged"
