"""Tool results, unwrapped from framework envelopes, with the errors hidden inside them.

LangChain reports a handled tool error (``handle_tool_error``) with span status OK
or UNSET: the only trace of it is ``"status": "error"`` inside the serialized
``ToolMessage`` (OpenInference ``output.value``, Traceloop/LangSmith ``{"output": …}``).
Google ADK tools return errors as dicts (``{"status": "error", "error_message": …}``)
with status UNSET, and Strands tool results carry ``status`` the same way. Strands
wraps every result in content blocks (``[{"text": "<JSON>"}]``): they are unwrapped.
CrewAI hands a tool's non-text return to the model as ``str(value)``, so its tool
spans record a Python ``repr`` (``{'track_id': 3158}``): containers are read back.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from collector.core.records import AttrValue
from collector.normalize.messages import text_of_content
from collector.normalize.values import INVALID, json_ready, parse_json, python_literal

_OUTPUT_WRAPPER_KEYS = frozenset({"output", "kwargs"})
_ERROR_MESSAGE_KEYS = ("error_message", "error", "message")


class ToolResult(NamedTuple):
    """What a tool returned, as far as the span tells."""

    value: Any  # parsed JSON where possible, else the text
    call_id: str | None = None  # ``tool_call_id`` of a LangChain ToolMessage
    error: str | None = None  # an error reported inside the result (status OK/UNSET)


NO_RESULT = ToolResult(None)


def parse_result(value: AttrValue) -> ToolResult:
    """Parse one result attribute; see the module docstring for what is unwrapped."""
    if value is None:
        return NO_RESULT
    if not isinstance(value, str):
        return ToolResult(json_ready(value))  # a kvlist/array/scalar attribute
    obj = parse_json(value)
    if obj is INVALID:
        obj = python_literal(value)
        if obj is INVALID:
            return ToolResult(value)
    if isinstance(obj, dict) and "output" in obj and obj.keys() <= _OUTPUT_WRAPPER_KEYS:
        obj = obj["output"]  # Traceloop / LangSmith: {"output": <ToolMessage>, "kwargs": …}
    fields = _tool_message_fields(obj)
    if fields is not None:
        return _from_tool_message(fields)
    if isinstance(obj, list):
        obj = _content_blocks(obj)
    return ToolResult(obj, None, _error_dict_message(obj))


def _content_blocks(blocks: list[Any]) -> Any:
    """The value inside Bedrock-style tool-result content blocks, else ``blocks`` unchanged.

    Strands records what a tool returned as ``[{"text": "<the return value as JSON
    text>"}]`` (observed in both its modes), or ``[{"json": value}]``: one block is
    its value (text parsed as JSON when it is JSON), several text blocks are one text.
    """
    if not blocks or not all(isinstance(b, dict) and len(b) == 1 for b in blocks):
        return blocks
    if len(blocks) == 1:
        block = blocks[0]
        if "json" in block:
            return block["json"]
        inner = block.get("text")
        if not isinstance(inner, str):
            return blocks
        parsed = parse_json(inner)
        return inner if parsed is INVALID else parsed
    texts = [b.get("text") for b in blocks]
    if all(isinstance(t, str) for t in texts):
        return "\n".join(str(t) for t in texts)
    return blocks


def _tool_message_fields(obj: Any) -> dict[str, Any] | None:
    """The fields of a serialized LangChain ``ToolMessage`` in any of its dump forms."""
    if not isinstance(obj, dict):
        return None
    if obj.get("lc") is not None:  # {"lc": 1, "type": "constructor", "id": [...], "kwargs": {}}
        fields = obj.get("kwargs")
        ident = obj.get("id")
        named = isinstance(ident, list) and bool(ident) and ident[-1] == "ToolMessage"
        if isinstance(fields, dict) and (named or fields.get("type") == "tool"):
            return fields
        return None
    if obj.get("type") != "tool":
        return None
    data = obj.get("data")  # {"type": "tool", "data": {...}} (OpenInference)
    if isinstance(data, dict):
        return data
    return obj if "tool_call_id" in obj else None


def _from_tool_message(fields: dict[str, Any]) -> ToolResult:
    content = fields.get("content")
    call_id = fields.get("tool_call_id")
    call_id = call_id if isinstance(call_id, str) and call_id else None
    error = None
    if fields.get("status") == "error":
        error = text_of_content(content) or "error"
    if isinstance(content, str):
        parsed = parse_json(content)
        content = content if parsed is INVALID else parsed
    return ToolResult(content, call_id, error)


def _error_dict_message(obj: Any) -> str | None:
    """The message of an ``{"status": "error", …}`` result (ADK idiom, Strands ToolResult)."""
    if not isinstance(obj, dict) or obj.get("status") != "error":
        return None
    for key in _ERROR_MESSAGE_KEYS:
        message = obj.get(key)
        if isinstance(message, str) and message:
            return message
    return text_of_content(obj.get("content")) or "error"
