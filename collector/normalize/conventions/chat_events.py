"""A model call recorded in its span's events: the request in one, the reply in another.

LlamaIndex's own OpenTelemetry integration (``llama-index-observability-otel``) writes
no attribute any convention names: its spans are the dispatcher's (``<Class>.<method>``)
and what happened is in their events, each a dispatcher event dumped flat: the chat
model's start event holds the request, ``messages`` (the JSON message list), and its
end event the request again and the reply flattened under ``response.message.``
(``role``, ``blocks`` or ``content``, ``additional_kwargs.tool_calls``) with the token
counts under ``response.raw.usage.``. No event name is read, only that shape: a span no
convention types, one of whose events records a message list under ``messages`` (a
message with a role in it) and one (the same or a later) an assistant reply under
``response.message.role``, naming the model or counting its answer, is a model call
(ADR 0017, rule 67). Where model-call spans nest (LlamaIndex's ``achat``
wraps another), only the one carrying the events is one: the wrapper has none.

Messages are read in LlamaIndex's ``ChatMessage`` shape by ``messages`` and
``history`` (``blocks``: ``block_type`` ``text`` | ``tool_call``, the provider's fields
under ``additional_kwargs``). Event attributes are decoded whole, so nothing here adds
to the decoder's selector; a span without events costs one check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from collector.core.records import AttrValue, Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    block_calls,
    has_role,
    last_text,
    message_list,
    openai_tool_calls,
    text_of,
)
from collector.normalize.roles import CHAT_EVENTS, Role
from collector.normalize.values import INVALID, integer, structured

NAME: Final = CHAT_EVENTS
KEYS: Final[tuple[str, ...]] = ()  # span events are decoded whole
PREFIXES: Final[tuple[str, ...]] = ()
REQUEST: Final = "messages"
REPLY: Final = "response.message."
REPLY_ROLE: Final = REPLY + "role"
_REPLY_CONTENT: Final = (REPLY + "blocks", REPLY + "content")
_REPLY_CALLS: Final = REPLY + "additional_kwargs.tool_calls"
_MAX_EVENTS: Final = 256  # a model call has a start and an end event; bounds hostile spans
# The model and token counts: the provider's own answer (``response.raw``) first, then the
# model the request named (LlamaIndex's ``model_dict``).
_MODEL_KEYS: Final = ("response.raw.model", "model_dict.model_name", "model_dict.model")
_INPUT_TOKENS: Final = ("response.raw.usage.prompt_tokens", "response.raw.usage.input_tokens")
_OUTPUT_TOKENS: Final = (
    "response.raw.usage.completion_tokens",
    "response.raw.usage.output_tokens",
)


def classify(span: Span) -> Role | None:
    """``LLM`` for a span whose events record a request (a message list with a role) and
    an assistant reply, and name the model or count its answer, as rule 65 asks."""
    if not span.events or _reply(span) is None:
        return None
    if not has_role(_request(span), None):
        return None
    known = model(span) is not None or tokens(span) != (None, None)
    return Role.LLM if known else None


def _request(span: Span) -> list[Any] | None:
    """The message list the first event that records one holds under ``messages``."""
    for event in span.events[:_MAX_EVENTS]:
        raw = event.attributes.get(REQUEST)
        if raw is not None:
            parsed = structured(raw)
            found = None if parsed is INVALID else message_list(parsed)
            if found:
                return found
    return None


def _reply(span: Span) -> dict[str, Any] | None:
    """The assistant reply the last event that records one holds, as a message dict."""
    for event in reversed(span.events[-_MAX_EVENTS:]):
        role = event.attributes.get(REPLY_ROLE)
        if isinstance(role, str) and role.lower() in ASSISTANT_ROLES:
            return _reply_message(event.attributes, role.lower())
    return None


def _reply_message(attributes: Mapping[str, AttrValue], role: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role}
    for key in _REPLY_CONTENT:
        value = attributes.get(key)
        if value is not None:
            parsed = structured(value) if isinstance(value, str) and value[:1] == "[" else value
            message[key.removeprefix(REPLY)] = None if parsed is INVALID else parsed
    calls = attributes.get(_REPLY_CALLS)
    if calls is not None:
        parsed = structured(calls)
        message["tool_calls"] = parsed if isinstance(parsed, list) else []
    return message


def input_messages(span: Span) -> list[Any]:
    """The request's messages (for ``history``); empty when the events record none."""
    if not span.events or _reply(span) is None:
        return []
    return _request(span) or []


def requested_calls(span: Span) -> list[RequestedCall] | None:
    """The reply's tool calls: its ``tool_call`` blocks, else the provider's
    ``tool_calls``; None when the span records no reply."""
    reply = _reply(span) if span.events else None
    if reply is None:
        return None
    return block_calls(reply.get("blocks")) or openai_tool_calls(reply.get("tool_calls"))


def model(span: Span) -> str | None:
    """The model a model call's events name (``llm_step``: spans that name none)."""
    found = _event_value(span, _MODEL_KEYS)
    return found if isinstance(found, str) and found else None


def tokens(span: Span) -> tuple[int | None, int | None]:
    """``(input, output)`` token counts the events record, each None when unknown."""
    return integer(_event_value(span, _INPUT_TOKENS)), integer(_event_value(span, _OUTPUT_TOKENS))


def _event_value(span: Span, keys: tuple[str, ...]) -> AttrValue:
    """The first of ``keys`` an event of the span records, the last event first."""
    for event in reversed(span.events[-_MAX_EVENTS:]):
        for key in keys:
            value = event.attributes.get(key)
            if value is not None:
                return value
    return None


def llm_input(span: Span) -> str | None:
    return last_text(input_messages(span), USER_ROLES) if span.events else None


def llm_output(span: Span) -> str | None:
    reply = _reply(span) if span.events else None
    return None if reply is None else text_of(reply)
