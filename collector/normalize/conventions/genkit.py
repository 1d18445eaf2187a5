"""Firebase Genkit's own span attributes (``genkit:*``), as its OpenTelemetry spans carry
them to any exporter.

Every Genkit action, flow step and helper runs in a span with ``genkit:type``
(``action``, ``flow``, ``flowStep``, ``util``, ``promptTemplate`` …), ``genkit:name``,
``genkit:path``, ``genkit:state`` (``success`` / ``error``) and its input and output as
JSON text (``genkit:input`` / ``genkit:output``); an action's kind is
``genkit:metadata:subtype`` (``agent``, ``flow``, ``model``, ``tool``, ``prompt``,
``retriever``, ``embedder`` …). Observed with genkit 1.42 (JS): a model action's input is
Genkit's ``GenerateRequest`` (``{"messages": [{"role", "content": [parts]}], "tools",
"config"}``; parts ``{"text"}``, ``{"toolRequest": {"name", "ref", "input"}}``,
``{"toolResponse": {"name", "ref", "output"}}``) and its output a ``GenerateResponse``
(``{"message", "finishReason", "usage": {"inputTokens", "outputTokens"}, "raw"}``); a
tool action's input is the arguments object and its output the tool's return value; the
tool-call loop is a chain of nested ``generate`` (``util``) spans, each holding one model
call and the tools it requested; an agent (``ai.defineAgent``, beta) is an ``agent``
action (no ``genkit:input``: its input is streamed) whose output holds the reply, with
its session in ``genkit:metadata:agent:sessionId``. The older chat API wrote
``genkit:sessionId``. Nothing here is read unless ``genkit:type`` marks the span.
"""

from __future__ import annotations

from typing import Any, Final

from collector.core.records import Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    last_text,
    requested,
    role_of,
    text_of,
)
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, integer, structured

NAME: Final = "genkit"
TYPE: Final = "genkit:type"
SUBTYPE: Final = "genkit:metadata:subtype"
ACTION_NAME: Final = "genkit:name"
INPUT: Final = "genkit:input"
OUTPUT: Final = "genkit:output"
SESSION_KEYS: Final[tuple[str, ...]] = ("genkit:metadata:agent:sessionId", "genkit:sessionId")

KEYS: Final[tuple[str, ...]] = (TYPE, SUBTYPE, ACTION_NAME, INPUT, OUTPUT, *SESSION_KEYS)
PREFIXES: Final[tuple[str, ...]] = ()

_ACTION_ROLES: Final = {
    "model": Role.LLM,
    "background-model": Role.LLM,
    "tool": Role.TOOL,
    "tool.v2": Role.TOOL,
    "agent": Role.AGENT,
    "custom-agent": Role.AGENT,
    "flow": Role.WORKFLOW,
    "prompt": Role.CHAIN,
    "executable-prompt": Role.CHAIN,
    "util": Role.CHAIN,
}
_PLUMBING: Final = frozenset({"util", "flowStep", "promptTemplate", "helper"})


def classify(span: Span) -> Role | None:
    kind = span.attributes.get(TYPE)
    if kind is None:
        return None
    if kind == "action":
        subtype = span.attributes.get(SUBTYPE)
        return _ACTION_ROLES.get(subtype, Role.OTHER) if isinstance(subtype, str) else Role.CHAIN
    if kind == "flow":
        return Role.WORKFLOW
    if kind in _PLUMBING:
        return Role.CHAIN
    return Role.CHAIN


def _action_role(span: Span) -> Role | None:
    """The role an action's subtype gives (``None`` for a span that runs no action)."""
    if span.attributes.get(TYPE) != "action":
        return None
    subtype = span.attributes.get(SUBTYPE)
    return _ACTION_ROLES.get(subtype) if isinstance(subtype, str) else None


def _parsed(span: Span, key: str) -> Any:
    value = span.attributes.get(key)
    if value is None:
        return None
    parsed = structured(value)
    return None if parsed is INVALID else parsed


def _is_model(span: Span) -> bool:
    return _action_role(span) is Role.LLM


def agent_name(span: Span) -> str | None:
    """The agent's or flow's registered name (every Genkit span has a ``genkit:name``:
    read only on the ones that run an agent or a flow)."""
    if _action_role(span) in (Role.AGENT, Role.WORKFLOW) or span.attributes.get(TYPE) == "flow":
        value = span.attributes.get(ACTION_NAME)
        return value if isinstance(value, str) and value else None
    return None


def tool_name(span: Span) -> str | None:
    if _action_role(span) is not Role.TOOL:
        return None
    value = span.attributes.get(ACTION_NAME)
    return value if isinstance(value, str) and value else None


def model(span: Span) -> str | None:
    if not _is_model(span):
        return None
    output = _parsed(span, OUTPUT)
    raw = output.get("raw") if isinstance(output, dict) else None
    found = raw.get("model") if isinstance(raw, dict) else None  # the provider's answer
    if isinstance(found, str) and found:
        return found
    value = span.attributes.get(ACTION_NAME)  # the registered model (``provider/model``)
    return value if isinstance(value, str) and value else None


def tokens(span: Span) -> tuple[int | None, int | None]:
    if not _is_model(span):
        return None, None
    output = _parsed(span, OUTPUT)
    usage = output.get("usage") if isinstance(output, dict) else None
    if not isinstance(usage, dict):
        return None, None
    return integer(usage.get("inputTokens")), integer(usage.get("outputTokens"))


def _reply(output: Any) -> Any:
    """The reply message of a ``GenerateResponse`` (``message``, or the first candidate)."""
    if not isinstance(output, dict):
        return None
    message = output.get("message")
    if message is None:
        candidates = output.get("candidates")
        if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
            message = candidates[0].get("message")
    return message


def requested_calls(span: Span) -> list[RequestedCall] | None:
    if not _is_model(span):
        return None
    message = _reply(_parsed(span, OUTPUT))
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return None  # (no readable reply, e.g. cut by an attribute limit: not "no calls")
    calls: list[RequestedCall] = []
    for part in content:
        request = part.get("toolRequest") if isinstance(part, dict) else None
        if isinstance(request, dict):
            made = requested(request.get("ref"), request.get("name"), request.get("input"))
            if made is not None:
                calls.append(made)
    return calls


def llm_input(span: Span) -> str | None:
    if not _is_model(span):
        return None
    return last_text(_parsed(span, INPUT), USER_ROLES)


def llm_output(span: Span) -> str | None:
    if not _is_model(span):
        return None
    message = _reply(_parsed(span, OUTPUT))
    return text_of(message) if role_of(message) in ASSISTANT_ROLES else None


def _run_text(value: Any, roles: frozenset[str]) -> str | None:
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict) and isinstance(value.get("message"), dict):
        message = value["message"]
        return text_of(message) if role_of(message) in roles else None
    if isinstance(value, dict) and isinstance(value.get("prompt"), str):
        return value["prompt"] or None
    return last_text(value, roles)


def run_input(span: Span) -> str | None:
    """An agent's or flow's input: its text, a message, or the last user message."""
    if span.attributes.get(TYPE) is None:
        return None
    return _run_text(_parsed(span, INPUT), USER_ROLES)


def run_output(span: Span) -> str | None:
    """An agent's (or a generate's) answer: the reply message of its output."""
    if span.attributes.get(TYPE) is None:
        return None
    return _run_text(_parsed(span, OUTPUT), ASSISTANT_ROLES)
