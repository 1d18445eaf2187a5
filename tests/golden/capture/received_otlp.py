"""Receiver and writers for captures whose spans arrive as OTLP requests (another process
exported them): ``receiver`` is a route of ``scripted_model.LoopbackServer``.

Used by ``langchainjs_openinference.py`` (the OTel JS SDK exports to a loopback receiver)
and ``mcp_tools_openai_agents.py`` (the MCP server subprocess exports its own spans). Same
conventions as ``common.py``: ``.jsonl`` = one ``ExportTraceServiceRequest`` per export, as
``MessageToDict(use_integers_for_enums=True)`` with hex ids; ``.pb`` = one request with
every span; ``.tree.txt`` = common's tree format; ``.expected.json`` = common's label format.
A received request is kept exactly as it came; in-process SDK batches are encoded with
``encode_spans`` as in ``common``.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common
import scripted_model
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

TRACES_PATH = "/v1/traces"


def parse_export(request: scripted_model.Request) -> ExportTraceServiceRequest:
    """An OTLP/HTTP protobuf trace export request (the only encoding used here)."""
    raw = request.body
    if request.headers.get("Content-Encoding") == "gzip":
        raw = gzip.decompress(raw)
    content_type = request.headers.get("Content-Type") or ""
    if content_type != "application/x-protobuf":
        raise ValueError(f"not an OTLP/HTTP protobuf export: {content_type}")
    export = ExportTraceServiceRequest()
    export.ParseFromString(raw)
    return export


def receiver(keep: Callable[[ExportTraceServiceRequest, str], None]) -> scripted_model.Route:
    """The route (``TRACES_PATH``) of a loopback OTLP/HTTP protobuf trace receiver.

    Each export request is handed to ``keep`` as it came, with its content type, and
    answered with an empty ``ExportTraceServiceResponse`` (full success).
    """

    def route(request: scripted_model.Request) -> scripted_model.Reply:
        keep(parse_export(request), request.headers.get("Content-Type") or "")
        answer = ExportTraceServiceResponse().SerializeToString()
        return scripted_model.Reply(answer, content_type="application/x-protobuf")

    return route


def hex_json(request: ExportTraceServiceRequest) -> str:
    as_dict = json_format.MessageToDict(request, use_integers_for_enums=True)
    common._hex_ids(as_dict)
    return json.dumps(as_dict, ensure_ascii=False, separators=(",", ":"))


def all_spans(request: ExportTraceServiceRequest) -> list[Any]:
    return [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]


def ids_of(requests: list[ExportTraceServiceRequest]) -> list[str]:
    """Distinct trace ids (hex) in order of their earliest span."""
    first: dict[str, int] = {}
    for request in requests:
        for span in all_spans(request):
            trace_id = span.trace_id.hex()
            first[trace_id] = min(span.start_time_unix_nano, first.get(trace_id, 1 << 64))
    return sorted(first, key=first.__getitem__)


def merged(requests: list[ExportTraceServiceRequest]) -> ExportTraceServiceRequest:
    """One request with every span, resourceSpans/scopeSpans merged when identical."""
    out = ExportTraceServiceRequest()
    by_resource: dict[bytes, Any] = {}
    by_scope: dict[tuple[bytes, bytes, str], Any] = {}
    for request in requests:
        for rs in request.resource_spans:
            rkey = rs.resource.SerializeToString(deterministic=True) + rs.schema_url.encode()
            if rkey not in by_resource:
                target = out.resource_spans.add()
                target.resource.CopyFrom(rs.resource)
                target.schema_url = rs.schema_url
                by_resource[rkey] = target
            for ss in rs.scope_spans:
                skey = (rkey, ss.scope.SerializeToString(deterministic=True), ss.schema_url)
                if skey not in by_scope:
                    target_ss = by_resource[rkey].scope_spans.add()
                    target_ss.scope.CopyFrom(ss.scope)
                    target_ss.schema_url = ss.schema_url
                    by_scope[skey] = target_ss
                by_scope[skey].spans.extend(ss.spans)
    return out


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    if which is None:
        return None
    return getattr(value, which)


_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


def tree_text(request: ExportTraceServiceRequest) -> str:
    """common.tree_text's format, from OTLP protobuf spans (of every resource)."""
    spans = all_spans(request)
    by_id = {span.span_id: span for span in spans}
    children: dict[bytes | None, list[Any]] = {}
    for span in spans:
        parent = span.parent_span_id or None
        children.setdefault(parent if parent in by_id else None, []).append(span)
    for kids in children.values():
        kids.sort(key=lambda s: s.start_time_unix_nano)
    lines: list[str] = []

    def visit(span: Any, depth: int) -> None:
        pad = "  " * depth
        attrs = {kv.key: common._short(_value(kv.value), 80) for kv in span.attributes}
        status = _STATUS[span.status.code]
        lines.append(f"{pad}- {span.name} [{common._KINDS[span.kind]}] status={status} {attrs}")
        for event in span.events:
            event_attrs = {kv.key: common._short(_value(kv.value), 400) for kv in event.attributes}
            lines.append(f"{pad}    * event {event.name} {event_attrs}")
        for kid in children.get(span.span_id, []):
            visit(kid, depth + 1)

    for root in children.get(None, []):
        visit(root, 0)
    return "\n".join(lines) + "\n"


def write_scenario(
    folder: Path,
    capture: common.Capture,
    requests: list[ExportTraceServiceRequest],
) -> None:
    """common.write_scenario for export requests (in the order they were exported)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = capture.scenario.name
    requests = [r for r in requests if all_spans(r)]
    every = merged(requests)
    spans = all_spans(every)
    (folder / f"{name}.jsonl").write_text(
        "".join(hex_json(r) + "\n" for r in requests), encoding="utf-8"
    )
    (folder / f"{name}.pb").write_bytes(every.SerializeToString())
    (folder / f"{name}.tree.txt").write_text(tree_text(every), encoding="utf-8")
    common.write_labels(folder, capture, ids_of(requests), len(spans), len(requests))
