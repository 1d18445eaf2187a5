"""Spans no convention names, read by the evidence their attributes carry.

A framework's own tracer names its spans and attributes after itself (Haystack's span
``haystack.agent.step.tool`` with ``haystack.tool.name``), but the shape is common: the
keys live in the span name's own namespace (a dot-prefix of the span's name). A tool span
carries a string ``<ns>.tool.name`` and its arguments under ``<ns>.tool.input`` (a JSON
object), its result under ``<ns>.tool.output``; a failure is a true ``<ns>.tool.error``.
An agent's run records the agent under ``<ns>.agent.name`` and its request under
``<ns>.run.prompt`` (its answer under ``<ns>.run.result``). A model call records its
request under ``<ns>.llm.input`` and its reply under ``<ns>.llm.output``, and is one only
when the values show it: the request holds a message
list, the reply an assistant message (any message shape ``messages`` reads). No namespace
is named: only the key's last two segments, a namespace the span's own name gives, and the
values' shape. The request's last user text, the reply's text and the calls the reply
requests (content parts, ``messages.content_part_calls``) are read like any convention's.

Keys are looked up (the normalizer reads only keys it can name: the decoder keeps a key
by its ending, ``SUFFIXES``); one rule finds keys by that ending alone, iterating a span's
kept keys: an agent name a child records for its parent (``named_agents``, rule 99).
Cost on a trace that needs none of it: nothing for a span whose name has no dot; else a
few dict lookups per unclassified span (one per dot-prefix of its name and suffix
asked), nothing parsed unless a key is found.
"""

from __future__ import annotations

from typing import Any, Final

from collector.core.records import Span
from collector.normalize.errors import GENERIC
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    content_part_calls,
    has_role,
    last_text,
)
from collector.normalize.roles import Role
from collector.normalize.values import json_object, text

TOOL_NAME: Final = ".tool.name"
TOOL_INPUT: Final = ".tool.input"
TOOL_OUTPUT: Final = ".tool.output"
TOOL_ERROR: Final = ".tool.error"
LLM_INPUT: Final = ".llm.input"
LLM_OUTPUT: Final = ".llm.output"
AGENT_NAME: Final = ".agent.name"
RUN_PROMPT: Final = ".run.prompt"
RUN_RESULT: Final = ".run.result"
SUFFIXES: Final = (
    TOOL_NAME,
    TOOL_INPUT,
    TOOL_OUTPUT,
    TOOL_ERROR,
    LLM_INPUT,
    LLM_OUTPUT,
    AGENT_NAME,
    RUN_PROMPT,
    RUN_RESULT,
)


_MAX_SEGMENTS: Final = 8  # namespaces are short; a long dotted name is no namespace


def _namespaces(span: Span) -> list[str]:
    """The dot-prefixes of the span's name, shortest first (none without a dot)."""
    name = span.name
    if "." not in name:
        return []
    parts = name.split(".", _MAX_SEGMENTS)[:_MAX_SEGMENTS]
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


def _ending(span: Span, suffix: str, namespaces: list[str] | None = None) -> Any:
    """The value of ``<ns><suffix>`` for the first namespace ``ns`` of the span's name."""
    attributes = span.attributes
    for namespace in _namespaces(span) if namespaces is None else namespaces:
        key = namespace + suffix
        if key in attributes:
            return attributes[key]
    return None


def classify(span: Span) -> Role | None:
    """``TOOL`` for a tool's name and the arguments of its call (a JSON object); ``LLM``
    for a request holding messages and a reply holding an assistant message; else None."""
    namespaces = _namespaces(span)
    if not namespaces:
        return None
    name = _ending(span, TOOL_NAME, namespaces)
    if isinstance(name, str) and json_object(_ending(span, TOOL_INPUT, namespaces)) is not None:
        return Role.TOOL
    request = json_object(_ending(span, LLM_INPUT, namespaces))
    if request is None or not has_role(request, None):
        return _agent_run(span, namespaces)
    reply = json_object(_ending(span, LLM_OUTPUT, namespaces))
    return Role.LLM if has_role(reply, ASSISTANT_ROLES) else None


def _agent_run(span: Span, namespaces: list[str]) -> Role | None:
    return Role.AGENT if _run_agent(span, namespaces) else None


def agent_name(span: Span) -> str | None:
    """The agent an evidence-read run names (``_run_agent``)."""
    return _run_agent(span, _namespaces(span))


def _run_agent(span: Span, namespaces: list[str]) -> str | None:
    """An agent's run (rule 98): the agent's name under ``<ns>.agent.name`` and the
    request it was run with under ``<ns>.run.prompt``, both text, the prompt not empty
    (traceAI's pydantic-ai spans, one per ``Agent.run``, nothing recorded below them:
    the run is read, and the trajectory says its calls were not recorded)."""
    name, prompt = _ending(span, AGENT_NAME, namespaces), _ending(span, RUN_PROMPT, namespaces)
    return name if isinstance(name, str) and name and isinstance(prompt, str) and prompt else None


def run_input(span: Span) -> str | None:
    return text(_ending(span, RUN_PROMPT)) if agent_name(span) else None


def run_output(span: Span) -> str | None:
    return text(_ending(span, RUN_RESULT)) if agent_name(span) else None


def tool_parts(span: Span) -> tuple[str | None, Any, Any, str | None]:
    """``(name, raw arguments, raw result, error)``: the error, when ``<ns>.tool.error``
    is true, is the result's text (what the framework recorded of the failure)."""
    namespaces = _namespaces(span)
    if not namespaces:
        return None, None, None, None
    name = _ending(span, TOOL_NAME, namespaces)
    result = _ending(span, TOOL_OUTPUT, namespaces)
    failed = _ending(span, TOOL_ERROR, namespaces) is True
    return (
        name if isinstance(name, str) else None,
        _ending(span, TOOL_INPUT, namespaces),
        result,
        (text(result) or GENERIC) if failed else None,
    )


def _reply(span: Span) -> Any:
    return json_object(_ending(span, LLM_OUTPUT))


def requested_calls(span: Span) -> list[RequestedCall] | None:
    """The tool calls the reply asks for (content parts), or None without a reply."""
    reply = _reply(span)
    return None if reply is None else content_part_calls(reply)


def llm_input(span: Span) -> str | None:
    return last_text(json_object(_ending(span, LLM_INPUT)), USER_ROLES)


def llm_output(span: Span) -> str | None:
    reply = _reply(span)
    return None if reply is None else last_text(reply, ASSISTANT_ROLES)
