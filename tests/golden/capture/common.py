"""Shared part of the golden-trace capture scripts (not run in CI; see README.md).

Each ``tests/golden/capture/<framework>.py`` runs one real agent framework, offline,
with a scripted model, on the music-store scenarios of ``tests/golden/traces/pydantic-ai``
(same user inputs, same model decisions, same final answers, same tool results), and
writes what its real instrumentation exported with ``write_scenario``:

* ``<scenario>.jsonl``: OTLP/JSON, one ``ExportTraceServiceRequest`` per SDK export batch
  (hex ids, enums as integers, 64-bit integers as strings, as Python's OTLP/JSON);
* ``<scenario>.pb``: one binary ``ExportTraceServiceRequest`` holding every span;
* ``<scenario>.expected.json``: labels in the format of the shared traces, with the
  executed trajectory recorded by the tools themselves (not read back from the spans);
* ``<scenario>.tree.txt``: the span tree, for reading.

Only the OpenTelemetry SDK and the OTLP proto packages are needed besides the framework.
This file must stay importable from each framework's own venv: no evald imports.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

GOLDEN = Path(__file__).resolve().parent.parent
REFERENCE = GOLDEN / "traces" / "pydantic-ai"  # labels and model decisions are taken from here
# Where the captured folders are written: the golden traces, or with CAPTURE_OUT a scratch
# folder, to compare a re-capture with the committed one first (compare_capture.py).
TRACES = Path(os.environ.get("CAPTURE_OUT") or GOLDEN / "traces")
SCENARIOS = (
    "correct",
    "extra_call",
    "wrong_order",
    "tool_error",
    "wrong_args",
    "parallel_calls",
    "multi_turn",
)
SYSTEM_PROMPT = (
    "You are the customer-support agent of Tunes & Co, a digital music store. Use the tools "
    "to look up tracks, albums, artists and invoices. Only refund a track after you verified "
    "the invoice belongs to the customer and contains that track."
)
AGENT_NAME = "music_store_support"
MODEL_NAME = "scripted-support-model"
REFUND_ERROR = (
    "RefundWindowExpired: invoice 877 dated 2026-06-02 is outside the 30-day refund window"
)

# --------------------------------------------------------------------------- the store

TRACKS = {
    "Comfortably Numb": {
        "track_id": 3158,
        "name": "Comfortably Numb",
        "album_id": 217,
        "album": "The Wall",
        "artist": "Pink Floyd",
        "unit_price": 0.99,
    },
    "Hey You": {
        "track_id": 3160,
        "name": "Hey You",
        "album_id": 217,
        "album": "The Wall",
        "artist": "Pink Floyd",
        "unit_price": 0.99,
    },
    "Money": {
        "track_id": 1204,
        "name": "Money",
        "album_id": 98,
        "album": "The Dark Side of the Moon",
        "artist": "Pink Floyd",
        "unit_price": 1.29,
    },
}
ALBUMS = {
    "The Wall": {"album_id": 217, "title": "The Wall", "artist": "Pink Floyd", "year": 1979},
    "The Dark Side of the Moon": {
        "album_id": 98,
        "title": "The Dark Side of the Moon",
        "artist": "Pink Floyd",
        "year": 1973,
    },
}
ARTISTS = {
    "Pink Floyd": {
        "artist_id": 52,
        "name": "Pink Floyd",
        "albums": ["The Dark Side of the Moon", "Wish You Were Here", "Animals", "The Wall"],
    },
}
INVOICES: dict[tuple[int, int], dict[str, Any]] = {
    (17, 1042): {
        "invoice_id": 1042,
        "customer_id": 17,
        "date": "2026-10-28",
        "total": 2.97,
        "lines": [
            {"line_id": 1, "track_id": 3158, "unit_price": 0.99},
            {"line_id": 2, "track_id": 3158, "unit_price": 0.99},
            {"line_id": 3, "track_id": 3160, "unit_price": 0.99},
        ],
    },
    (17, 877): {
        "invoice_id": 877,
        "customer_id": 17,
        "date": "2026-06-02",
        "total": 1.29,
        "lines": [{"line_id": 1, "track_id": 1204, "unit_price": 1.29}],
    },
}
TOOL_DESCRIPTIONS = {
    "lookup_track": "Look up a track in the catalogue by its exact name.",
    "lookup_album": "Look up an album by its title.",
    "lookup_artist": "Look up an artist and the albums the store sells by them.",
    "lookup_invoice": "Fetch an invoice of a customer (lines reference track ids).",
    "refund": "Refund one purchased track of an invoice.",
}

# JSON-schema properties of each tool's arguments (all required), for the captures that
# declare the tools to the model themselves.
TOOL_PARAMETERS: dict[str, dict[str, Any]] = {
    "lookup_track": {"track_name": {"type": "string", "description": "The exact track name."}},
    "lookup_album": {"album_title": {"type": "string", "description": "The album title."}},
    "lookup_artist": {"artist_name": {"type": "string", "description": "The artist's name."}},
    "lookup_invoice": {
        "customer_id": {"type": "integer", "description": "The customer's id."},
        "invoice_id": {"type": "integer", "description": "The invoice id."},
    },
    "refund": {
        "invoice_id": {"type": "integer", "description": "The invoice id."},
        "track_id": {"type": "integer", "description": "The track to refund."},
        "reason": {"type": "string", "description": "Why the customer wants the refund."},
    },
}


class StoreError(Exception):
    """A tool failure of the store backend (e.g. RefundWindowExpired)."""


def backend(name: str, **args: Any) -> Any:
    """The store's answer to one tool call; raises ``StoreError`` for a failed call."""
    if name == "lookup_track":
        return TRACKS.get(args["track_name"]) or {"error": "not found"}
    if name == "lookup_album":
        return ALBUMS.get(args["album_title"]) or {"error": "not found"}
    if name == "lookup_artist":
        return ARTISTS.get(args["artist_name"]) or {"error": "not found"}
    if name == "lookup_invoice":
        return INVOICES.get((args["customer_id"], args["invoice_id"])) or {"error": "not found"}
    if name == "refund":
        invoice = next(i for i in INVOICES.values() if i["invoice_id"] == args["invoice_id"])
        if invoice["date"] < "2026-10-01":
            raise StoreError(REFUND_ERROR)
        price = next(
            line["unit_price"] for line in invoice["lines"] if line["track_id"] == args["track_id"]
        )
        return {
            "refund_id": f"RF-{args['invoice_id']}-{args['track_id']}",
            "amount": price,
            "currency": "USD",
            "status": "approved",
        }
    raise KeyError(name)


# --------------------------------------------------------------------------- scripts


@dataclass
class ModelTurn:
    """What the scripted model answers in one user turn: tool-call rounds, then text."""

    rounds: list[list[tuple[str, dict[str, Any]]]]
    final: str


@dataclass
class Scenario:
    """One labelled scenario: the reference labels plus the model's script per turn."""

    name: str
    reference: dict[str, Any]
    turns: list[ModelTurn]

    @property
    def user_inputs(self) -> list[str]:
        return list(self.reference["user_inputs"])

    @property
    def session_id(self) -> str | None:
        value = self.reference["session_id"]
        return value if isinstance(value, str) else None


def load_scenario(name: str) -> Scenario:
    """The reference scenario: its labels, and the model decisions that reproduce them."""
    reference = json.loads((REFERENCE / f"{name}.expected.json").read_text())
    turns: list[ModelTurn] = []
    for turn, final in enumerate(reference["final_responses"]):
        rounds: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        for call in reference["actual_trajectory"]:
            if call["turn"] == turn:
                rounds.setdefault(call["llm_step"], []).append((call["tool"], call["args"]))
        turns.append(ModelTurn([rounds[k] for k in sorted(rounds)], final))
    return Scenario(name, reference, turns)


class Script:
    """The scripted model's cursor: which response comes next, and the executed calls.

    Frameworks call ``next_response()`` once per model request, and the tools call
    ``record`` once per execution, so ``actual_trajectory`` comes from what really ran.
    """

    def __init__(self, scenario: Scenario, call_id_prefix: str = "call") -> None:
        self.scenario = scenario
        self.prefix = call_id_prefix
        self.turn = 0
        self.step = -1
        self.llm_calls: list[int] = []
        self.executed: list[dict[str, Any]] = []
        self._parallel_groups = 0
        self._group_of_step: dict[tuple[int, int], int] = {}

    def start_turn(self, turn: int) -> None:
        self.turn, self.step = turn, -1
        self.llm_calls.append(0)

    def next_response(self) -> tuple[list[tuple[str, str, dict[str, Any]]], str | None]:
        """``(tool calls as (call id, name, args), None)`` or ``([], final text)``."""
        self.step += 1
        self.llm_calls[self.turn] += 1
        plan = self.scenario.turns[self.turn]
        if self.step < len(plan.rounds):
            calls = plan.rounds[self.step]
            tag = self.scenario.name[:6]
            return [
                (f"{self.prefix}_{tag}_{self.turn}{self.step}{k}", name, dict(args))
                for k, (name, args) in enumerate(calls)
            ], None
        return [], plan.final

    def record(self, tool: str, args: dict[str, Any], result: Any, error: str | None) -> None:
        entry: dict[str, Any] = {
            "turn": self.turn,
            "llm_step": self.step,
            "tool": tool,
            "args": args,
            "result": result,
            "error": error,
        }
        plan = self.scenario.turns[self.turn]
        if 0 <= self.step < len(plan.rounds) and len(plan.rounds[self.step]) > 1:
            key = (self.turn, self.step)
            if key not in self._group_of_step:
                self._group_of_step[key] = self._parallel_groups
                self._parallel_groups += 1
            entry["parallel_group"] = self._group_of_step[key]
        self.executed.append(entry)

    def call(self, tool: str, **args: Any) -> Any:
        """Run the store backend for a tool, record it, re-raise its failure."""
        try:
            result = backend(tool, **args)
        except StoreError as exc:
            self.record(tool, args, None, str(exc))
            raise
        self.record(tool, args, result, None)
        return result


class Active:
    """The script of the scenario being captured: the module-level tools call into it."""

    script: Script | None = None


def active_script() -> Script:
    """The script of the scenario being captured (set by ``capture``)."""
    assert Active.script is not None
    return Active.script


# --------------------------------------------------------------------------- capture


class BatchRecorder(SpanExporter):
    """An in-memory exporter that keeps the SDK's export batches as they came."""

    def __init__(self) -> None:
        self.batches: list[list[ReadableSpan]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.batches.append(list(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    @property
    def spans(self) -> list[ReadableSpan]:
        return [span for batch in self.batches for span in batch]


def make_provider(service_name: str) -> tuple[TracerProvider, BatchRecorder]:
    """A provider exporting in batches (flushed per turn) to a ``BatchRecorder``."""
    from opentelemetry.sdk.resources import Resource

    resource = Resource.create(
        {"service.name": service_name, "deployment.environment.name": "acceptance-test"}
    )
    provider = TracerProvider(resource=resource)
    recorder = BatchRecorder()
    provider.add_span_processor(
        BatchSpanProcessor(
            recorder, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
        )
    )
    return provider, recorder


_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> None:
    """json_format writes ids as base64: OTLP/JSON wants (lower-case) hex."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_FIELDS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)


def otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """One ExportTraceServiceRequest as OTLP/JSON (hex ids, integer enums, camelCase)."""
    request = encode_spans(spans)
    as_dict = json_format.MessageToDict(request, use_integers_for_enums=True)
    _hex_ids(as_dict)
    return json.dumps(as_dict, ensure_ascii=False, separators=(",", ":"))


_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def _short(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 3] + "..."
    return value


def tree_text(spans: Sequence[ReadableSpan]) -> str:
    """The span trees (one per trace, in start order), attribute values shortened."""
    by_id = {span.context.span_id: span for span in spans}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in by_id else None, []).append(span)
    for kids in children.values():
        kids.sort(key=lambda s: s.start_time or 0)
    lines: list[str] = []

    def visit(span: ReadableSpan, depth: int) -> None:
        pad = "  " * depth
        attrs = {k: _short(v, 80) for k, v in (span.attributes or {}).items()}
        status = span.status.status_code.name
        lines.append(f"{pad}- {span.name} [{_KINDS[_kind(span)]}] status={status} {attrs}")
        for event in span.events:
            event_attrs = {k: _short(v, 400) for k, v in (event.attributes or {}).items()}
            lines.append(f"{pad}    * event {event.name} {event_attrs}")
        for kid in children.get(span.context.span_id, []):
            visit(kid, depth + 1)

    for root in children.get(None, []):
        visit(root, 0)
    return "\n".join(lines) + "\n"


def _kind(span: ReadableSpan) -> int:
    """The OTLP span-kind number (the SDK enum counts from 0 for INTERNAL)."""
    return int(span.kind.value) + 1


def versions(*packages: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for package in packages:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[package] = metadata.version(package)
    return found


@dataclass
class Capture:
    """What one scenario run produced, ready to be written."""

    scenario: Scenario
    script: Script
    batches: list[list[ReadableSpan]]
    turn_trace_ids: list[str]
    final_responses: list[str | None]
    framework_versions: dict[str, str]
    notes: str = ""
    session_id: str | None = None
    tool_error_contains: str = "RefundWindowExpired"
    run_errors: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def trace_ids_of(spans: Sequence[ReadableSpan]) -> list[str]:
    """Distinct trace ids (hex) in order of their earliest span."""
    first: dict[str, int] = {}
    for span in spans:
        trace_id = format(span.context.trace_id, "032x")
        start = span.start_time or 0
        first[trace_id] = min(start, first.get(trace_id, start))
    return sorted(first, key=first.__getitem__)


def write_scenario(folder: Path, capture: Capture) -> None:
    """Write the four files of one scenario (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = capture.scenario.name
    batches = [batch for batch in capture.batches if batch]
    spans = [span for batch in batches for span in batch]
    (folder / f"{name}.jsonl").write_text(
        "".join(otlp_json(batch) + "\n" for batch in batches), encoding="utf-8"
    )
    (folder / f"{name}.pb").write_bytes(encode_spans(spans).SerializeToString())
    (folder / f"{name}.tree.txt").write_text(tree_text(spans), encoding="utf-8")
    write_labels(folder, capture, trace_ids_of(spans), len(spans), len(batches))


def write_labels(
    folder: Path, capture: Capture, all_ids: list[str], span_count: int, batch_count: int
) -> None:
    """Write ``<scenario>.expected.json`` (traces ``all_ids``, in order of their first span)."""
    name = capture.scenario.name
    reference = capture.scenario.reference
    stray = [trace_id for trace_id in all_ids if trace_id not in capture.turn_trace_ids]
    labels = json.loads(json.dumps(reference["labels"]))
    for error in labels.get("tool_errors", []):
        error["message_contains"] = capture.tool_error_contains
    expected: dict[str, Any] = {
        "framework": folder.name,
        "scenario": name,
        "description": reference["description"],
        "session_id": capture.session_id,
        "user_inputs": capture.scenario.user_inputs,
        "final_responses": capture.final_responses,
        "expected_trajectory": reference["expected_trajectory"],
        "ordering_constraints": reference["ordering_constraints"],
        "actual_trajectory": capture.script.executed,
        "labels": labels,
        "trace_ids": capture.turn_trace_ids,
        "llm_calls_per_turn": capture.script.llm_calls,
        "span_count": span_count,
        "export_batches": batch_count,
        "framework_versions": capture.framework_versions,
        "run_errors": capture.run_errors,
    }
    if capture.notes:
        expected["notes"] = capture.notes
    if stray:
        expected["stray_traces"] = stray
    expected.update(capture.extra)
    (folder / f"{name}.expected.json").write_text(
        json.dumps(expected, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(
        f"{folder.name}/{name}: {span_count} spans, {batch_count} batches, traces {all_ids}",
        file=sys.stderr,
    )


def check_labels(capture: Capture) -> None:
    """The run did what the reference scenario says (same calls, answers), else fail loudly."""
    reference = capture.scenario.reference
    want = [(c["turn"], c["tool"], c["args"]) for c in reference["actual_trajectory"]]
    got = [(c["turn"], c["tool"], c["args"]) for c in capture.script.executed]
    key: Callable[[tuple[int, str, Any]], str] = lambda c: json.dumps(c, sort_keys=True)  # noqa: E731
    if sorted(want, key=key) != sorted(got, key=key):
        raise SystemExit(f"{capture.scenario.name}: executed {got}, reference {want}")
    if capture.final_responses != reference["final_responses"]:
        raise SystemExit(f"{capture.scenario.name}: final responses {capture.final_responses}")


def selected(argv: Sequence[str]) -> list[str]:
    """Scenario names from the command line (default: all)."""
    names = [arg for arg in argv if not arg.startswith("-")]
    return names or list(SCENARIOS)
