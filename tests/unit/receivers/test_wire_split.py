"""Splitting export requests by trace id at the wire level (``pipeline.workers``)."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from support.otlp_logs import logs_request, pb_log

from collector.decode import decode_logs_protobuf, decode_protobuf
from collector.receivers.wire_split import shard_of, split_logs, split_traces


def trace_ids(count: int) -> list[bytes]:
    return [bytes([index + 1]) * 16 for index in range(count)]


def request(ids: list[bytes], spans_per_trace: int = 3) -> ExportTraceServiceRequest:
    """Two resources, two scopes each; every trace's spans spread over all of them."""
    resources = []
    for service in ("a", "b"):
        scopes = []
        for scope in ("s1", "s2"):
            spans = [
                Span(
                    trace_id=trace_id,
                    span_id=bytes([number + 1]) * 8,
                    name=f"{service}-{scope}-{number}",
                    attributes=[KeyValue(key="k", value=AnyValue(string_value="v" * 200))],
                )
                for trace_id in ids
                for number in range(spans_per_trace)
            ]
            scope_spans = ScopeSpans(spans=spans, schema_url=f"{scope}-schema")
            scope_spans.scope.name = scope
            scopes.append(scope_spans)
        resource = ResourceSpans(scope_spans=scopes, schema_url="r-schema")
        resource.resource.attributes.append(
            KeyValue(key="service.name", value=AnyValue(string_value=service))
        )
        resources.append(resource)
    return ExportTraceServiceRequest(resource_spans=resources)


def decoded_names(payload: bytes) -> list[tuple[bytes, str, str, str]]:
    return sorted(
        (span.trace_id, span.name, span.resource.service_name, span.scope_name)
        for span in decode_protobuf(payload).spans
    )


def test_every_span_goes_to_its_trace_owner_with_its_resource_and_scope() -> None:
    ids = trace_ids(12)
    payload = request(ids).SerializeToString()
    for workers in (2, 3, 5):
        split = split_traces(payload, workers)
        gathered = []
        for index, part in enumerate(split.payloads):
            if part is None:
                assert split.counts[index] == 0
                continue
            names = decoded_names(part)
            assert {shard_of(trace_id, workers) for trace_id, *_ in names} == {index}
            assert len(names) == split.counts[index]
            gathered += names
        assert sorted(gathered) == decoded_names(payload)


def test_a_request_of_one_owner_is_forwarded_as_it_came() -> None:
    ids = [trace_id for trace_id in trace_ids(40) if shard_of(trace_id, 2) == 1]
    payload = request(ids).SerializeToString()
    split = split_traces(payload, 2)
    assert split.payloads == [None, payload]
    assert split.counts == [0, len(ids) * 3 * 4]


def test_a_span_whose_trace_id_is_not_first_is_routed_by_it() -> None:
    # Field order on the wire is the sender's choice: name (5) before trace_id (1).
    trace_id = trace_ids(1)[0]
    span = Span(name="late-id").SerializeToString() + Span(trace_id=trace_id).SerializeToString()
    scope = b"\x12" + bytes([len(span)]) + span
    resource = b"\x12" + bytes([len(scope)]) + scope
    payload = b"\x0a" + bytes([len(resource)]) + resource
    split = split_traces(payload, 4)
    assert split.counts[shard_of(trace_id, 4)] == 1
    assert split.payloads[shard_of(trace_id, 4)] == payload


def test_a_payload_that_cannot_be_walked_goes_whole_to_worker_0() -> None:
    payload = request(trace_ids(4)).SerializeToString()[:-7]  # truncated
    split = split_traces(payload, 3)
    assert split.payloads == [payload, None, None]


def test_log_records_follow_their_trace_and_records_without_one_go_to_one_worker() -> None:
    ids = trace_ids(8)
    records = [pb_log(trace_id=trace_id, event_name="e") for trace_id in ids]
    records.append(pb_log(trace_id=b"", span_id=b"", event_name="untraced"))
    payload = logs_request(*records).SerializeToString()
    split = split_logs(payload, 2)
    seen: list[bytes] = []
    no_trace_id = 0
    for index, part in enumerate(split.payloads):
        assert part is not None
        logs = decode_logs_protobuf(part)
        assert {shard_of(record.trace_id, 2) for record in logs.records} == {index}
        seen += [record.trace_id for record in logs.records]
        no_trace_id += logs.no_trace_id
    assert sorted(seen) == sorted(ids)
    assert no_trace_id == 1
    assert sum(split.counts) == len(records)
