"""Enriched spans over OTLP: a real tracing-backend stand-in (gRPC and HTTP servers)
receives the evaluation span, its ``gen_ai.evaluation.result`` events, the log
records and the forwarded spans of a real framework trace sent to ``evald serve``."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.daemon_harness import (
    GOLDEN,
    RunningDaemon,
    daemon_config,
    golden_expectations,
    results_by_key,
    running_daemon,
)
from support.otlp_backend import OtlpBackend, Received, attributes

from collector.config.settings import Config, ConfigError, load_config
from collector.core.records import Span
from collector.decode import decode_json
from collector.decode.common import KEEP_ALL

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

TOOL_ERROR = GOLDEN / "pydantic-ai" / "tool_error.jsonl"
EVENT = "gen_ai.evaluation.result"
PROTOCOLS = ["grpc", "http/protobuf"]


def decoded_spans(path: Path) -> list[Span]:
    return [
        span
        for line in path.read_bytes().splitlines()
        for span in decode_json(line, KEEP_ALL).spans
    ]


def root_of(spans: list[Span]) -> Span:
    (root,) = [span for span in spans if span.is_root]
    return root


@pytest.fixture(params=PROTOCOLS)
def backend(request: pytest.FixtureRequest) -> Iterator[OtlpBackend]:
    server = OtlpBackend(request.param)
    yield server
    server.close()


def exporting_daemon(
    backend: OtlpBackend, loop: LoopThread, tmp_path: Path, **otlp: Any
) -> contextlib.AbstractContextManager[RunningDaemon]:
    outputs = {
        "results_file": str(tmp_path / "results.jsonl"),
        "otlp": {"endpoint": backend.endpoint, "protocol": backend.protocol,
                 "schedule_delay": "10ms", **otlp},
    }  # fmt: skip
    return running_daemon(daemon_config(outputs=outputs), loop)


def evaluation_spans(backend: OtlpBackend) -> list[Received]:
    return [item for item in backend.spans if item.scope == "evald"]


def test_evaluation_span_and_events_land_in_the_evaluated_trace(
    backend: OtlpBackend, loop_thread: LoopThread, tmp_path: Path
) -> None:
    with exporting_daemon(backend, loop_thread, tmp_path, log_records=True) as running:
        running.post_file(TOOL_ERROR)
        running.complete_traces()
        assert backend.wait_for(lambda: bool(evaluation_spans(backend)) and bool(backend.logs))

    trace_id = golden_expectations(TOOL_ERROR)["trace_ids"][0]
    root = root_of(decoded_spans(TOOL_ERROR))
    (received,) = evaluation_spans(backend)
    span = received.record
    assert span.trace_id.hex() == trace_id
    assert span.parent_span_id == root.span_id
    assert received.resource["service.name"] == "evald"
    assert received.resource["evald.output"] == "evaluation"
    assert span.end_time_unix_nano >= span.start_time_unix_nano > 0

    results = results_by_key(tmp_path / "results.jsonl")
    events = [attributes(event.attributes) for event in span.events]
    assert {event.name for event in span.events} == {EVENT}
    assert len(events) == len(results)
    for event in events:
        line = results[(trace_id, event.get("evald.spec.id"), event["gen_ai.evaluation.name"])]
        assert event.get("gen_ai.evaluation.score.value") == line["score"]
        verdict = {True: "pass", False: "fail", None: None}[line["passed"]]
        assert event.get("gen_ai.evaluation.score.label") == verdict
    by_name = {(e.get("evald.spec.id"), e["gen_ai.evaluation.name"]): e for e in events}
    # The refund tool failed, but the trajectory is the right one: recall passes.
    recall = by_name[("refund-outside-window", "trajectory_recall")]
    assert recall["gen_ai.evaluation.score.value"] == 1.0
    assert recall["gen_ai.evaluation.score.label"] == "pass"
    assert by_name[(None, "failure")]["gen_ai.evaluation.score.label"] == "pass"
    assert "evald.spec.id" not in by_name[(None, "latency")]

    assert len(backend.logs) == len(events)
    for log in backend.logs:
        record = log.record
        assert record.event_name == EVENT
        assert record.trace_id.hex() == trace_id
        assert record.span_id == root.span_id
        assert attributes(record.attributes) in events
        assert log.scope == "evald"


def test_forwarded_spans_keep_ids_and_attributes_and_get_a_summary(
    backend: OtlpBackend, loop_thread: LoopThread, tmp_path: Path
) -> None:
    with exporting_daemon(backend, loop_thread, tmp_path, forward_spans=True) as running:
        running.post_file(TOOL_ERROR)
        running.complete_traces()

    original = {span.span_id: span for span in decoded_spans(TOOL_ERROR)}
    forwarded = {item.record.span_id: item for item in backend.spans if item.scope != "evald"}
    assert forwarded.keys() == original.keys()
    for span_id, item in forwarded.items():
        source, span = original[span_id], item.record
        assert span.trace_id == source.trace_id
        assert span.parent_span_id == source.parent_span_id
        assert (span.name, span.kind, span.status.code) == (
            source.name,
            source.kind,
            source.status_code,
        )
        assert item.resource["evald.output"] == "forwarded"
        assert item.resource["service.name"] == source.resource.service_name
        assert item.scope == source.scope_name
        kept = attributes(span.attributes)
        # Every attribute survives, also those the normalizer never reads.
        assert {key: kept[key] for key in source.attributes} == _plain(source.attributes)
        assert len(span.events) == len(source.events)
    root = forwarded[root_of(list(original.values())).span_id]
    summary = attributes(root.record.attributes)
    results = results_by_key(tmp_path / "results.jsonl")
    assert summary["evald.evaluations"] == len(results)
    failed = sum(1 for line in results.values() if line["passed"] is False)
    assert summary["evald.evaluations.failed"] == failed


def _plain(values: Any) -> Any:
    # Decoded arrays are tuples; the backend reads them back as lists.
    if isinstance(values, tuple):
        return [_plain(item) for item in values]
    if isinstance(values, dict):
        return {key: _plain(item) for key, item in values.items()}
    return values


@pytest.mark.parametrize(
    ("otlp", "key"),
    [
        ({"endpoint": "tempo:4317"}, "outputs.otlp.endpoint"),
        ({"protocol": "http/json"}, "outputs.otlp.protocol"),
        ({"max_queue_size": 10, "max_export_batch_size": 20}, "outputs.otlp"),
        ({"timeout": "0s"}, "outputs.otlp.timeout"),
    ],
)
def test_bad_otlp_output_config_names_the_key(
    otlp: dict[str, Any], key: str, tmp_path: Path
) -> None:
    path = tmp_path / "evald.yaml"
    path.write_text(json.dumps({"outputs": {"otlp": otlp}}))
    with pytest.raises(ConfigError, match=rf"evald.yaml: {re.escape(key)}\b"):
        load_config(path)


def test_the_default_config_file_states_the_output_defaults() -> None:
    shipped = load_config(GOLDEN.parent.parent.parent / "config" / "evald.yaml")
    assert shipped.outputs == Config().outputs
    assert shipped.telemetry == Config().telemetry
