"""GenAI events as log records, emitted through the OpenTelemetry SDK's Logs API in the
context of real spans, as instrumentations emit them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from opentelemetry import trace
from opentelemetry._logs import Logger
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan

DETAILS = "gen_ai.client.inference.operation.details"
SERVICE = "music-store-bot"


def in_span(span: ReadableSpan) -> Context:
    """A context whose current span is ``span`` (ended or not): records emitted in it
    carry its trace and span id."""
    context = span.get_span_context()
    assert context is not None
    return trace.set_span_in_context(trace.NonRecordingSpan(context))


def record_logs(
    emit: Callable[[Logger], None], provider: LoggerProvider | None = None
) -> list[ReadableLogRecord]:
    """The records ``emit`` emits on a logger of ``provider``, as an exporter gets them."""
    provider = provider or LoggerProvider(resource=Resource.create({"service.name": SERVICE}))
    exporter = InMemoryLogRecordExporter()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    emit(provider.get_logger("tests"))
    provider.shutdown()
    return list(exporter.get_finished_logs())


def make_log_records(spans: Sequence[ReadableSpan]) -> list[ReadableLogRecord]:
    """One GenAI event in the context of each span, then an application log line
    without trace context (which evald cannot join to anything)."""

    def emit(logger: Logger) -> None:
        for span in spans:
            logger.emit(
                event_name=DETAILS,
                context=in_span(span),
                attributes={"gen_ai.operation.name": "chat", "span.name": span.name},
                body={"note": f"about {span.name}"},
            )
        logger.emit(body="cache warmed", context=trace.set_span_in_context(trace.INVALID_SPAN))

    return record_logs(emit)
