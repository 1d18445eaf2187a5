"""The reference reading of OTLP/JSON: protobuf's own JSON parser decides.

OTLP/JSON is the proto3 JSON mapping with three deviations (the OTLP
specification, "JSON Protobuf Encoding"): trace and span ids are hex, not base64;
only lowerCamelCase keys are field names (the proto names, ``trace_id``, are unknown
fields); unknown fields are ignored. ``parse_message`` applies the deviations to a
parsed document (in place), then lets ``google.protobuf.json_format`` judge the
rest: what it accepts is accepted, what it refuses is a ``DecodeError`` naming the
field. This is the slow path of ``collector.decode.otlp_json`` (documents its fast
walker is not sure of) and the oracle its fuzz test compares it with
(docs/adr/0016-hardening.md).

Where json_format is lenient by accident of its Python implementation (a string
where a message belongs reads as an empty message), so are we: one judge.
"""

from __future__ import annotations

import base64
import functools
import re
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from collector.decode.common import DecodeError

M = TypeVar("M", bound=Message)

# json_format's own limit (``max_recursion_depth``): past it, it refuses anyway.
MAX_DEPTH = 100
# OTLP/JSON: "traceId and spanId … are represented as case-insensitive hex-encoded
# strings" (also parentSpanId, and the ids of links and log records).
_HEX_ID_SIZES = {"trace_id": 16, "span_id": 8, "parent_span_id": 8}
_PATH = re.compile(r' at "?[A-Za-z]+\.([^" ]+?)"?\.*$')
_FIELD = re.compile(r"Failed to parse (\w+) field: ")
_MAX_PATH = 160


def parse_message(document: dict[str, Any], message_class: type[M]) -> M:
    """``document`` (parsed OTLP/JSON) as a ``message_class``; ``DecodeError`` naming
    the field when protobuf's JSON mapping refuses it. ``document`` is changed."""
    _to_proto3(document, message_class.DESCRIPTOR, "", 1)
    message = message_class()
    try:
        json_format.ParseDict(document, message, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise DecodeError(explain(str(exc), document, message_class)) from None
    except Exception as exc:
        # ParseDict lets some odd values escape (a lone surrogate or Infinity as an
        # enum: SystemError, OverflowError); json_format.Parse, its text form, turns
        # every exception into a ParseError: so do we.
        raise DecodeError(f"invalid value ({type(exc).__name__}: {exc})") from None
    return message


def explain(error: str, document: Any, message_class: type[Message]) -> str:
    """``path.to.field: reason`` from json_format's nested ``Failed to parse …`` text.

    When the text names the fields but not the list indices, the first element of
    each list that json_format refuses on its own is looked up (errors only).
    """
    text = error.rstrip(".")
    found = _PATH.search(text)
    if found:
        path, text = found.group(1), text[: found.start()]
    else:
        path = _locate(document, message_class.DESCRIPTOR, _FIELD.findall(text))
    reason = _FIELD.split(text)[-1].rstrip(".")
    if len(path) > _MAX_PATH:
        path = f"{path[: _MAX_PATH // 2]}…{path[-_MAX_PATH // 2 :]}"
    return f"{path}: {reason}"


def _to_proto3(value: Any, descriptor: Any, path: str, depth: int) -> None:
    """Drop proto-named keys, turn hex ids into base64, for the messages in ``value``
    (``descriptor``: its message type's ``Descriptor``, typed loosely as upb's is)."""
    if not isinstance(value, dict) or depth > MAX_DEPTH:
        return  # not a message: json_format judges it as it is
    by_json = json_names(descriptor)
    for name in list(value):
        field = by_json.get(name)
        if field is None:
            # Unknown in OTLP/JSON, proto (snake_case) names included: ignored. Removed
            # rather than left to json_format, which looks each up and crashes
            # (SystemError) on a name with a lone surrogate.
            del value[name]
            continue
        _convert_field(value, name, field, f"{path}.{name}" if path else name, depth)


@functools.cache
def json_names(descriptor: Any) -> dict[str, FieldDescriptor]:
    """A message's fields by JSON name (upb's ``fields_by_camelcase_name.get`` also
    finds ``trace_id``, which OTLP/JSON must ignore)."""
    return {field.json_name: field for field in descriptor.fields}


def _convert_field(
    message: dict[str, Any], name: str, field: FieldDescriptor, path: str, depth: int
) -> None:
    item = message[name]
    if field.type == FieldDescriptor.TYPE_BYTES and field.name in _HEX_ID_SIZES:
        if isinstance(item, str):
            message[name] = _hex_to_base64(item, _HEX_ID_SIZES[field.name], path)
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        if not _is_repeated(field):
            message[name] = _as_message(item)
            _to_proto3(message[name], field.message_type, path, depth + 1)
        elif isinstance(item, list):
            for index, element in enumerate(item):
                item[index] = _as_message(element)
                _to_proto3(item[index], field.message_type, f"{path}[{index}]", depth + 1)


def _as_message(value: Any) -> Any:
    """json_format reads a string (or a list of strings) where a message belongs as
    its characters' field names, none of which exists: an empty message. Given as
    such, so that json_format never looks the characters up (a lone surrogate among
    them crashes it)."""
    if isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        return {}
    return value


def _is_repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


def _hex_to_base64(text: str, size: int, path: str) -> str:
    """An OTLP/JSON id as proto3 JSON bytes; "" stays empty (a span without the id)."""
    if not text:
        return text
    try:
        raw = bytes.fromhex(text) if text.isascii() else b""
    except ValueError:
        raw = b""
    if len(raw) != size or len(text) != size * 2:
        raise DecodeError(
            f"{path}: {text[:48]!r} is not {size * 2} hex digits "
            "(OTLP/JSON encodes ids as hex, not base64)"
        )
    return base64.b64encode(raw).decode("ascii")


def _locate(document: Any, descriptor: Any, chain: list[str]) -> str:
    """The path of ``chain`` (field names) in ``document``, with list indices."""
    parts: list[str] = []
    value = document
    for name in chain:
        field = json_names(descriptor).get(name)
        if field is None or not isinstance(value, dict):
            break
        parts.append(name)
        value = value.get(name)
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            break
        descriptor = field.message_type
        if _is_repeated(field) and isinstance(value, list):
            index = _first_refused(value, GetMessageClass(descriptor))
            if index is None:
                break
            parts[-1] += f"[{index}]"
            value = value[index]
    return ".".join(parts) or "(document)"


def _first_refused(items: list[Any], message_class: type[Message]) -> int | None:
    for index, item in enumerate(items):
        try:
            json_format.ParseDict(item, message_class(), ignore_unknown_fields=True)
        except (json_format.ParseError, AttributeError, TypeError):
            return index
    return None
