"""The records a tool's return value comes wrapped in, recognised by their fields:
a response object around the content blocks the model was shown, a legacy function
message, a typed text block (``results`` unwraps them)."""

from __future__ import annotations

from typing import Any, Final

TEXT_BLOCK_KEYS: Final = frozenset({"type", "text", "annotations"})  # (an MCP text block)


def is_content_record(obj: dict[str, Any]) -> bool:
    """A tool's response object around the content blocks the model was shown, beside
    bookkeeping scalars only and no error flag raised (AgentScope's ``ToolResponse``:
    ``content``, ``metadata``, ``stream``, ``is_last``, ``id``; MCP's ``CallToolResult``
    with ``isError`` false): what the tool returned is its content."""
    content = obj.get("content")
    if not isinstance(content, list) or not content or not all(map(is_text_block, content)):
        return False
    return all(
        key == "content"
        or (key in _RESPONSE_BOOKKEEPING and not isinstance(value, (dict, list)))
        or (key in _NOT_RAISED and value in (None, False))
        for key, value in obj.items()
    )


# The fields a response object keeps beside its content (AgentScope's ``ToolResponse``,
# its repr's class name, MCP's result): any other field is the tool's own.
_RESPONSE_BOOKKEEPING: Final = frozenset(
    {"__class__", "metadata", "stream", "is_last", "is_interrupted", "id", "_meta"}
)
_NOT_RAISED: Final = frozenset({"isError", "is_error", "error"})  # (an error flag, unset)


def is_text_block(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block.keys() <= TEXT_BLOCK_KEYS
    )


def is_function_message(obj: Any) -> bool:
    """A legacy OpenAI ``function`` message: role ``function``, the function's name and
    what it returned, nothing else (AgentOps' AG2 tool spans record the reply so)."""
    return (
        isinstance(obj, dict)
        and obj.get("role") == "function"
        and isinstance(obj.get("name"), str)
        and "content" in obj
        and obj.keys() <= _FUNCTION_MESSAGE_KEYS
    )


_FUNCTION_MESSAGE_KEYS: Final = frozenset({"role", "name", "content"})
