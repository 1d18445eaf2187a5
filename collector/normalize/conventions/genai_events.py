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

The same events may also come as one span attribute, ``events``: the JSON list of the
events' field maps, each naming itself in ``event.name`` (Pydantic Logfire's OpenAI
Agents integration). The model's reply is then the list's last messages, after the
last message the model was sent that is not its own (a user or tool message), unless
``gen_ai.choice`` items mark it.

Semantic conventions 1.26-1.27 recorded a call's content as two span events instead,
each with the whole list as JSON text: ``gen_ai.content.prompt`` (``gen_ai.prompt``:
the messages sent) and ``gen_ai.content.completion`` (``gen_ai.completion``: the
reply's messages). Instrumentations that kept that form (Langtrace) are read with the
per-message events; items that are no message object are skipped (Langtrace writes an
assistant request with tool calls as a list of empty call stubs).

Strands emits same-named events with other shapes (content blocks, tool input on a
tool span); its own readers run first and these only read what they do not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from collector.core.records import Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    content_tool_calls,
    last_text,
    openai_tool_calls,
)
from collector.normalize.values import INVALID, json_ready, parse_json

NAME: Final = "genai_events"
EMBEDDED: Final = "events"  # the events' field maps as one JSON-list attribute
KEYS: Final[tuple[str, ...]] = (EMBEDDED,)  # span events are decoded whole
PREFIXES: Final[tuple[str, ...]] = ()
CHOICE: Final = "gen_ai.choice"
PROMPT_EVENT: Final = "gen_ai.content.prompt"
PROMPT: Final = "gen_ai.prompt"
COMPLETION_EVENT: Final = "gen_ai.content.completion"
COMPLETION: Final = "gen_ai.completion"
_ROLES: Final = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_EVENT_OF_ROLE: Final = {role: name for name, role in _ROLES.items()}
_MAX_EVENTS: Final = 4096
_BODY: Final = "body"  # where ``log_join`` keeps a body that is not a map
# The last ``events`` text parsed, and what it gave (one entry: swapped whole, so safe
# across threads; identity, not equality, so no text is compared).
_LAST_PARSED: Final[list[tuple[object, Any]]] = [(None, None)]


def _events(span: Span) -> list[tuple[str, Mapping[str, Any]]]:
    """``(name, fields)`` of the span's message events, else of the ``events``
    attribute's items."""
    found = [
        (event.name, _fields(event.attributes))
        for event in span.events[:_MAX_EVENTS]
        if event.name in _ROLES or event.name == CHOICE
    ]
    if found:
        return found
    found = _content_events(span)
    if found:
        return found
    raw = span.attributes.get(EMBEDDED)
    if not isinstance(raw, str) or raw[:1] != "[" or '"event.name"' not in raw:
        return []
    last = _LAST_PARSED[0]  # each reader asks again: parse the same text once
    if last[0] is raw:
        items = last[1]
    else:
        items = parse_json(raw)
        _LAST_PARSED[0] = (raw, items)
    if not isinstance(items, list):
        return []
    return [
        (item["event.name"], item)
        for item in items[:_MAX_EVENTS]
        if isinstance(item, dict) and isinstance(item.get("event.name"), str)
    ]


def _content_events(span: Span) -> list[tuple[str, Mapping[str, Any]]]:
    """The 1.26-1.27 content events' messages as per-message ``(name, fields)``: each
    message sent under its role's event name, each reply message as a choice."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for event in span.events[:_MAX_EVENTS]:
        if event.name == PROMPT_EVENT:
            key, reply = PROMPT, False
        elif event.name == COMPLETION_EVENT:
            key, reply = COMPLETION, True
        else:
            continue
        items = _object(event.attributes.get(key))
        if not isinstance(items, list):
            continue
        for item in items[:_MAX_EVENTS]:
            if not isinstance(item, dict):
                continue
            role = item.get("role")
            role = role if isinstance(role, str) and role else "assistant" if reply else "user"
            if reply:
                found.append((CHOICE, {"message": {**item, "role": role}}))
            elif role in _EVENT_OF_ROLE:
                found.append((_EVENT_OF_ROLE[role], item))
    return found


def _split(span: Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The messages sent and the reply."""
    sent: list[dict[str, Any]] = []
    reply: list[dict[str, Any]] = []
    events = _events(span)
    for name, fields in events:
        role = _ROLES.get(name)
        if role is not None:
            sent.append(_message(role, fields))
        elif name == CHOICE:
            message = _object(fields.get("message"))
            if isinstance(message, dict):
                reply.append(_message(str(message.get("role") or "assistant"), message))
    if not reply and sent and EMBEDDED in span.attributes and not _has_messages(span):
        # One list of the conversation: the reply is its tail of assistant messages.
        cut = len(sent)
        while cut > 0 and sent[cut - 1]["role"] == "assistant":
            cut -= 1
        if 0 < cut < len(sent):
            sent, reply = sent[:cut], sent[cut:]
    return sent, reply


def _has_messages(span: Span) -> bool:
    return any(
        event.name in _ROLES or event.name in (CHOICE, PROMPT_EVENT, COMPLETION_EVENT)
        for event in span.events
    )


def input_messages(span: Span) -> list[dict[str, Any]] | None:
    """The messages the model call was sent, in order; None without such events."""
    return _split(span)[0] or None


def output_messages(span: Span) -> list[dict[str, Any]] | None:
    """The reply (``gen_ai.choice`` messages); None without such events."""
    return _split(span)[1] or None


def requested_calls(span: Span) -> list[RequestedCall] | None:
    output = output_messages(span)
    if output is None:
        return None
    calls: list[RequestedCall] = []
    for message in output:
        found = openai_tool_calls(message.get("tool_calls"))
        calls.extend(found or content_tool_calls(message.get("content")))
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
