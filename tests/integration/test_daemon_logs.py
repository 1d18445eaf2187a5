"""Acceptance (issue 13 §2): OTLP logs sent by the SDK's real exporters, over gRPC and
HTTP, end up in the trajectory of a trace whose spans carry no content; late, unjoined,
orphaned and trace-less records are counted. One daemon, loopback, injected clock."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from opentelemetry import trace
from opentelemetry._logs import Logger
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import LogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from support.daemon_harness import RunningDaemon, daemon_config, running_daemon
from support.otlp_logs import messages, tool_call_message

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

DETAILS = "gen_ai.client.inference.operation.details"
SERVICE = "logs-agent"
QUESTION = "Refund one 'Comfortably Numb' on invoice 1042"
ANSWER = "Done: refunded $0.99 on invoice 1042."
RESULT = {"invoice_id": 1042, "total": 1.98}


class Exporters:
    """The SDK's real span and log exporters of one transport, pointed at the daemon."""

    def __init__(self, transport: str, running: RunningDaemon) -> None:
        if transport == "grpc":
            endpoint = f"127.0.0.1:{running.daemon.grpc.port}"
            self.spans: SpanExporter = GrpcSpans(endpoint=endpoint, insecure=True)
            self.logs: LogRecordExporter = GrpcLogs(endpoint=endpoint, insecure=True)
        else:
            base = f"http://127.0.0.1:{running.daemon.http.port}"
            self.spans = HttpSpans(endpoint=f"{base}/v1/traces")
            self.logs = HttpLogs(endpoint=f"{base}/v1/logs")
        resource = Resource.create({"service.name": SERVICE})
        self.tracer_provider = TracerProvider(resource=resource)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.logger_provider = LoggerProvider(resource=resource)
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))
        self.logger: Logger = self.logger_provider.get_logger("opentelemetry.util.genai.handler")

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.logger_provider.shutdown()


@pytest.fixture
def running(loop_thread: LoopThread, tmp_path: Path) -> Iterator[RunningDaemon]:
    config = daemon_config(
        assembly={"idle_timeout": "5s", "max_trace_age": "60s"},
        specs=[],
        outputs={"trajectories_file": str(tmp_path / "trajectories.jsonl")},
    )
    with running_daemon(config, loop_thread) as started:
        yield started


def send_run(exporters: Exporters) -> SpanContext:
    """A model client instrumented at the client with content as log records
    (opentelemetry-instrumentation-openai-v2 ``EVENT_ONLY`` shape), plus a tool span that
    records its result only as an event. Each record is exported before its span ends:
    records reach the daemon first. Returns the root span's context."""
    tracer, logger = exporters.tracer_provider.get_tracer("app"), exporters.logger
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    with tracer.start_as_current_span("support_turn") as root:
        with tracer.start_as_current_span("chat m", attributes=chat):
            logger.emit(
                event_name=DETAILS,
                attributes={
                    "gen_ai.input.messages": messages("user", QUESTION),
                    "gen_ai.output.messages": tool_call_message(
                        "call-1", "lookup_invoice", {"invoice_id": 1042}
                    ),
                },
            )
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup_invoice",
            "gen_ai.tool.call.id": "call-1",
        }
        with tracer.start_as_current_span("execute_tool lookup_invoice", attributes=tool):
            logger.emit(event_name="gen_ai.choice", body={"message": json.dumps(RESULT)})
        with tracer.start_as_current_span("chat m", attributes=chat):
            logger.emit(
                event_name=DETAILS,
                attributes={
                    "gen_ai.input.messages": messages("user", QUESTION),
                    "gen_ai.output.messages": messages("assistant", ANSWER),
                },
            )
        root_context = root.get_span_context()
        # A record naming a span that was never exported: joined to the root instead.
        logger.emit(event_name="app.note", context=in_span(root_context, span_id=0xDEAD))
        no_trace = trace.set_span_in_context(trace.INVALID_SPAN)
        logger.emit(body="cache warmed", context=no_trace)  # an application log line
    return root_context


def in_span(context: SpanContext, *, span_id: int | None = None) -> Context:
    """The context of span ``span_id`` of ``context``'s trace (default: that span)."""
    named = SpanContext(
        context.trace_id, span_id or context.span_id, False, TraceFlags(TraceFlags.SAMPLED)
    )
    return trace.set_span_in_context(NonRecordingSpan(named))


def trajectories(running: RunningDaemon, tmp_path: Path) -> list[dict[str, Any]]:
    running.loop.run(running.daemon.shutdown())  # flushes the file
    lines = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_log_records_from_real_exporters_fill_a_contentless_trajectory(
    running: RunningDaemon, tmp_path: Path, transport: str
) -> None:
    exporters = Exporters(transport, running)
    try:
        root = send_run(exporters)
        assert running.metric("evald_log_records_received_total", transport=transport) == 4
        assert running.metric("evald_spans_received_total", transport=transport) == 4
        labels = {"transport": transport, "reason": "no_trace_id"}
        assert running.metric("evald_log_records_dropped_total", **labels) == 1

        running.complete_traces()

        # Late: the trace was evaluated; orphaned: a trace of records only, no spans.
        exporters.logger.emit(event_name="gen_ai.choice", context=in_span(root))
        orphan = SpanContext(0x5EED, 7, False, TraceFlags(TraceFlags.SAMPLED))
        exporters.logger.emit(event_name="gen_ai.choice", context=in_span(orphan))
    finally:
        exporters.shutdown()
    running.clock.advance(61.0)
    running.complete_traces()

    assert running.metric("evald_log_records_late_total") == 1
    assert running.metric("evald_log_records_orphaned_total") == 1
    assert running.metric("evald_log_records_unjoined_total") == 1
    (found,) = trajectories(running, tmp_path)
    assert found["trace_id"] == format(root.trace_id, "032x")
    assert (found["input"], found["output"]) == (QUESTION, ANSWER)
    tools = [step for step in found["steps"] if step["kind"] == "tool"]
    assert [(step["name"], step["call_id"], step["result"]) for step in tools] == [
        ("lookup_invoice", "call-1", RESULT)
    ]
    assert tools[0]["args"] == {"invoice_id": 1042}  # from the model's request
