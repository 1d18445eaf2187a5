"""OTLP log records built by hand (protobuf and OTLP/JSON) and a GenAI agent run whose
content travels only as log records, as opentelemetry-instrumentation-openai-v2 sends it."""

from __future__ import annotations

import base64
import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as PbLogRecord
from opentelemetry.proto.logs.v1.logs_pb2 import ResourceLogs, ScopeLogs
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

TRACE_ID = bytes(range(1, 17))
SPAN_ID = bytes(range(1, 9))
DETAILS = "gen_ai.client.inference.operation.details"
_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def any_value(value: object) -> AnyValue:
    """A Python value as an OTLP ``AnyValue`` (dicts become kvlists, lists arrays)."""
    if isinstance(value, AnyValue):
        return value
    if value is None:
        return AnyValue()
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, str):
        return AnyValue(string_value=value)
    out = AnyValue()
    if isinstance(value, dict):
        out.kvlist_value.CopyFrom(
            KeyValueList(values=[KeyValue(key=k, value=any_value(v)) for k, v in value.items()])
        )
        return out
    if isinstance(value, list | tuple):
        out.array_value.values.extend(any_value(item) for item in value)
        return out
    raise TypeError(f"no AnyValue for {value!r}")


def pb_log(
    *,
    trace_id: bytes = TRACE_ID,
    span_id: bytes = SPAN_ID,
    event_name: str = "",
    time: int = 0,
    observed: int = 0,
    body: object = None,
    **attributes: object,
) -> PbLogRecord:
    """A protobuf ``LogRecord``; attribute keys use ``__`` for dots (``gen_ai__x``)."""
    record = PbLogRecord(
        trace_id=trace_id,
        span_id=span_id,
        event_name=event_name,
        time_unix_nano=time,
        observed_time_unix_nano=observed,
    )
    if body is not None:
        record.body.CopyFrom(any_value(body))
    record.attributes.extend(
        KeyValue(key=key.replace("__", "."), value=any_value(value))
        for key, value in attributes.items()
    )
    return record


def logs_request(
    *records: PbLogRecord, service: str = "svc", scope: str = "scope", **resource: str
) -> ExportLogsServiceRequest:
    resource_logs = ResourceLogs(scope_logs=[ScopeLogs(log_records=list(records))])
    resource_logs.scope_logs[0].scope.name = scope
    for key, value in {"service.name": service, **resource}.items():
        resource_logs.resource.attributes.append(KeyValue(key=key, value=any_value(value)))
    return ExportLogsServiceRequest(resource_logs=[resource_logs])


def otlp_json(message: Message) -> bytes:
    """``message`` in OTLP/JSON: protobuf's JSON mapping with ids as hex, not base64."""
    return json.dumps(_hex_ids(json_format.MessageToDict(message))).encode()


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex() if key in _ID_KEYS else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


def messages(role: str, text: str) -> list[dict[str, object]]:
    """One semconv message ``[{role, parts: [{type: text, content}]}]``."""
    return [{"role": role, "parts": [{"type": "text", "content": text}]}]


def tool_call_message(call_id: str, name: str, arguments: dict[str, object]) -> list[object]:
    """An assistant message requesting one tool call (arguments as a kvlist, as observed)."""
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return [{"role": "assistant", "parts": [part], "finish_reason": "tool_calls"}]


T0 = 1_700_000_000_000_000_000
CHAT = "chat scripted-model"


def _kv(key: str, value: object) -> KeyValue:
    return KeyValue(key=key, value=any_value(value))


def contentless_run(
    n: int, question: str, tool: str, answer: str, *, start: int = T0
) -> tuple[ExportTraceServiceRequest, ExportLogsServiceRequest]:
    """Trace ``n`` as a model client instrumented with content as log records records it
    (opentelemetry-instrumentation-openai-v2, ``EVENT_ONLY``): a root span without
    attributes, two ``chat`` spans without content; and one
    ``gen_ai.client.inference.operation.details`` record per chat span carrying the
    messages: the first call asks for ``tool`` (call id ``call-{n}``), the second
    answers. Times: the run takes 1 s of trace time from ``start``."""
    trace_id, root_id = n.to_bytes(16, "big"), (n * 8 + 1).to_bytes(8, "big")
    chats = [(n * 8 + 2).to_bytes(8, "big"), (n * 8 + 3).to_bytes(8, "big")]
    spans = [PbSpan(trace_id=trace_id, span_id=root_id, name="support_turn", kind=1,
                    start_time_unix_nano=start, end_time_unix_nano=start + 10**9)]  # fmt: skip
    for i, chat in enumerate(chats):
        span = PbSpan(trace_id=trace_id, span_id=chat, parent_span_id=root_id, name=CHAT,
                      kind=3, start_time_unix_nano=start + (2 * i + 1) * 10**8,
                      end_time_unix_nano=start + (2 * i + 2) * 10**8)  # fmt: skip
        span.attributes.extend([_kv("gen_ai.operation.name", "chat"),
                                _kv("gen_ai.request.model", "scripted-model")])  # fmt: skip
        spans.append(span)
    user = messages("user", question)
    request_tool = tool_call_message(f"call-{n}", tool, {"invoice_id": n})
    response = {"type": "tool_call_response", "id": f"call-{n}", "response": '{"ok": true}'}
    tool_result = [{"role": "tool", "parts": [response]}]
    calls = [
        (user, request_tool),
        ([*user, *request_tool, *tool_result], messages("assistant", answer)),
    ]
    records = [
        pb_log(
            trace_id=trace_id,
            span_id=chat,
            event_name=DETAILS,
            observed=start + (2 * i + 2) * 10**8 - 1,
            gen_ai__operation__name="chat",
            gen_ai__input__messages=inputs,
            gen_ai__output__messages=outputs,
        )
        for i, (chat, (inputs, outputs)) in enumerate(zip(chats, calls, strict=True))
    ]
    resource_spans = ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])
    resource_spans.resource.attributes.append(_kv("service.name", "shop-agent"))
    logs = logs_request(*records, service="shop-agent", scope="opentelemetry.util.genai.handler")
    return ExportTraceServiceRequest(resource_spans=[resource_spans]), logs
