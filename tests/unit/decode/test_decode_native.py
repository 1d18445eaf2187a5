"""The compiled walker (``collector.decode._wire``) gives exactly the upb walk's records.

``decode_protobuf`` uses the walker when it is built and falls back to reading the
parsed upb message for the shapes the walker leaves alone. Every test here compares
the two paths on the same bytes: golden traces from real frameworks, synthetic
traces, hand-encoded wire shapes protobuf libraries never write (fields out of
order, duplicated messages, wrong wire types, groups), and fuzzed payloads.
"""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from google.protobuf.message import DecodeError as ProtobufDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Status
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan
from support.paths import GOLDEN

from collector.core import interpreted
from collector.decode import AttributeSelector, DecodeError, decode_protobuf
from collector.decode import protobuf as pb_decoder
from collector.decode.common import KEEP_ALL, DecodedBatch
from collector.normalize.attribute_keys import ATTRIBUTE_SELECTOR
from collector.offline.readers import read_payloads

# Without the compiled walker (a pure install) there is nothing to compare; the compiled
# test run requires it (tests/unit/core/test_native.py).
pytestmark = pytest.mark.skipif(
    interpreted.requested() or not pb_decoder.NATIVE_DECODER,
    reason="EVALD_INTERPRETED or a pure install: the compiled walker is not in use",
)

TRACE_ID = bytes(range(1, 17))
SPAN_ID = bytes(range(1, 9))
PARENT_ID = bytes(range(11, 19))
SELECTORS = {
    "keep_all": KEEP_ALL,
    "normalizer": ATTRIBUTE_SELECTOR,
    "short_values": AttributeSelector(["k", "s"], ["gen_ai."], max_value_size=3),
}


def upb_walk(
    data: bytes, selector: AttributeSelector, keep: Callable[[bytes], bool] | None = None
) -> DecodedBatch:
    return pb_decoder.walk_parsed(ExportTraceServiceRequest.FromString(data), selector, keep)


def assert_same(data: bytes, selector: AttributeSelector = KEEP_ALL) -> DecodedBatch:
    """Both paths agree on ``data``; returns the batch."""
    decoded = decode_protobuf(data, selector)
    assert same(decoded, upb_walk(data, selector))
    return decoded


def same(ours: DecodedBatch, reference: DecodedBatch) -> bool:
    """Equal, types included (``True`` vs ``1``, tuple vs list), NaN equal to NaN."""
    return repr(ours) == repr(reference)


def walker_handles(data: bytes, selector: AttributeSelector = KEEP_ALL) -> bool:
    """True if the compiled walker decoded ``data`` itself (no fallback)."""
    from collector.decode import _wire

    try:
        _wire.walk(
            data,
            selector.keep_all,
            selector.keys,
            selector.prefixes,
            selector.max_value_size,
            None,
            selector.suffixes,
        )
    except _wire.Unusual:
        return False
    return True


# --- raw wire encoding, for shapes the protobuf library never writes ----------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, payload: bytes | int, wire_type: int | None = None) -> bytes:
    if isinstance(payload, int):
        return varint(number << 3 | (wire_type or 0)) + (
            struct.pack("<Q", payload) if wire_type == 1 else varint(payload)
        )
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def kv(key: str, value: bytes) -> bytes:
    return field(1, key.encode()) + field(2, value)


def request_with(span_fields: bytes, resource: bytes = b"", scope: bytes = b"") -> bytes:
    resource_spans = field(1, resource) + field(2, field(1, scope) + field(2, span_fields))
    return field(1, resource_spans)


def ids(parent: bytes = PARENT_ID) -> bytes:
    return field(1, TRACE_ID) + field(2, SPAN_ID) + (field(4, parent) if parent else b"")


# --- the tests ---------------------------------------------------------------------


def golden_payloads() -> list[Path]:
    return sorted(p for p in GOLDEN.rglob("*.pb") if not p.name.endswith(".logs.pb"))


@pytest.mark.parametrize(
    "path", golden_payloads(), ids=lambda p: str(p.relative_to(GOLDEN).with_suffix(""))
)
def test_golden_traces_decode_identically_without_fallback(path: Path) -> None:
    for payload in read_payloads(path):
        for selector in SELECTORS.values():
            assert walker_handles(payload.data, selector)
            assert_same(payload.data, selector)


def test_agent_batches_decode_identically() -> None:
    # The shape of shared/bench/make_traces.py batches: GenAI spans with JSON
    # arguments, results and messages; two scopes; failing tools with an event.
    rng = random.Random(7)
    for data in agent_batches(rng, traces=40):
        for selector in SELECTORS.values():
            assert walker_handles(data, selector)
            assert assert_same(data, selector).spans


def agent_batches(rng: random.Random, traces: int) -> list[bytes]:
    def value(v: object) -> AnyValue:
        if isinstance(v, bool):
            return AnyValue(bool_value=v)
        if isinstance(v, int):
            return AnyValue(int_value=v)
        if isinstance(v, float):
            return AnyValue(double_value=v)
        return AnyValue(string_value=str(v))

    def span(trace_id: bytes, parent: bytes, name: str, **attributes: object) -> PbSpan:
        out = PbSpan(
            trace_id=trace_id,
            span_id=rng.randbytes(8),
            parent_span_id=parent,
            name=name,
            kind=rng.choice((1, 3)),
            start_time_unix_nano=rng.getrandbits(62),
            end_time_unix_nano=rng.getrandbits(62),
        )
        out.attributes.extend(
            KeyValue(key=k.replace("__", "."), value=value(v)) for k, v in attributes.items()
        )
        return out

    agent_spans, llm_spans = [], []
    for _ in range(traces):
        trace_id, root = rng.randbytes(16), rng.randbytes(8)
        for _ in range(4):
            calls = [{"type": "tool_call", "id": f"call_{rng.getrandbits(32)}", "name": "t"}]
            llm_spans.append(
                span(
                    trace_id,
                    root,
                    "chat m",
                    gen_ai__operation__name="chat",
                    gen_ai__request__temperature=0.2,
                    gen_ai__usage__input_tokens=rng.randrange(4000),
                    gen_ai__output__messages=json.dumps([{"parts": calls}]),
                )
            )
        for _ in range(5):
            tool = span(
                trace_id,
                root,
                "execute_tool t",
                gen_ai__operation__name="execute_tool",
                gen_ai__tool__name="t",
                gen_ai__tool__call__arguments='{"q": "é ✓"}',
                gen_ai__tool__call__result=json.dumps({"items": list(range(50))}),
            )
            if rng.random() < 0.2:
                tool.status.code, tool.status.message = 2, "boom"
                tool.events.add(name="exception", time_unix_nano=1).attributes.append(
                    KeyValue(key="exception.type", value=AnyValue(string_value="ValueError"))
                )
            agent_spans.append(tool)
        root_span = span(trace_id, b"", "invoke_agent a", gen_ai__agent__name="a")
        root_span.span_id = root
        agent_spans.append(root_span)
    batches = []
    for start in range(0, len(agent_spans), 64):  # traces straddle requests, as in the SDK
        resource_spans = ResourceSpans(
            scope_spans=[
                ScopeSpans(spans=agent_spans[start : start + 64]),
                ScopeSpans(spans=llm_spans[start : start + 51]),
            ]
        )
        resource_spans.scope_spans[0].scope.name = "agent"
        resource_spans.scope_spans[1].scope.name = "openai"
        resource_spans.resource.attributes.append(
            KeyValue(key="service.name", value=AnyValue(string_value="svc"))
        )
        batches.append(
            ExportTraceServiceRequest(resource_spans=[resource_spans]).SerializeToString()
        )
    return batches


def every_value_kind() -> ExportTraceServiceRequest:
    nested = AnyValue(
        kvlist_value=KeyValueList(
            values=[
                KeyValue(key="inner", value=AnyValue(int_value=-5)),
                KeyValue(key="none"),
                KeyValue(key="long", value=AnyValue(string_value="é" * 10)),
            ]
        )
    )
    values = {
        "s": AnyValue(string_value="päyload ✓"),
        "empty": AnyValue(string_value=""),
        "unset": AnyValue(),
        "b": AnyValue(bool_value=True),
        "f": AnyValue(bool_value=False),
        "i": AnyValue(int_value=-(2**63)),
        "big": AnyValue(int_value=2**63 - 1),
        "d": AnyValue(double_value=-0.0),
        "nan": AnyValue(double_value=float("inf")),
        "raw": AnyValue(bytes_value=b"\x00\xff"),
        "arr": AnyValue(
            array_value=ArrayValue(values=[AnyValue(string_value="abcdef"), nested, AnyValue()])
        ),
        "kvl": nested,
        "strindex": AnyValue(string_value_strindex=3),
        "gen_ai.tool.name": AnyValue(string_value="lookup"),
    }
    span = PbSpan(
        trace_id=TRACE_ID,
        span_id=SPAN_ID,
        parent_span_id=PARENT_ID,
        name="näme",
        kind=3,
        start_time_unix_nano=2**64 - 1,
        end_time_unix_nano=1,
        status=Status(code=2, message="boom ✗"),
        flags=0x100,
        trace_state="k=v",
        dropped_attributes_count=4,
    )
    span.attributes.extend(KeyValue(key=k, value=v) for k, v in values.items())
    span.attributes.append(KeyValue(key="s", value=AnyValue(string_value="duplicate wins")))
    event = span.events.add(time_unix_nano=7, name="exception")
    event.attributes.append(KeyValue(key="exception.message", value=AnyValue(string_value="x")))
    span.events.add(name="second")
    link = span.links.add(trace_id=TRACE_ID, span_id=SPAN_ID)
    link.attributes.append(KeyValue(key="ignored", value=AnyValue(int_value=1)))
    root = PbSpan(trace_id=TRACE_ID, span_id=PARENT_ID, name="root")
    root.attributes.extend(KeyValue(key=k, value=v) for k, v in values.items())
    resource_spans = ResourceSpans(
        scope_spans=[ScopeSpans(spans=[span, root], schema_url="u")], schema_url="r"
    )
    resource_spans.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value="svc"))
    )
    resource_spans.scope_spans[0].scope.name = "scope"
    resource_spans.scope_spans[0].scope.version = "1"
    bare = ResourceSpans(scope_spans=[ScopeSpans(spans=[root])])  # no resource, no scope
    return ExportTraceServiceRequest(resource_spans=[resource_spans, bare])


@pytest.mark.parametrize("selector", SELECTORS.values(), ids=SELECTORS.keys())
def test_every_value_kind_and_span_field(selector: AttributeSelector) -> None:
    data = every_value_kind().SerializeToString()
    assert walker_handles(data, selector)
    batch = assert_same(data, selector)
    assert len(batch.spans) == 3
    if selector.max_value_size == 3:
        assert batch.truncated_values > 0


def test_rejected_spans_and_the_keep_filter() -> None:
    good = PbSpan(trace_id=TRACE_ID, span_id=SPAN_ID)
    other_trace = PbSpan(trace_id=bytes(range(2, 18)), span_id=SPAN_ID)
    bad = [
        PbSpan(span_id=SPAN_ID),
        PbSpan(trace_id=bytes(16), span_id=SPAN_ID),
        PbSpan(trace_id=TRACE_ID),
        PbSpan(trace_id=TRACE_ID, span_id=bytes(8)),
        PbSpan(trace_id=TRACE_ID, span_id=SPAN_ID, parent_span_id=b"\x01"),
        PbSpan(trace_id=TRACE_ID[:8], span_id=SPAN_ID),
    ]
    data = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[*bad, good, other_trace])])]
    ).SerializeToString()
    batch = assert_same(data)
    assert (len(batch.spans), batch.rejected) == (2, 6)
    assert batch.message == "span with an empty or invalid trace_id"

    def keep(trace_id: bytes) -> bool:
        return trace_id == TRACE_ID

    kept = decode_protobuf(data, keep=keep)
    assert same(kept, upb_walk(data, KEEP_ALL, keep))
    assert [span.trace_id for span in kept.spans] == [TRACE_ID]


def test_fields_in_any_order_on_the_wire() -> None:
    # Resource after its scopes, scope after its spans, parent id after attributes.
    span = field(9, kv("gen_ai.tool.name", field(1, b"t"))) + field(5, b"n") + ids()
    scope_spans = field(2, span) + field(1, field(1, b"scope"))
    resource = field(1, kv("service.name", field(1, b"svc")))
    data = field(1, field(2, scope_spans) + field(1, resource))
    assert walker_handles(data, ATTRIBUTE_SELECTOR)
    (decoded,) = assert_same(data, ATTRIBUTE_SELECTOR).spans
    assert (decoded.scope_name, decoded.resource.service_name) == ("scope", "svc")
    assert decoded.attributes == {"gen_ai.tool.name": "t"}


def test_unknown_fields_of_every_wire_type_are_skipped() -> None:
    unknown = field(99, 5) + field(98, 2**64 - 1, 1) + field(97, b"x")
    fixed32 = varint(95 << 3 | 5) + struct.pack("<I", 3)
    value = field(1, b"v") + unknown + fixed32
    data = request_with(ids() + unknown + fixed32 + field(9, kv("k", value) + unknown))
    assert walker_handles(data)
    assert assert_same(data).spans[0].attributes == {"k": "v"}


@pytest.mark.parametrize(
    "shape",
    [
        # protobuf merges a singular message given twice: left to upb
        "duplicate_status",
        "duplicate_kvlist",
        "duplicate_value",
        # a known field with an unexpected wire type is an unknown field to upb
        "name_as_varint",
        "kind_as_bytes",
        # groups (wire types 3/4) in an unknown field
        "group",
    ],
)
def test_shapes_left_to_upb_still_decode_identically(shape: str) -> None:
    status = field(15, field(3, 2)) + field(15, field(2, b"merged"))
    kvlist = field(6, field(1, kv("a", field(3, 1)))) + field(6, field(1, kv("b", field(3, 2))))
    value_twice = field(1, b"k") + field(2, field(1, b"first")) + field(2, field(3, 7))
    shapes = {
        "duplicate_status": request_with(ids() + status),
        "duplicate_kvlist": request_with(ids() + field(9, kv("k", kvlist))),
        "duplicate_value": request_with(ids() + field(9, value_twice)),
        "name_as_varint": request_with(ids() + field(5, 3, 0)),
        "kind_as_bytes": request_with(ids() + field(6, b"\x01")),
        "group": request_with(ids() + varint(50 << 3 | 3) + field(1, 1) + varint(50 << 3 | 4)),
    }
    data = shapes[shape]
    assert not walker_handles(data)
    assert assert_same(data).spans


def test_a_replaced_oneof_member_is_neither_built_nor_counted() -> None:
    # Last member wins: a long string (or an array of long strings) replaced by an
    # int must not count as a truncated value (found by review: it did).
    short = AttributeSelector(["k"], [], max_value_size=3)
    array = field(5, field(1, field(1, b"abcdefgh")))
    for value in (field(1, b"abcdefgh") + field(3, 5), array + field(3, 5)):
        data = request_with(ids(parent=b"") + field(9, kv("k", value)))
        batch = assert_same(data, short)
        assert (batch.spans[0].attributes, batch.truncated_values) == ({"k": 5}, 0)


def test_an_unbounded_value_size_is_accepted() -> None:
    data = every_value_kind().SerializeToString()
    assert assert_same(data, AttributeSelector(None, None, max_value_size=2**80)).spans


def test_a_payload_upb_refuses_is_refused() -> None:
    with pytest.raises(DecodeError, match="not a valid ExportTraceServiceRequest"):
        decode_protobuf(request_with(ids() + field(5, b"\xff\xfe")))  # invalid UTF-8 in name
    with pytest.raises(DecodeError):
        decode_protobuf(field(1, b"\x0a\x05ab"))  # length past the end


def test_fuzzed_payloads_decode_identically_or_are_refused_by_both() -> None:
    rng = random.Random(20261121)
    seeds = [every_value_kind().SerializeToString()]
    seeds += [p.data for path in golden_payloads()[:8] for p in read_payloads(path)]
    checked = refused = 0
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            where = rng.randrange(len(data))
            match rng.randrange(4):
                case 0:
                    data[where] = rng.randrange(256)
                case 1:
                    del data[where : where + rng.randint(1, 8)]
                case 2:
                    data[where:where] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
                case _:
                    data[where] ^= 1 << rng.randrange(8)
        payload = bytes(data)
        for selector in (KEEP_ALL, ATTRIBUTE_SELECTOR):
            try:
                reference = upb_walk(payload, selector)
            except Exception:  # upb refuses it: so must decode_protobuf, and the walker
                with pytest.raises(DecodeError):  # must not read it (it validates alone)
                    decode_protobuf(payload, selector)
                assert not walker_handles(payload, selector)
                refused += 1
                continue
            assert same(decode_protobuf(payload, selector), reference)
            checked += 1
    assert checked > 500 and refused > 500  # the fuzzing exercised both outcomes


# --- the attribute-key cache ------------------------------------------------------


def key_slot(key: bytes) -> int:
    """The walker's slot for ``key`` (its hash, eight bytes at a time; 4096 slots)."""
    mask = 2**64 - 1
    h = 14695981039346656037 ^ len(key)
    for start in range(0, len(key), 8):
        h = ((h ^ int.from_bytes(key[start : start + 8], "little")) * 0x9E3779B97F4A7C15) & mask
        h ^= h >> 29
    h ^= h >> 32
    return h & 4095


def colliding_keys() -> tuple[str, str]:
    """Two different attribute keys that share a slot."""
    seen: dict[int, str] = {}
    for n in range(100_000):
        key = f"gen_ai.x{n:06d}"  # one length: only the bytes tell them apart
        slot = key_slot(key.encode())
        if slot in seen:
            return seen[slot], key
        seen[slot] = key
    raise AssertionError("no collision found")


def span_with_keys(*keys: str) -> bytes:
    attributes = b"".join(field(9, kv(key, field(1, key.upper().encode()))) for key in keys)
    return request_with(ids() + field(5, b"s") + attributes)


def test_cached_keys_follow_each_selector() -> None:
    # One key, cached with one selector's verdict, asked by others alternately.
    data = span_with_keys("gen_ai.tool.name", "custom.key", "gen_ai.tool.name.extra")
    narrow = AttributeSelector(["gen_ai.tool.name"])
    wide = AttributeSelector(["custom.key"], ["gen_ai."])
    for _ in range(3):
        for selector, kept in (
            (narrow, {"gen_ai.tool.name"}),
            (wide, {"gen_ai.tool.name", "custom.key", "gen_ai.tool.name.extra"}),
            (ATTRIBUTE_SELECTOR, {"gen_ai.tool.name"}),
            (KEEP_ALL, {"gen_ai.tool.name", "custom.key", "gen_ai.tool.name.extra"}),
        ):
            (span,) = assert_same(data, selector).spans
            assert set(span.attributes) == kept


def test_keys_sharing_a_slot_alternate_correctly() -> None:
    first, second = colliding_keys()
    selector = AttributeSelector([first])
    for _ in range(3):
        for key in (first, second):
            (span,) = assert_same(span_with_keys(key), selector).spans
            assert dict(span.attributes) == ({key: key.upper()} if key == first else {})


@pytest.mark.parametrize(
    "key", ["ключ.name", "gen_ai." + "x" * 200, "", "gen_ai.tool.name\x00"], ids=repr
)
def test_uncached_and_odd_keys_decode_the_same(key: str) -> None:
    for selector in (*SELECTORS.values(), AttributeSelector([key])):
        for _ in range(2):
            assert_same(span_with_keys(key, "gen_ai.tool.name"), selector)


def test_the_walker_builds_records_in_their_field_order() -> None:
    """The compiled walker builds records by position; these are its orders."""
    from collector.core.records import Resource, Span, SpanEvent
    from collector.decode import _wire

    assert Span._fields == _wire.SPAN_FIELDS
    assert SpanEvent._fields == _wire.EVENT_FIELDS
    assert Resource._fields == _wire.RESOURCE_FIELDS


def test_held_spans_share_short_texts_and_their_trace_id() -> None:
    """Spans held in assembly share one object per short text and per trace id (memory
    per span); long and non-ASCII texts are their own."""
    long_text = "x" * 200
    spans = [
        PbSpan(
            trace_id=TRACE_ID,
            span_id=bytes([n]) * 8,
            name="chat gpt-4o",
            attributes=[
                KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="chat")),
                KeyValue(key="long", value=AnyValue(string_value=long_text)),
                KeyValue(key="utf8", value=AnyValue(string_value="café")),
            ],
        )
        for n in (1, 2)
    ]
    data = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
    ).SerializeToString()
    first, second = assert_same(data).spans
    again = decode_protobuf(data).spans[0]  # another request: the table outlives it
    assert first.trace_id is second.trace_id
    assert first.name is second.name is again.name
    op = "gen_ai.operation.name"
    assert first.attributes[op] is second.attributes[op] is again.attributes[op]
    assert first.attributes["long"] == long_text
    assert first.attributes["long"] is not second.attributes["long"]
    assert first.attributes["utf8"] == "café"


# --- validation: the walker refuses alone what upb refuses ----------------------------


@pytest.mark.parametrize(
    ("name", "payload"),
    [
        ("not UTF-8 in a value the selector skips", b"\xff\xfe"),
        ("an overlong encoding", b"\xc0\xaf"),
        ("a surrogate", b"\xed\xa0\x80"),
        ("past U+10FFFF", b"\xf4\x90\x80\x80"),
        ("a truncated sequence", b"ab\xe2\x82"),
    ],
)
def test_strings_that_are_not_utf8_are_refused_read_or_not(name: str, payload: bytes) -> None:
    unread = kv("not.read.by.anyone", field(1, payload))
    data = request_with(ids() + field(5, b"s") + field(9, unread))
    with pytest.raises(ProtobufDecodeError):
        ExportTraceServiceRequest.FromString(data)
    assert not walker_handles(data, ATTRIBUTE_SELECTOR)
    with pytest.raises(DecodeError):
        decode_protobuf(data, ATTRIBUTE_SELECTOR)


def test_valid_utf8_of_every_length_is_read() -> None:
    text = "aé€😀" * 3
    data = request_with(ids() + field(5, text.encode()) + field(9, kv("k", field(1, b"x"))))
    assert walker_handles(data)
    assert assert_same(data).spans[0].name == text


def test_a_field_number_zero_and_a_tag_past_32_bits_are_left_to_upb() -> None:
    zero = request_with(ids() + b"\x00\x01")  # field 0, varint
    huge = request_with(ids() + b"\x80\x80\x80\x80\x80\x01\x01")  # a tag of 2**35
    for data in (zero, huge):
        assert not walker_handles(data)
        with pytest.raises(DecodeError):
            decode_protobuf(data)
