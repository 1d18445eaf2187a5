"""evald end to end in one process: real OTel SDK exporters → receivers → assembly →
trajectories → evaluators → /metrics, over loopback, on an injected clock."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from support.daemon_harness import RunningDaemon, daemon_config, running_daemon
from support.paths import ROOT
from support.retention import holders_after
from support.sdk_spans import make_spans

from collector.daemon.serve import Daemon

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

GOLDEN = ROOT / "tests" / "golden" / "traces"
SPEC = """
id: sdk-refund
match: {service: sdk-agent}
reference:
  trajectory: [{tool: lookup_invoice}, {tool: refund}]
evaluators: [trajectory_exact_match, trajectory_recall]
thresholds: {trajectory_exact_match: 1.0}
"""


def scrape(running: RunningDaemon) -> str:
    url = f"http://127.0.0.1:{running.daemon.admin.port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


@pytest.fixture
def running(loop_thread: LoopThread, tmp_path: Path) -> Iterator[RunningDaemon]:
    (tmp_path / "spec.yaml").write_text(SPEC)
    config = daemon_config(
        assembly={"idle_timeout": "5s"},
        specs=[str(tmp_path / "spec.yaml")],
        outputs={"results_file": str(tmp_path / "results.jsonl")},
    )
    with running_daemon(config, loop_thread) as started:
        yield started


def send_agent_run(
    exporter: SpanExporter, service: str = "sdk-agent", fail_refund: bool = False
) -> str:
    """One GenAI-convention agent run (invoke_agent → chat → 2 tools), exported for real."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test-agent")
    with tracer.start_as_current_span(
        "invoke_agent support",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    ) as root:
        with tracer.start_as_current_span(
            "chat model", attributes={"gen_ai.operation.name": "chat"}
        ):
            pass
        for tool, args in (("lookup_invoice", {"invoice_id": 1042}), ("refund", {"track_id": 3})):
            with tracer.start_as_current_span(
                f"execute_tool {tool}",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.arguments": json.dumps(args),
                },
            ) as span:
                if fail_refund and tool == "refund":
                    span.set_status(trace.StatusCode.ERROR, "refund window expired")
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id


def test_real_exporters_grpc_and_http_reach_metrics(running: RunningDaemon) -> None:
    grpc_port, http_port = running.daemon.grpc.port, running.daemon.http.port
    send_agent_run(GrpcExporter(endpoint=f"127.0.0.1:{grpc_port}", insecure=True))
    send_agent_run(
        HttpExporter(endpoint=f"http://127.0.0.1:{http_port}/v1/traces"), fail_refund=True
    )
    assert running.metric("evald_spans_received_total", transport="grpc") == 4
    assert running.metric("evald_spans_received_total", transport="http") == 4

    running.complete_traces()

    text = scrape(running)
    assert 'evald_traces_evaluated_total{agent="support",service="sdk-agent"} 2.0' in text
    assert running.metric("evald_tool_calls_total", service="sdk-agent", tool="refund") == 2
    assert running.metric("evald_tool_errors_total", service="sdk-agent", tool="refund") == 1
    labels = {"spec": "sdk-refund", "evaluator": "trajectory_exact_match"}
    labels |= {"service": "sdk-agent", "agent": "support"}
    assert running.metric("evald_evaluations_total", **labels, outcome="pass") == 2
    assert running.metric("evald_evaluation_score_count", **labels) == 2


def test_no_request_outlives_its_answer_and_evaluation(running: RunningDaemon) -> None:
    """Receivers, assembly, normalization, evaluators and sinks keep no copy of an
    export request once it is answered and its trace evaluated, even with the cyclic
    collector off: a cycle holding requests grows a process by a request per call
    between collections (ADR 0027)."""
    payload: bytes = encode_spans(make_spans()).SerializeToString()
    daemon = running.daemon
    url = f"http://127.0.0.1:{daemon.http.port}/v1/traces"
    headers = {"Content-Type": "application/x-protobuf"}

    def export_and_evaluate() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{daemon.grpc.port}") as channel:
            channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")(
                payload, timeout=10
            )
        request = urllib.request.Request(url, data=payload, headers=headers)
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
        running.complete_traces()

    assert holders_after(payload, export_and_evaluate, calls=1) == []
    assert running.metric("evald_traces_completed_total", reason="idle") == 1


def test_raw_otlp_json_post_of_a_real_framework_trace(running: RunningDaemon) -> None:
    body = (GOLDEN / "vercel-ai-sdk" / "correct.jsonl").read_bytes().splitlines()[0]
    request = urllib.request.Request(
        f"http://127.0.0.1:{running.daemon.http.port}/v1/traces",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200
        assert json.loads(response.read()) == {}

    running.complete_traces()

    assert running.metric("evald_traces_completed_total", reason="idle") == 1
    tool_calls = scrape(running).count("evald_tool_calls_total{")
    assert tool_calls >= 3  # lookup_invoice, lookup_track, refund


def test_nothing_completes_before_idle_timeout(running: RunningDaemon) -> None:
    send_agent_run(GrpcExporter(endpoint=f"127.0.0.1:{running.daemon.grpc.port}", insecure=True))
    running.clock.advance(1.0)
    running.loop.run(_tick(running.daemon))
    assert running.metric("evald_traces_in_flight") == 1
    assert running.metric("evald_traces_evaluated_total", service="sdk-agent", agent="support") == 0


async def _tick(daemon: Daemon) -> None:
    daemon.pipeline.tick()


def test_results_file_has_always_on_and_spec_results(
    running: RunningDaemon, tmp_path: Path
) -> None:
    trace_id = send_agent_run(
        GrpcExporter(endpoint=f"127.0.0.1:{running.daemon.grpc.port}", insecure=True)
    )
    running.complete_traces()
    running.loop.run(running.daemon.shutdown())
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    by_evaluator = {(line["spec"], line["evaluator"]): line for line in lines}
    assert {line["trace_id"] for line in lines} == {trace_id}
    assert by_evaluator[(None, "failure")]["score"] == 0.0
    assert by_evaluator[(None, "latency")]["score"] >= 0.0
    assert by_evaluator[("sdk-refund", "trajectory_exact_match")]["passed"] is True
    assert by_evaluator[("sdk-refund", "trajectory_recall")]["score"] == 1.0


def test_readyz_is_200_while_running(running: RunningDaemon) -> None:
    url = f"http://127.0.0.1:{running.daemon.admin.port}/readyz"
    with urllib.request.urlopen(url, timeout=5) as response:
        assert response.status == 200
