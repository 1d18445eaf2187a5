"""Defensive readers for attribute values: instrumentations put anything anywhere.

Every reader returns ``None`` (or the input unchanged) instead of raising: a span
with a wrong type or a broken JSON string must cost its own detail, never the
trajectory (the normalizer has no catch-all; it is robust by construction).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from typing import Any, Final

import msgspec

from collector.core.records import AttrValue, Span

INVALID: Final = object()
"""Returned by ``parse_json`` when the text is not JSON (distinct from JSON ``null``)."""

# First characters a JSON document can start with. Checking them first avoids
# paying for an exception on the common plain-text case ("Comfortably Numb").
_JSON_START: Final = frozenset('{["-0123456789tfnNI')
# Where msgspec is tried first: strict JSON without leading whitespace. NaN, Infinity
# and leading (Python) whitespace go straight to the standard library.
_STRICT_START: Final = frozenset('{["-0123456789tfn')
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set in JSONDecoder.__init__, missing from typeshed
_decode: Callable[[str], Any] = msgspec.json.Decoder().decode
# ast.literal_eval builds a full syntax tree; beyond this size a repr is not worth it.
_MAX_LITERAL_CHARS: Final = 64 * 1024
_MAX_DEPTH: Final = 32


# The keys a user picks for a session in a free-form metadata namespace (LangSmith
# metadata, Traceloop association properties, AI SDK telemetry metadata / runtime
# context): the same names, whichever namespace holds them, in this precedence.
SESSION_LEAVES: Final = (
    "session_id",
    "sessionId",
    "thread_id",
    "threadId",
    "conversation_id",
    "conversationId",
)


def session_keys(*namespaces: str) -> tuple[str, ...]:
    """Every ``<namespace><leaf>`` of ``SESSION_LEAVES``, namespace by namespace."""
    return tuple(namespace + leaf for namespace in namespaces for leaf in SESSION_LEAVES)


def quoted_text(value: AttrValue) -> str | None:
    """A string attribute as text, JSON-decoded when it is a JSON string (Langfuse and
    MLflow encode every value: ``"\\"model\\""``); None for anything else."""
    if not isinstance(value, str) or not value:
        return None
    if value[0] != '"':
        return value
    parsed = parse_json(value)
    return parsed if isinstance(parsed, str) and parsed else None


def text(value: AttrValue) -> str | None:
    """``value`` if it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def scalar_text(value: AttrValue) -> str | None:
    """A non-empty string, or an int rendered as text (ids are sometimes numbers)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def integer(value: AttrValue) -> int | None:
    """An int attribute (token counts); numeric strings are accepted, bools are not."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def first(attributes: Mapping[str, AttrValue], keys: Iterable[str]) -> AttrValue:
    """The value of the first of ``keys`` present with a non-empty value, else ``None``."""
    if isinstance(attributes, dict):  # every decoder's: compiled, a direct dict read
        return _first_in(attributes, keys)
    for key in keys:
        value = attributes.get(key)
        if value is not None and value != "":
            return value
    return None


def _first_in(attributes: dict[str, AttrValue], keys: Iterable[str]) -> AttrValue:
    for key in keys:
        value = attributes.get(key)
        if value is not None and value != "":
            return value
    return None


def parse_json(raw: str) -> Any:
    """``json.loads(raw)``, or ``INVALID`` when ``raw`` is not a JSON document.

    msgspec parses the 200-500 byte documents attributes hold ~2.5x faster than
    the standard library and gives the same values wherever it accepts one (big
    integers included, unlike orjson); what it refuses (NaN, lone surrogates,
    Python-only whitespace, plain text) gets the standard library's answer. See
    docs/adr/0007-hot-path.md.
    """
    if raw[:1] in _STRICT_START:
        try:
            return _decode(raw)
        except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
            pass
    return _parse_stdlib(raw)


def _parse_stdlib(raw: str) -> Any:
    """``parse_json`` by the standard library's C scanner (no ``json.loads`` wrappers)."""
    start = 0
    if raw[:1].isspace():
        start = len(raw) - len(raw.lstrip())
    if start == len(raw) or raw[start] not in _JSON_START:
        return INVALID
    try:
        value, end = _scan(raw, start)
    except (StopIteration, ValueError, RecursionError):
        return INVALID
    if end != len(raw) and not raw[end:].isspace():
        return INVALID  # trailing garbage: e.g. a value truncated to the size limit
    return value


def json_object(value: AttrValue) -> dict[str, Any] | None:
    """``value`` as a JSON object: a map as it is, text that opens ``{`` parsed; else None."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or not value.startswith("{"):
        return None
    parsed = parse_json(value)
    return parsed if isinstance(parsed, dict) else None


def python_literal(raw: str) -> Any:
    """A Python ``repr`` of a container (``{'a': 1}``) as a JSON value; ``INVALID`` otherwise.

    Python instrumentations that ``str()`` what they record write reprs, not JSON:
    Traceloop's LangChain ``input_str``, CrewAI's tool outputs.
    """
    stripped = raw.strip()
    if len(stripped) > _MAX_LITERAL_CHARS or stripped[:1] not in ("{", "[", "("):
        return INVALID
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return INVALID
    return value if _is_json_value(value, 0) else INVALID


def _is_json_value(value: Any, depth: int) -> bool:
    """True for values ``json.dumps`` can write (a repr may hold sets, bytes, complex)."""
    if depth > _MAX_DEPTH:
        return False
    if value is None or isinstance(value, str | int | float):
        return True
    if isinstance(value, list | tuple):
        return all(_is_json_value(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_value(v, depth + 1) for k, v in value.items())
    return False


def structured(value: AttrValue) -> Any:
    """A JSON-string attribute parsed (``INVALID`` if it is not JSON); others as JSON values.

    "Every framework we ran stores structured values as JSON strings", but OTLP
    also allows kvlists and arrays: those become dicts and lists (``json_ready``).
    """
    if isinstance(value, str):
        return parse_json(value)
    return json_ready(value)


def json_ready(value: Any) -> Any:
    """OTLP values as JSON values: arrays as lists, bytes (not JSON) as hex text."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, tuple):
        return [json_ready(item) for item in value]
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    return value


def as_list(value: Any) -> list[Any] | tuple[Any, ...] | None:
    """``value`` if it is a JSON array (list) or an OTLP array (tuple)."""
    return value if isinstance(value, list | tuple) else None


def event_attribute(span: Span, event_name: str, key: str) -> AttrValue:
    """Attribute ``key`` of the span's last ``event_name`` event (Strands puts content there)."""
    for event in reversed(span.events):
        if event.name == event_name:
            value = event.attributes.get(key)
            if value is not None:
                return value
    return None


def holds_text(value: Any, matches: Callable[[str], bool], depth: int = 6) -> bool:
    """Whether ``value`` is a text ``matches`` accepts, or holds one as a whole value in
    its mappings' values and sequences' items, at most ``depth`` levels and 64 values
    per container down."""
    if isinstance(value, str):
        return matches(value)
    if depth <= 0:
        return False
    if isinstance(value, dict):
        items: list[Any] = list(islice(value.values(), _MAX_HELD_ITEMS))
    elif isinstance(value, list | tuple):
        items = list(islice(value, _MAX_HELD_ITEMS))
    else:
        return False
    return any(holds_text(item, matches, depth - 1) for item in items)


_MAX_HELD_ITEMS: Final = 64


def name_prefix(full: str, name: str) -> str:
    """What stands before ``name`` in ``full`` when ``full`` ends with it and is longer (a
    labelled or qualified tool name: ``tool - refund``, ``store__refund``), else ""."""
    if not name or len(full) <= len(name) or not full.endswith(name):
        return ""
    return full[: -len(name)]
