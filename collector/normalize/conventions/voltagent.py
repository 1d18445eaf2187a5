"""VoltAgent's own tracing (``@voltagent/core``'s ``VoltAgentObservability``).

VoltAgent writes a vocabulary of its own, no GenAI or OpenInference keys: every span of
an agent's run carries ``entity.type`` (``agent``) and ``entity.name`` (the agent's
name); its work spans are typed by ``span.type``: ``llm`` (one ``llm:generateText``
span for the whole tool loop, recording only the first request, ``llm.messages``),
``tool`` (``tool.execution:<name>``: ``tool.name``, the model's ``tool.call.id``, the
arguments as JSON under ``input``, the result under ``output``; a failure is the span's
status), ``memory`` (reads and writes of the conversation). The agent's own span has
no ``span.type``: its ``input`` is the user's text, its ``output`` the answer. With a
conversation, ``conversation.id`` is on every span (read as the session, after every
other session key). How many model
calls the loop made, and which calls the model asked for, is recorded nowhere: one model
step per run, and the tool spans are the calls. Nothing here is read unless the span
carries all three of ``entity.type``, ``entity.id`` and ``entity.name`` (``marks``):
``entity.type`` alone, ``input`` and ``conversation.id`` are common names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from collector.core.records import AttrValue, Span
from collector.normalize.messages import USER_ROLES, last_text
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, parse_json, scalar_text, text

NAME: Final = "voltagent"
ENTITY_TYPE: Final = "entity.type"
ENTITY_NAME: Final = "entity.name"
ENTITY_ID: Final = "entity.id"
SPAN_TYPE: Final = "span.type"
INPUT: Final = "input"
OUTPUT: Final = "output"
TOOL_CALL_ID: Final = "tool.call.id"
CONVERSATION_ID: Final = "conversation.id"
MODEL: Final = "llm.model"
MESSAGES: Final = "llm.messages"

KEYS: Final[tuple[str, ...]] = (
    ENTITY_TYPE,
    ENTITY_NAME,
    ENTITY_ID,
    SPAN_TYPE,
    INPUT,
    OUTPUT,
    TOOL_CALL_ID,
    CONVERSATION_ID,
    MODEL,
    MESSAGES,
)
PREFIXES: Final[tuple[str, ...]] = ()

_ROLES: Final = {"llm": Role.LLM, "tool": Role.TOOL}


def marks(attributes: Mapping[str, AttrValue]) -> bool:
    """Whether a span carries VoltAgent's entity keys, all three (``entity.type`` alone is
    a common name: another library's ``customer`` entity is no VoltAgent run)."""
    return (
        isinstance(attributes.get(ENTITY_TYPE), str)
        and ENTITY_ID in attributes
        and ENTITY_NAME in attributes
    )


def classify(span: Span) -> Role | None:
    """The role ``span.type`` gives a span of an entity's run: the entity's own span
    (no type) an agent's run, memory and other work plumbing; None unless ``marks``."""
    attributes = span.attributes
    if not marks(attributes):
        return None
    entity = attributes.get(ENTITY_TYPE)
    kind = attributes.get(SPAN_TYPE)
    if kind is None:
        return Role.AGENT if entity == "agent" else Role.CHAIN
    return _ROLES.get(kind, Role.CHAIN) if isinstance(kind, str) else Role.CHAIN


def _own(span: Span) -> bool:
    """Whether ``span`` is an agent's own span (not one of its work spans)."""
    attributes = span.attributes
    return (
        attributes.get(ENTITY_TYPE) == "agent" and SPAN_TYPE not in attributes and marks(attributes)
    )


def session(span: Span) -> str | None:
    """The conversation a VoltAgent span records (read on VoltAgent's spans only)."""
    return scalar_text(span.attributes.get(CONVERSATION_ID)) if marks(span.attributes) else None


def agent_name(span: Span) -> str | None:
    return text(span.attributes.get(ENTITY_NAME)) if _own(span) else None


def tool_call_id(span: Span) -> AttrValue:
    return span.attributes.get(TOOL_CALL_ID) if classify(span) is Role.TOOL else None


def tool_parts(span: Span) -> tuple[AttrValue, AttrValue]:
    """``(raw arguments, raw result)`` of a tool span (JSON text under ``input`` and
    ``output``); ``(None, None)`` on any other span."""
    if classify(span) is not Role.TOOL:
        return None, None
    return span.attributes.get(INPUT), span.attributes.get(OUTPUT)


def run_input(span: Span) -> str | None:
    return text(span.attributes.get(INPUT)) if _own(span) else None


def run_output(span: Span) -> str | None:
    return text(span.attributes.get(OUTPUT)) if _own(span) else None


def llm_input(span: Span) -> str | None:
    """The last user text of the loop's first request (``llm.messages``)."""
    if classify(span) is not Role.LLM:
        return None
    raw = span.attributes.get(MESSAGES)
    parsed = parse_json(raw) if isinstance(raw, str) else INVALID
    return None if parsed is INVALID else last_text(parsed, USER_ROLES)


def model(span: Span) -> str | None:
    return text(span.attributes.get(MODEL)) if classify(span) is Role.LLM else None
