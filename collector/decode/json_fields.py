"""Field checks of the fast OTLP/JSON walker: each returns the value or raises ``Unsure``.

Every check accepts only what protobuf's JSON parser (``json_format``) accepts for
that field type and reads it the same way; anything else raises ``Unsure``, and
the document goes to the reference path (``collector.decode.proto3_json``), which
accepts it or refuses it naming the field. Values come from msgspec, so strings
are valid Unicode and numbers finite; ``bool`` is not an ``int`` here.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from google.protobuf.message import Message
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2

_UINT32_MAX = 2**32 - 1
_UINT64_MAX = 2**64 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_SPECIAL_DOUBLES = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_EMPTY: Mapping[str, Any] = {}


class Unsure(Exception):
    """The fast walker does not vouch for this document; the reference path decides."""


def unsure() -> NoReturn:
    raise Unsure


class Shape:
    """The fields of one message: those the walker reads itself (``common``), those
    only checked (``rest``: name → check); other known fields make it ``Unsure``."""

    def __init__(
        self,
        message: type[Message],
        common: set[str],
        rest: Mapping[str, Callable[[Any], object]] | None = None,
    ) -> None:
        self.common = frozenset(common)
        self.rest = dict(rest or {})
        self.known = frozenset(field.json_name for field in message.DESCRIPTOR.fields)

    def check(self, raw: Mapping[str, Any]) -> None:
        """Check the fields of ``raw`` beyond ``common``; unknown names are ignored."""
        if self.common.issuperset(raw):
            return
        for key in raw.keys() - self.common:
            check = self.rest.get(key)
            if check is not None:
                check(raw[key])
            elif key in self.known:
                raise Unsure


def empty_list(value: Any) -> None:
    if value is not None and value != []:
        raise Unsure


def message(value: Any) -> Mapping[str, Any]:
    """A message field: an object, or null for the default."""
    if type(value) is dict:
        return value
    if value is None:
        return _EMPTY
    raise Unsure


def messages(value: Any) -> list[dict[str, Any]]:
    """A repeated message field: a list of objects (no nulls), or null for none."""
    if type(value) is list:
        for item in value:
            if type(item) is not dict:
                raise Unsure
        return value
    if value is None:
        return []
    raise Unsure


def text(value: Any) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise Unsure


def uint32(value: Any) -> int:
    return _integer(value, 0, _UINT32_MAX)


def uint64(value: Any) -> int:
    return _integer(value, 0, _UINT64_MAX)


def int64(value: Any) -> int:
    return _integer(value, _INT64_MIN, _INT64_MAX)


def _integer(value: Any, low: int, high: int) -> int:
    """A JSON integer, or a string of decimal digits (``-`` allowed when ``low < 0``)."""
    if type(value) is int:
        number = value
    elif type(value) is str:
        digits = value[1:] if value[:1] == "-" and low < 0 else value
        if not (digits.isascii() and digits.isdigit()):
            raise Unsure
        number = int(value)
    elif value is None:
        return 0
    else:
        raise Unsure  # floats (1.0 is an integer to json_format), booleans, the rest
    if low <= number <= high:
        return number
    raise Unsure


def enum(value: Any, names: Mapping[str, int]) -> int:
    """An enum: an int32 (open enums keep unknown numbers) or one of its ``names``."""
    if type(value) is int and _INT32_MIN <= value <= _INT32_MAX:
        return value
    if value is None:
        return 0
    if type(value) is str and value in names:
        return names[value]
    raise Unsure


def boolean(value: Any) -> bool:
    if type(value) is bool:
        return value
    raise Unsure


def double(value: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)  # OverflowError past 1e308: the caller's Unsure
    if type(value) is str and value in _SPECIAL_DOUBLES:
        return _SPECIAL_DOUBLES[value]
    raise Unsure


def base64_bytes(value: Any) -> bytes:
    """Standard padded base64 only; json_format's other spellings take the slow path."""
    if type(value) is str:
        return base64.b64decode(value, validate=True)  # binascii.Error: Unsure
    raise Unsure


def hex_id(value: Any, size: int) -> bytes:
    """An OTLP/JSON id of ``size`` bytes; absent or "" is b"" (a span rejected later)."""
    if value is None or value == "":
        return b""
    if type(value) is str and len(value) == 2 * size and value.isascii():
        raw = bytes.fromhex(value)  # ValueError: Unsure
        if len(raw) == size:  # fromhex skips spaces
            return raw
    raise Unsure


_ANY_READ = frozenset(
    {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue",
     "bytesValue"}
)  # fmt: skip
ANY_KNOWN = frozenset(field.json_name for field in common_pb2.AnyValue.DESCRIPTOR.fields)


def one_member(raw: Any) -> tuple[str | None, Any]:
    """The member of an ``AnyValue`` object and its value; (None, None) when empty.

    ``Unsure`` for two members, a null member, or a member the walker does not read.
    """
    if type(raw) is not dict:
        if raw is None:
            return None, None
        raise Unsure
    found: tuple[str | None, Any] = (None, None)
    for key, item in raw.items():
        if key in ANY_KNOWN:
            if found[0] is not None or item is None or key not in _ANY_READ:
                raise Unsure
            found = (key, item)
    return found


def is_plain_string(raw: Any) -> bool:
    """``{"stringValue": "…"}``: an attribute value valid without reading it further."""
    return type(raw) is dict and len(raw) == 1 and type(raw.get("stringValue")) is str


RESOURCE = Shape(
    resource_pb2.Resource,
    {"attributes"},
    {"droppedAttributesCount": uint32, "entityRefs": empty_list},
)
SCOPE = Shape(
    common_pb2.InstrumentationScope,
    {"name", "attributes"},
    {"version": text, "droppedAttributesCount": uint32},
)
