"""OTLP log records of a capture (for instrumentations that put content in log records / events).

Companion of ``common.py`` (same rules: importable from each framework's venv, no evald
imports). An SDK ``LoggerProvider`` exports in batches (flushed once per user turn, like the
spans) to a ``LogBatchRecorder``; ``write_logs`` writes, next to the span files:

* ``<scenario>.logs.jsonl``: OTLP/JSON, one ``ExportLogsServiceRequest`` per SDK export batch
  (``encode_logs`` → ``json_format.MessageToDict(use_integers_for_enums=True)`` → ids
  rewritten from base64 to hex, as the trace files);
* ``<scenario>.logs.pb``: one binary ``ExportLogsServiceRequest`` holding every record.

``tree_text_with_logs`` is ``common.tree_text`` with each span's log records listed under it
(``~ log <event_name> {attributes} body=...``, values cut at 400), then the records without a span.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import common
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    LogRecordExporter,
    LogRecordExportResult,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan


class LogBatchRecorder(LogRecordExporter):
    """An in-memory log exporter that keeps the SDK's export batches as they came."""

    def __init__(self) -> None:
        self.batches: list[list[ReadableLogRecord]] = []

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        self.batches.append(list(batch))
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        # abstract in opentelemetry-sdk 1.45's LogRecordExporter; nothing is buffered here
        return True

    @property
    def records(self) -> list[ReadableLogRecord]:
        return [record for batch in self.batches for record in batch]


def make_logger_provider(service_name: str) -> tuple[LoggerProvider, LogBatchRecorder]:
    """A logger provider exporting in batches (flushed per turn) to a ``LogBatchRecorder``.

    Same resource as ``common.make_provider``.
    """
    resource = Resource.create(
        {"service.name": service_name, "deployment.environment.name": "acceptance-test"}
    )
    provider = LoggerProvider(resource=resource)
    recorder = LogBatchRecorder()
    provider.add_log_record_processor(
        BatchLogRecordProcessor(
            recorder, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
        )
    )
    return provider, recorder


def otlp_logs_json(records: Sequence[ReadableLogRecord]) -> str:
    """One ExportLogsServiceRequest as OTLP/JSON (hex ids, integer enums, camelCase)."""
    request = encode_logs(records)
    as_dict = json_format.MessageToDict(request, use_integers_for_enums=True)
    common._hex_ids(as_dict)
    return json.dumps(as_dict, ensure_ascii=False, separators=(",", ":"))


def write_logs(folder: Path, name: str, batches: Sequence[Sequence[ReadableLogRecord]]) -> None:
    """Write ``<name>.logs.jsonl`` and ``<name>.logs.pb`` (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    batches = [list(batch) for batch in batches if batch]
    records = [record for batch in batches for record in batch]
    (folder / f"{name}.logs.jsonl").write_text(
        "".join(otlp_logs_json(batch) + "\n" for batch in batches), encoding="utf-8"
    )
    (folder / f"{name}.logs.pb").write_bytes(encode_logs(records).SerializeToString())
    print(
        f"{folder.name}/{name}: {len(records)} log records, {len(batches)} batches",
        file=sys.stderr,
    )


def _body_text(body: Any, limit: int) -> str:
    text = json.dumps(body, ensure_ascii=False, default=str) if body is not None else "None"
    return str(common._short(text, limit))


def tree_text_with_logs(spans: Sequence[ReadableSpan], records: Sequence[ReadableLogRecord]) -> str:
    """``common.tree_text`` plus each span's log records under it (values cut at 400)."""
    by_span: dict[int, list[ReadableLogRecord]] = {}
    orphans: list[ReadableLogRecord] = []
    span_ids = {span.context.span_id for span in spans}
    for record in records:
        span_id = record.log_record.span_id or 0
        if span_id in span_ids:
            by_span.setdefault(span_id, []).append(record)
        else:
            orphans.append(record)
    lines: list[str] = []
    tree = common.tree_text(spans).splitlines()
    # Re-walk the same order common.tree_text uses, to attach the records to their span.
    order = _span_order(spans)
    assert len(order) == len([line for line in tree if line.lstrip().startswith("- ")])
    index = 0
    for line in tree:
        lines.append(line)
        if line.lstrip().startswith("- "):
            span, depth = order[index]
            index += 1
            for record in by_span.get(span.context.span_id, []):
                lines.append(_log_line(record, "  " * depth + "    "))
    # Events of a span are printed right after the span line by common.tree_text; the
    # records are placed after them, before the children (fixed up below).
    lines = _move_logs_after_events(lines)
    for record in orphans:
        lines.append(_log_line(record, "(no span) "))
    return "\n".join(lines) + "\n"


def _value_text(value: Any, limit: int) -> Any:
    """Scalars as they are; structured values (AnyValue lists / maps) as JSON; cut at limit."""
    if isinstance(value, (str, bool, int, float)):
        return common._short(value, limit)
    return common._short(json.dumps(value, ensure_ascii=False, default=str), limit)


def _log_line(record: ReadableLogRecord, pad: str) -> str:
    log = record.log_record
    attrs = {k: _value_text(v, 400) for k, v in (log.attributes or {}).items()}
    return f"{pad}~ log {log.event_name} {attrs} body={_body_text(log.body, 400)}"


def _span_order(spans: Sequence[ReadableSpan]) -> list[tuple[ReadableSpan, int]]:
    by_id = {span.context.span_id: span for span in spans}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in by_id else None, []).append(span)
    for kids in children.values():
        kids.sort(key=lambda s: s.start_time or 0)
    out: list[tuple[ReadableSpan, int]] = []

    def visit(span: ReadableSpan, depth: int) -> None:
        out.append((span, depth))
        for kid in children.get(span.context.span_id, []):
            visit(kid, depth + 1)

    for root in children.get(None, []):
        visit(root, 0)
    return out


def _move_logs_after_events(lines: list[str]) -> list[str]:
    """Keep each span's ``* event`` lines directly under it, then its ``~ log`` lines."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if line.lstrip().startswith("- "):
            logs: list[str] = []
            events: list[str] = []
            while i < len(lines) and lines[i].lstrip().startswith(("~ log", "* event")):
                (logs if lines[i].lstrip().startswith("~ log") else events).append(lines[i])
                i += 1
            out.extend(events + logs)
    return out
