"""The GenAI per-message events: one event (or log record) per message.

Semantic conventions up to 1.36 (and instrumentations that still emit them, such as
opentelemetry-instrumentation-openai-v2 before 2.4) record a model call's messages
as ``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``
and ``gen_ai.tool.message`` events, in conversation order, and its reply as
``gen_ai.choice`` events (``message: {role, content | tool_calls}``). Sent as log
records, they reach the span as events with their body's fields as attributes
(``collector.assembly.log_join``). A body sent as the JSON text of an object (a
logging bridge that formats it: Semantic Kernel's) is read like a map body. Read here
as OpenAI-style chat messages.

Strands emits same-named events with other shapes (content blocks, tool input on a
tool span); its own readers run first and these only read what they do not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collector.core.records import Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    last_text,
    openai_tool_call,
)
from collector.normalize.values import INVALID, json_ready, parse_json

NAME = "genai_events"
KEYS: tuple[str, ...] = ()  # events are decoded whole
PREFIXES: tuple[str, ...] = ()
CHOICE = "gen_ai.choice"
_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_MAX_EVENTS = 4096
_BODY = "body"  # where ``log_join`` keeps a body that is not a map


def input_messages(span: Span) -> list[dict[str, Any]] | None:
    """The messages the model call was sent, in order; None without such events."""
    found: list[dict[str, Any]] = []
    for event in span.events[:_MAX_EVENTS]:
        role = _ROLES.get(event.name)
        if role is not None:
            found.append(_message(role, _fields(event.attributes)))
    return found or None


def output_messages(span: Span) -> list[dict[str, Any]] | None:
    """The reply (``gen_ai.choice`` messages); None without such events."""
    found: list[dict[str, Any]] = []
    for event in span.events[:_MAX_EVENTS]:
        if event.name != CHOICE:
            continue
        message = _object(_fields(event.attributes).get("message"))
        if isinstance(message, dict):
            found.append(_message(str(message.get("role") or "assistant"), message))
    return found or None


def requested_calls(span: Span) -> list[RequestedCall] | None:
    output = output_messages(span)
    if output is None:
        return None
    calls = []
    for message in output:
        for call in message.get("tool_calls") or ():
            made = openai_tool_call(call)
            if made is not None:
                calls.append(made)
    return calls


def llm_input(span: Span) -> str | None:
    messages = input_messages(span)
    return last_text(messages, USER_ROLES) if messages else None


def llm_output(span: Span) -> str | None:
    messages = output_messages(span)
    return last_text(messages, ASSISTANT_ROLES) if messages else None


def _message(role: str, fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role}
    content = fields.get("content")
    if content is not None:
        message["content"] = json_ready(content)
    calls = _object(fields.get("tool_calls"))
    if isinstance(calls, list):
        message["tool_calls"] = calls
    call_id = (fields.get("id") or fields.get("tool_call_id")) if role == "tool" else None
    if isinstance(call_id, str) and call_id:
        message["tool_call_id"] = call_id
    return message


def _fields(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """An event's attributes, with the fields of a body that is an object's JSON text
    (attributes win a clash, as with a map body)."""
    body = attributes.get(_BODY)
    if not isinstance(body, str) or body[:1] != "{":
        return attributes
    parsed = parse_json(body)
    if not isinstance(parsed, dict):
        return attributes
    merged = dict(parsed)
    merged.update(attributes)
    return merged


def _object(value: Any) -> Any:
    """A kvlist / array attribute (or an already parsed value) as JSON values, or a JSON
    string parsed."""
    if isinstance(value, str):
        parsed = parse_json(value)
        return None if parsed is INVALID else parsed
    return json_ready(value)
