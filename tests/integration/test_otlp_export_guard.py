"""The OTLP output's safety rails: evald never re-ingests its own output, and a dead
backend never blocks the caller, with every item counted once (sent, failed or dropped)."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from support.daemon_harness import (
    GOLDEN,
    RunningDaemon,
    daemon_config,
    free_port,
    golden_files,
    poll,
    running_daemon,
)
from support.otlp_backend import OtlpBackend

from collector.config.settings import OtlpOutput
from collector.decode.common import KEEP_ALL
from collector.receivers.http import HttpReceiver
from collector.sinks.otlp import OtlpSink
from collector.telemetry.registry import Telemetry
from evaluators.results import BooleanResult, NumericResult
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory

if TYPE_CHECKING:
    from support.loop import LoopThread, RecordingConsumer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def test_evald_pointed_at_itself_drops_its_own_spans(loop_thread: LoopThread) -> None:
    port = free_port()
    config = daemon_config(
        receivers={"otlp": {"grpc": {"endpoint": f"127.0.0.1:{port}"},
                            "http": {"endpoint": "127.0.0.1:0"}}},
        outputs={"otlp": {"endpoint": f"http://127.0.0.1:{port}", "forward_spans": True,
                          "schedule_delay": "10ms"}},
    )  # fmt: skip
    with running_daemon(config, loop_thread) as running:
        running.post_file(GOLDEN / "pydantic-ai" / "tool_error.jsonl")
        running.complete_traces()

        def sent_and_dropped() -> tuple[float, float]:
            sent = running.metric("evald_otlp_export_items_total", signal="spans", outcome="sent")
            own = {"transport": "grpc", "reason": "own_output"}
            return sent, running.metric("evald_spans_dropped_total", **own)

        # 8 forwarded spans + 1 evaluation span came back and were dropped on arrival.
        assert poll(lambda: sent_and_dropped() == (9, 9)), sent_and_dropped()
        running.complete_traces()  # nothing new may complete
        assert running.metric("evald_traces_completed_total", reason="idle") == 1
        assert running.metric("evald_spans_late_total") == 0
        assert running.metric("evald_traces_in_flight") == 0
        assert running.metric("evald_spans_received_total", transport="grpc") == 0


def own_output_request(marker: str | None) -> bytes:
    resource = [{"key": "service.name", "value": {"stringValue": "evald"}}]
    if marker is not None:
        resource.append({"key": "evald.output", "value": {"stringValue": marker}})
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "evald evaluation",
            "kind": 1, "startTimeUnixNano": "1", "endTimeUnixNano": "2"}  # fmt: skip
    batch = {"resource": {"attributes": resource}, "scopeSpans": [{"spans": [span]}]}
    return json.dumps({"resourceSpans": [batch]}).encode()


@pytest.mark.parametrize(("marker", "kept"), [("evaluation", 0), ("forwarded", 0), (None, 1)])
def test_receiver_accepts_but_does_not_assemble_marked_spans(
    marker: str | None,
    kept: int,
    start: Callable[[HttpReceiver], HttpReceiver],
    consumer: RecordingConsumer,
    telemetry: Telemetry,
) -> None:
    config = daemon_config().receivers.otlp
    receiver = start(HttpReceiver(config, consumer, KEEP_ALL, telemetry))
    request = urllib.request.Request(
        f"http://127.0.0.1:{receiver.port}/v1/traces",
        data=own_output_request(marker),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200  # accepted: a sender must not retry it
        assert json.loads(response.read()) == {}
    assert len(consumer.spans) == kept
    value = telemetry.registry.get_sample_value
    dropped = value("evald_spans_dropped_total", {"transport": "http", "reason": "own_output"})
    assert (dropped or 0) == 1 - kept
    assert (value("evald_spans_received_total", {"transport": "http"}) or 0) == kept


def trajectory(n: int) -> Trajectory:
    return Trajectory(
        f"{n + 1:032x}", "svc", "agent", None, None, None, False, 1.0, 0, (),
        root_span_id=f"{n + 1:016x}",
    )  # fmt: skip


OUTCOMES = [
    Outcome("spec", "recall", NumericResult(score=0.5), False, 0.001),
    Outcome(None, "failure", BooleanResult(value=False), True, 0.001),
]


@pytest.fixture(params=["grpc", "http/protobuf"])
def hanging_backend(request: pytest.FixtureRequest) -> Iterator[OtlpBackend]:
    backend = OtlpBackend(request.param, hang=True)
    yield backend
    backend.close()


def test_a_hanging_backend_costs_drops_not_blocking(
    hanging_backend: OtlpBackend, telemetry: Telemetry, metric: Callable[..., float]
) -> None:
    config = OtlpOutput(endpoint=hanging_backend.endpoint, timeout=0.5, max_queue_size=4,
                        max_export_batch_size=2, schedule_delay=0.01, log_records=True,
                        protocol=hanging_backend.protocol)  # fmt: skip
    sink = OtlpSink(config, telemetry)
    writes = 200
    try:
        sink.write(trajectory(writes), OUTCOMES)
        # Both signals' first exports now hang in the backend; writing goes on regardless.
        assert hanging_backend.wait_for(lambda: hanging_backend.hanging >= 2)
        for n in range(writes):
            sink.write(trajectory(n), OUTCOMES)
        assert metric("evald_otlp_export_items_total", signal="spans", outcome="dropped") > 0
    finally:
        started = time.monotonic()
        sink.close()
        closing = time.monotonic() - started
    assert closing < config.timeout + 0.3  # both signals at once, within the timeout

    def counted(signal: str) -> float:
        return sum(
            metric("evald_otlp_export_items_total", signal=signal, outcome=outcome)
            for outcome in ("sent", "failed", "dropped")
        )

    for signal, per_write in (("spans", 1), ("logs", len(OUTCOMES))):
        assert counted(signal) == (writes + 1) * per_write  # each item counted exactly once
        assert metric("evald_otlp_export_items_total", signal=signal, outcome="sent") == 0
    # An HTTP request in flight outlives close(): when it gives up, the SDK goes on
    # through its queue, and nothing may be counted twice.
    time.sleep(config.timeout * 3)
    assert [counted("spans"), counted("logs")] == [writes + 1, (writes + 1) * len(OUTCOMES)]


def test_daemon_shutdown_with_a_hanging_backend_keeps_to_the_grace(
    hanging_backend: OtlpBackend, loop_thread: LoopThread
) -> None:
    # The whole shutdown, OTLP flush included, fits in shutdown.grace: a backend that
    # hangs costs counted drops, not a Kubernetes SIGKILL.
    grace = 2.0
    otlp = {"endpoint": hanging_backend.endpoint, "timeout": "10s", "log_records": True,
            "protocol": hanging_backend.protocol}  # fmt: skip
    config = daemon_config(outputs={"otlp": otlp}, shutdown={"grace": grace})
    running = RunningDaemon(config, loop_thread)
    for path in golden_files("pydantic-ai/*.jsonl")[:3]:
        running.post_file(path)
    running.complete_traces()
    assert hanging_backend.wait_for(lambda: hanging_backend.hanging >= 1)
    started = time.monotonic()
    running.stop()
    took = time.monotonic() - started
    assert took < grace + 0.5  # the flush, judges and the SDK's stop all fit in the grace
    dropped = running.metric(
        "evald_otlp_export_items_total", signal="spans", outcome="dropped"
    ) + running.metric("evald_otlp_export_items_total", signal="spans", outcome="failed")
    assert dropped > 0


def test_an_exporter_that_raises_is_counted_as_failed(
    telemetry: Telemetry, metric: Callable[..., float]
) -> None:
    from collector.sinks.otlp_export import Accounting, Budget, Counts

    budget = Budget(10)
    accounting = Accounting(budget, Counts(telemetry, "spans"), lambda: None)
    assert budget.take() and budget.take()

    def broken() -> bool:
        raise ConnectionError("channel closed under us")

    with pytest.raises(ConnectionError):
        accounting.export(2, broken)
    assert metric("evald_otlp_export_items_total", signal="spans", outcome="failed") == 2
    accounting.abandon_in_flight()  # nothing left in flight: not counted again
    assert metric("evald_otlp_export_items_total", signal="spans", outcome="dropped") == 0
