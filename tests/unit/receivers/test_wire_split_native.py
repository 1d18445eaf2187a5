"""The compiled wire split (``_wire.split_walk``) against the Python walk it replaces.

Its contract: the Python walk's exact answer, or ``Unusual`` (the Python walk then
decides); never an answer of its own.
"""

from __future__ import annotations

import random
import zlib

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from support.otlp_logs import logs_request, pb_log
from support.paths import GOLDEN

from collector.decode import protobuf
from collector.offline.readers import is_log_file, read_payloads
from collector.receivers import wire_split
from collector.receivers.wire_split import Split, WireError, shard_of, split_traces

pytestmark = pytest.mark.skipif(
    not protobuf.NATIVE_DECODER, reason="EVALD_INTERPRETED or a pure install: nothing compiled"
)
_wire = protobuf._wire
SPAN_TRACE_ID, LOG_TRACE_ID = 1, 9


def traces_payload(rng: random.Random) -> bytes:
    """Resources, scopes and spans in random numbers; trace ids shared across them."""
    ids = [rng.randbytes(16) for _ in range(rng.randint(1, 6))]
    resources = []
    for service in range(rng.randint(1, 3)):
        scopes = []
        for scope in range(rng.randint(1, 3)):
            spans = [
                Span(
                    trace_id=rng.choice(ids),
                    span_id=rng.randbytes(8),
                    name=f"span-{service}-{scope}-{number}",
                    attributes=[KeyValue(key="k", value=AnyValue(string_value="v" * number))],
                )
                for number in range(rng.randint(0, 8))
            ]
            scope_spans = ScopeSpans(spans=spans, schema_url=f"scope-{scope}")
            scope_spans.scope.name = f"scope-{scope}"
            scopes.append(scope_spans)
        resource = ResourceSpans(scope_spans=scopes, schema_url="resource")
        resource.resource.attributes.append(
            KeyValue(key="service.name", value=AnyValue(string_value=f"service-{service}"))
        )
        resources.append(resource)
    return ExportTraceServiceRequest(resource_spans=resources).SerializeToString()


def python_walk(payload: bytes, count: int, trace_field: int) -> Split | None:
    """The Python walk's answer; None where it cannot walk the payload."""
    try:
        return wire_split._walk(payload, count, trace_field)
    except (WireError, IndexError):
        return None


def assert_same_or_unusual(payload: bytes, count: int, trace_field: int) -> bool:
    """True when the compiled walk answered (and agreed), False when it refused."""
    expected = python_walk(payload, count, trace_field)
    try:
        found = Split(*_wire.split_walk(payload, count, trace_field))
    except _wire.Unusual:
        return False
    assert found == expected, (payload.hex(), count)
    return True


def test_crc32_is_zlibs() -> None:
    rng = random.Random(5)
    for size in (0, 1, 15, 16, 17, 300):
        data = rng.randbytes(size)
        assert _wire.crc32(data) == zlib.crc32(data)


def test_valid_requests_split_exactly_as_the_python_walk_does() -> None:
    rng = random.Random(7)
    for _ in range(200):
        payload = traces_payload(rng)
        for count in (1, 2, 3, 8):
            assert assert_same_or_unusual(payload, count, SPAN_TRACE_ID)


def test_log_requests_split_exactly_as_the_python_walk_does() -> None:
    records = [pb_log(trace_id=bytes([n % 3 + 1]) * 16, body=f"r{n}") for n in range(9)]
    records.append(pb_log(trace_id=b"", body="no trace id"))
    payload = logs_request(*records).SerializeToString()
    for count in (2, 3):
        assert assert_same_or_unusual(payload, count, LOG_TRACE_ID)


def test_mutated_payloads_get_the_python_answer_or_a_refusal() -> None:
    rng = random.Random(11)
    answered = refused = 0
    for _ in range(3000):
        payload = bytearray(traces_payload(rng))
        for _ in range(rng.randint(1, 4)):
            where = rng.randrange(len(payload)) if payload else 0
            action = rng.random()
            if action < 0.5 and payload:
                payload[where] = rng.randrange(256)
            elif action < 0.8:
                del payload[where:]
            else:
                payload[where:where] = rng.randbytes(rng.randint(1, 4))
        if assert_same_or_unusual(bytes(payload), rng.choice((2, 3)), SPAN_TRACE_ID):
            answered += 1
        else:
            refused += 1
    assert answered > 300 and refused > 300  # both paths were exercised


def test_an_empty_span_is_routed_by_its_missing_trace_id_not_by_the_next_field() -> None:
    # An empty span (`12 00`) followed by the scope (`0a 10` + 16 bytes): the Python
    # walk used to read the scope's bytes as the span's trace id.
    scope = b"\x0a\x0e" + b"instrumentation"[:14]
    scope_spans = b"\x12\x00" + b"\x0a" + bytes([len(scope)]) + scope
    resource = b"\x12" + bytes([len(scope_spans)]) + scope_spans
    payload = b"\x0a" + bytes([len(resource)]) + resource
    for count in (3, 7):
        split = split_traces(payload, count)
        assert split.counts[shard_of(b"", count)] == 1 and sum(split.counts) == 1
        assert python_walk(payload, count, SPAN_TRACE_ID) == split


def test_a_span_naming_its_trace_twice_is_routed_by_the_last_as_protobuf_reads_it() -> None:
    first, last = b"\x01" * 16, b"\x02" * 16
    for count in range(2, 9):
        if shard_of(first, count) != shard_of(last, count):
            break
    # name, then two trace ids: not the usual encoding, so each field is read.
    span = b"\x2a\x01n" + b"\x0a\x10" + first + b"\x0a\x10" + last
    other = b"\x0a\x10" + first + b"\x12\x08" + b"\x03" * 8  # a span of trace `first`
    scope_spans = b"\x12" + bytes([len(span)]) + span + b"\x12" + bytes([len(other)]) + other
    resource = b"\x12" + bytes([len(scope_spans)]) + scope_spans
    payload = b"\x0a" + bytes([len(resource)]) + resource
    assert assert_same_or_unusual(payload, count, SPAN_TRACE_ID)
    split = split_traces(payload, count)
    assert split.counts[shard_of(last, count)] == 1 and split.counts[shard_of(first, count)] == 1


def test_every_golden_capture_splits_exactly_as_the_python_walk_does() -> None:
    # Real SDK encodings (traces and logs) from every captured framework.
    captures = sorted((GOLDEN / "traces").rglob("*.pb"))
    assert len(captures) > 100
    answered = asked = 0
    for path in captures:
        trace_field = LOG_TRACE_ID if is_log_file(path) else SPAN_TRACE_ID
        for payload in read_payloads(path):
            for count in (2, 3):
                asked += 1
                answered += assert_same_or_unusual(bytes(payload.data), count, trace_field)
    assert answered == asked  # no real SDK's encoding is left to the Python walk
