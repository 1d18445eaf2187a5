"""OTLP/JSON documents for fuzzing, generated from a message's protobuf descriptor.

Mostly well-formed (so the decoder's deep paths are reached), with, here and there,
the classes of wrong input a hostile or broken client sends: wrong types, nulls,
negative, fractional, huge and non-finite numbers, ``"false"`` for false, lone
surrogates (escaped, or raw: invalid UTF-8), ids of the wrong length or in base64,
proto (snake_case) names, unknown fields, two oneof members, deep nesting.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

_ID_SIZES = {"trace_id": 16, "span_id": 8, "parent_span_id": 8}
_STRINGS = ("", "invoke_agent support", "execute_tool lookup", "gen_ai.tool.name",
            "service.name", "chat", "é€😀", "x" * 300, "\u2028", "a\u0000b")  # fmt: skip
_JUNK: tuple[Any, ...] = (
    None, True, False, 0, -1, 1.5, 2**64, -(2**63) - 1, 10**30, 1e300, float("nan"),
    float("inf"), "", "abc", "false", "1e3", "1.0", " 12", "-0", "NaN", "Infinity",
    "x\ud800", "\udfffy", [], [None], {}, {"stringValue": 1}, ["a"],
)  # fmt: skip
_UNSIGNED = frozenset({FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64,
                       FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_FIXED64})  # fmt: skip
_WIDE = frozenset({FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64,
                   FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SINT64})  # fmt: skip
_ANY_MEMBERS = ("stringValue", "stringValue", "intValue", "boolValue", "doubleValue",
                "arrayValue", "kvlistValue", "bytesValue")  # fmt: skip


class _Generator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.wrong = rng.choice((0.0, 0.0, 0.01, 0.05))  # how often a value is junk
        self.budget = rng.randint(20, 400)  # values per document, roughly

    def message(self, descriptor: Any, depth: int) -> dict[str, Any]:
        rng = self.rng
        if descriptor.full_name == "opentelemetry.proto.common.v1.AnyValue":
            return self.any_value(descriptor, depth)
        out: dict[str, Any] = {}
        for field in descriptor.fields:
            if rng.random() < 0.35 or self.budget <= 0:
                continue
            self.budget -= 1
            out[field.json_name] = self.field(field, depth)
            if rng.random() < 0.02:
                out[field.name] = self.field(field, depth)  # its proto name: unknown in OTLP
        if rng.random() < 0.03:
            out["someUnknownField"] = self.junk()
        return out

    def any_value(self, descriptor: Any, depth: int) -> dict[str, Any]:
        rng = self.rng
        members = [rng.choice(_ANY_MEMBERS)]
        if rng.random() < 0.02:
            members.append(rng.choice(_ANY_MEMBERS))  # two members of the oneof
        if depth > 12 and rng.random() < 0.9:
            members = ["intValue"]
        out = {}
        for member in members:
            field = descriptor.fields_by_camelcase_name[member]
            out[member] = self.field(field, depth)
        if rng.random() < 0.005:
            out = self.deep(rng.choice((40, 60, 120)))
        return out

    def deep(self, levels: int) -> dict[str, Any]:
        value: dict[str, Any] = {"intValue": "1"}
        for _ in range(levels):
            value = {"arrayValue": {"values": [value]}}
        return value

    def field(self, field: FieldDescriptor, depth: int) -> Any:
        if self.rng.random() < self.wrong:
            return self.junk()
        if field.is_repeated:
            count = self.rng.choice((0, 1, 1, 2, 3, 5))
            return [self.single(field, depth) for _ in range(count)]
        return self.single(field, depth)

    def single(self, field: FieldDescriptor, depth: int) -> Any:
        rng = self.rng
        kind = field.type
        if kind == FieldDescriptor.TYPE_MESSAGE:
            return self.message(field.message_type, depth + 1)
        if kind == FieldDescriptor.TYPE_STRING:
            return rng.choice(_STRINGS)
        if kind == FieldDescriptor.TYPE_BOOL:
            return rng.random() < 0.5
        if kind == FieldDescriptor.TYPE_ENUM:
            values = field.enum_type.values
            return rng.choice((rng.choice(values).number, rng.choice(values).name, 7))
        if kind == FieldDescriptor.TYPE_BYTES:
            return self.bytes_value(field)
        if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return rng.choice((0.5, -3.25, 1e10, 7, "NaN", "-Infinity"))
        return self.integer(field)

    def integer(self, field: FieldDescriptor) -> Any:
        rng = self.rng
        unsigned = field.type in _UNSIGNED
        wide = field.type in _WIDE
        top = 2**64 - 1 if wide and unsigned else 2**63 - 1 if wide else 2**31 - 1
        number = rng.choice((0, 1, 1_700_000_000_000_000_000 % top, top, rng.randrange(top)))
        if not unsigned and rng.random() < 0.3:
            number = -number
        return str(number) if wide and rng.random() < 0.5 else number

    def bytes_value(self, field: FieldDescriptor) -> Any:
        rng = self.rng
        size = _ID_SIZES.get(field.name)
        if size is None:
            return base64.b64encode(rng.randbytes(rng.randrange(6))).decode()
        raw = rng.randbytes(size)
        match rng.randrange(12):
            case 0:
                return base64.b64encode(raw).decode()  # base64, not hex
            case 1:
                return raw.hex()[:-2]  # one byte short
            case 2:
                return ""
            case 3:
                return "00" * size  # all zero: the span is rejected alone
            case _:
                return raw.hex().upper() if rng.random() < 0.2 else raw.hex()

    def junk(self) -> Any:
        return self.rng.choice(_JUNK)


def json_document(message_class: type[Message], rng: random.Random) -> bytes:
    """One OTLP/JSON document of ``message_class`` as request body bytes."""
    generator = _Generator(rng)
    document: Any = generator.message(message_class.DESCRIPTOR, 1)
    if rng.random() < 0.01:
        document = rng.choice(([document], "text", None, 5))  # not an object at all
    text = json.dumps(document, ensure_ascii=rng.random() < 0.6, indent=rng.choice((None, 1)))
    # Raw lone surrogates (ensure_ascii off) become invalid UTF-8 here.
    return text.encode("utf-8", "surrogatepass")
