"""Shared test helpers (moved from test_replay.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

GOOD = ("lookup_invoice", "refund")
EXTRA = ("lookup_invoice", "lookup_track", "refund")
T0 = 1_700_000_000_000_000_000
SPEC = """\
id: shop-refund
match: {service: shop-agent}
reference: {trajectory: [lookup_invoice, refund]}
evaluators:
  - trajectory_exact_match
  - {name: trajectory_precision, config: {threshold: 1.0}}
"""
TRACE_ID = bytes(range(1, 17))
SPAN_ID = bytes(range(1, 9))
PARENT_ID = bytes(range(11, 19))


def _kv(key: str, value: str) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(string_value=value))


def agent_run(
    n: int,
    tools: Iterable[str] = GOOD,
    question: str | None = None,
    version: str = "1.0",
    attributes: dict[str, str] | None = None,
) -> bytes:
    """One trace (trace id ``n``) as a serialized ``ExportTraceServiceRequest``;
    ``attributes`` are added to the root span."""
    trace_id, root = n.to_bytes(16, "big"), (n * 64 + 1).to_bytes(8, "big")
    start = T0 + n * 1_000_000_000
    spans = []
    for i, tool in enumerate(tools):
        span = Span(trace_id=trace_id, span_id=(n * 64 + 2 + i).to_bytes(8, "big"),
                    parent_span_id=root, name=f"execute_tool {tool}", kind=1,
                    start_time_unix_nano=start + (i + 1) * 10**6,
                    end_time_unix_nano=start + (i + 2) * 10**6)  # fmt: skip
        span.attributes.extend([_kv("gen_ai.operation.name", "execute_tool"),
                                _kv("gen_ai.tool.name", tool)])  # fmt: skip
        spans.append(span)
    message = [{"role": "user", "parts": [{"type": "text", "content": question or f"q{n}"}]}]
    root_span = Span(trace_id=trace_id, span_id=root, name="invoke_agent shop", kind=1,
                     start_time_unix_nano=start, end_time_unix_nano=start + 10**8)  # fmt: skip
    root_span.attributes.extend([
        _kv("gen_ai.operation.name", "invoke_agent"), _kv("gen_ai.agent.name", "shop"),
        _kv("gen_ai.input.messages", json.dumps(message)),
    ])  # fmt: skip
    root_span.attributes.extend(_kv(key, value) for key, value in (attributes or {}).items())
    resource_spans = ResourceSpans(scope_spans=[ScopeSpans(spans=[*spans, root_span])])
    resource_spans.resource.attributes.extend(
        [_kv("service.name", "shop-agent"), _kv("service.version", version)]
    )
    return ExportTraceServiceRequest(resource_spans=[resource_spans]).SerializeToString()


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def framed(*requests: bytes) -> bytes:
    """Varint-delimited requests, as ``shared/bench/make_traces.py --pb`` writes them."""
    return b"".join(varint(len(request)) + request for request in requests)


def request(*spans: PbSpan, service: str = "svc") -> ExportTraceServiceRequest:
    resource_spans = ResourceSpans(scope_spans=[ScopeSpans(spans=list(spans))])
    resource_spans.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value=service))
    )
    resource_spans.scope_spans[0].scope.name = "scope"
    return ExportTraceServiceRequest(resource_spans=[resource_spans])


def pb_span(**attributes: AnyValue) -> PbSpan:
    span = PbSpan(
        trace_id=TRACE_ID,
        span_id=SPAN_ID,
        parent_span_id=PARENT_ID,
        name="execute_tool refund",
        kind=1,
        start_time_unix_nano=10,
        end_time_unix_nano=20,
    )
    span.attributes.extend(KeyValue(key=k, value=v) for k, v in attributes.items())
    return span


def json_span(**overrides: object) -> dict[str, object]:
    span: dict[str, object] = {
        "traceId": TRACE_ID.hex().upper(),  # hex is case-insensitive
        "spanId": SPAN_ID.hex(),
        "name": "root",
        "kind": 2,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": 1700000001000000000,  # numbers are accepted too
        "attributes": [
            {"key": "n", "value": {"intValue": 7}},
            {"key": "m", "value": {"intValue": "8"}},
            {"key": "d", "value": {"doubleValue": "NaN"}},
        ],
        "status": {"code": 2, "message": "boom"},
        "unknownField": {"ignored": True},
    }
    span.update(overrides)
    return span


def json_request(*spans: dict[str, object]) -> bytes:
    return json.dumps(
        {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]}
    ).encode()
