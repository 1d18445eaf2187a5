"""LangWatch's Python SDK (``langwatch``): its own span types and typed values.

LangWatch types each span by ``langwatch.span.type`` (``llm``, ``tool``, ``agent``,
``workflow``; ``chain``, ``task`` … around the work; ``span``, a traced function) and
records what went in and out as ``langwatch.input`` / ``langwatch.output``: JSON text of
a typed value,
``{"type": "text" | "json" | "chat_messages" | "list" | "raw", "value": …}``. A model
call's are chat messages (the request's list, the reply's assistant message); a tool
span is named after the tool, its input the call's arguments (as its LangChain
callback gives them: a Python ``repr`` in a ``text`` value) and its output the tool's
answer (a message list whose last message's content is the result). The model's replies as its
LangChain callback records them keep no tool calls: the calls are the tool spans.
"""

from __future__ import annotations

import json
from typing import Any, Final

from collector.core.records import AttrValue, Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    last_text,
    message_list,
    openai_tool_calls,
    role_of,
)
from collector.normalize.roles import LANGWATCH, Role
from collector.normalize.values import INVALID, parse_json

NAME: Final = LANGWATCH
SPAN_TYPE: Final = "langwatch.span.type"
INPUT: Final = "langwatch.input"
OUTPUT: Final = "langwatch.output"
KEYS: Final[tuple[str, ...]] = (SPAN_TYPE, INPUT, OUTPUT)
PREFIXES: Final[tuple[str, ...]] = ()
_ROLES: Final = {
    "llm": Role.LLM,
    "tool": Role.TOOL,
    "agent": Role.AGENT,
    "workflow": Role.WORKFLOW,
    # A traced function (the SDK's default type): unrecognised, named only by attributes.
    "span": Role.OTHER,
}
_TEXT_TYPES: Final = frozenset({"text", "raw"})


def classify(span: Span) -> Role | None:
    kind = span.attributes.get(SPAN_TYPE)
    if not isinstance(kind, str):
        return None
    return _ROLES.get(kind, Role.CHAIN)  # chain, task, rag, component …: plumbing


def typed_value(raw: AttrValue) -> tuple[str | None, Any]:
    """``(type, value)`` of a ``langwatch.input|output`` text; ``(None, INVALID)`` when
    it is not one."""
    if not isinstance(raw, str) or raw[:1] != "{" or '"type"' not in raw:
        return None, INVALID
    parsed = parse_json(raw)
    if not isinstance(parsed, dict) or not isinstance(parsed.get("type"), str):
        return None, INVALID
    return parsed["type"], parsed.get("value")


def tool_parts(span: Span) -> tuple[AttrValue, AttrValue]:
    """``(raw arguments, raw result)`` of a LangWatch tool span, as text the tool
    readers parse: a ``text`` value as it is, other values as JSON; a result recorded
    as one message is that message's content."""
    attributes = span.attributes
    return _as_text(*typed_value(attributes.get(INPUT))), _result_text(attributes.get(OUTPUT))


def _result_text(raw: AttrValue) -> AttrValue:
    kind, value = typed_value(raw)
    if kind == "chat_messages":
        found = message_list(value)
        if found and isinstance(found[-1], dict):  # (the tool's answer: the last message)
            content = found[-1].get("content")
            return content if isinstance(content, str) else _as_text("json", content)
    return _as_text(kind, value)


def _as_text(kind: str | None, value: Any) -> AttrValue:
    if kind is None or value is None:
        return None
    if kind in _TEXT_TYPES and isinstance(value, str):
        return value
    if kind == "list" and isinstance(value, list):  # (a list of typed values)
        value = [_item_value(item) for item in value]
    return json.dumps(value, ensure_ascii=False, default=str)


def _item_value(item: Any) -> Any:
    if isinstance(item, dict) and isinstance(item.get("type"), str) and "value" in item:
        return item["value"]
    return item


def _messages(span: Span, key: str) -> Any:
    kind, value = typed_value(span.attributes.get(key))
    return message_list(value) if kind in ("chat_messages", "json") else None


def llm_input(span: Span) -> str | None:
    return last_text(_messages(span, INPUT), USER_ROLES) if SPAN_TYPE in span.attributes else None


def llm_output(span: Span) -> str | None:
    if SPAN_TYPE not in span.attributes:
        return None
    return last_text(_messages(span, OUTPUT), ASSISTANT_ROLES)


def requested_calls(span: Span) -> list[RequestedCall] | None:
    """The reply's OpenAI-style ``tool_calls``, when it records them; None off LangWatch."""
    if SPAN_TYPE not in span.attributes:
        return None
    calls: list[RequestedCall] = []
    for message in message_list(_messages(span, OUTPUT)) or ():
        if role_of(message) in ASSISTANT_ROLES:
            calls.extend(openai_tool_calls(message.get("tool_calls")))
    return calls


def run_output(span: Span) -> str | None:
    """A traced turn's answer, when its output is text."""
    kind, value = typed_value(span.attributes.get(OUTPUT)) if SPAN_TYPE in span.attributes else (
        None, None)  # fmt: skip
    return value if kind in _TEXT_TYPES and isinstance(value, str) and value else None
