"""The text inside an input or output value an instrumentation records as JSON text
(OpenInference's ``input.value`` / ``output.value``): a message list, an object's text
field, a generation result, a recorded call."""

from __future__ import annotations

from typing import Any, Final

from collector.core.records import AttrValue
from collector.normalize.messages import last_text
from collector.normalize.values import INVALID, parse_json, text


def generated_text(value: AttrValue) -> str | None:
    """The text of a generation result recorded as the call's output value, when no
    output message is: ``{"text": "…", "toolCalls": […]}`` (the AI SDK's shape, Mastra's
    model steps); a reply that only requested calls has none."""
    raw = text(value)
    if raw is None or not raw.startswith("{") or '"text"' not in raw:
        return None
    parsed = parse_json(raw)
    found = parsed.get("text") if isinstance(parsed, dict) else None
    return found if isinstance(found, str) and found else None


# The field an object recorded as a value holds its text in: a chain's ``{"input"}`` /
# ``{"output"}``, a generation result's ``{"text", …}`` (the AI SDK's, Mastra's).
_TEXT_FIELDS: Final = ("input", "output", "text")


def value_text(value: Any, roles: frozenset[str], *, plain: bool, call: bool = False) -> str | None:
    """Text of an ``input.value``/``output.value``: messages, an object's text field
    (``_TEXT_FIELDS``), text; with ``call``, also a recorded Python call given one text
    (``_called_with``)."""
    raw = text(value)
    if raw is None:
        return None
    parsed = parse_json(raw)
    if parsed is INVALID:
        return raw if plain else None
    if isinstance(parsed, str):
        return parsed if plain else None
    found = last_text(parsed, roles)
    if found is None and isinstance(parsed, dict):
        for key in _TEXT_FIELDS:
            if isinstance(parsed.get(key), str):
                return str(parsed[key])
        if call:
            return _called_with(parsed)
    return found


def _called_with(call: dict[str, Any]) -> str | None:
    """The one text a run was called with, where the instrumentation records the call
    (``{"args": ["<question>"], "reset": true}``: traceAI's record of smolagents'
    ``run(task, reset=...)``): ``args`` holding exactly one text, and beside it no
    keyword arguments, only the recorder's flags and empty values (rule 73)."""
    positional = call.get("args")
    if not isinstance(positional, list) or len(positional) != 1:
        return None
    found = positional[0]
    if not isinstance(found, str) or not found:
        return None
    for key, member in call.items():
        if key == "args" or member is None or isinstance(member, bool | int | float):
            continue
        if member in ({}, [], ""):
            continue
        return None
    return found
