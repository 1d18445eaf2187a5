"""AgentOps' own span attributes (the Python SDK 0.4+, built on OpenTelemetry):
``agentops.span.kind`` and the spans of its decorators.

Every span a decorator opens (``@trace``/``@session``, ``@agent``, ``@workflow``,
``@operation``/``@task``, ``@tool``, ``@llm``, ``@guardrail``) carries
``agentops.span.kind`` and ``operation.name`` (the decorated name; the span's own
name is ``<name>.<kind>``). A tool's call is ``agentops.tool.input``, the envelope of
the Python call (``{"args": [...], "kwargs": {...}}``, read by ``arguments``), and its
return value ``agentops.tool.output``; other decorated calls write
``agentops.entity.input``/``.output`` (an agent's input is its constructor's arguments,
which is why no run text is read from them: the model calls give the run's request
and answer). A failure is the span's status and ``exception`` event. Observed with
agentops 0.4.21: the SDK's own OpenAI instrumentation writes the older flattened
OpenLLMetry layout (``gen_ai.prompt.N.*``, ``gen_ai.completion.N.*``) marked by
``gen_ai.request.type`` (read by ``traceloop``), and ``update_trace_metadata`` puts
user metadata on the root span as ``trace.metadata.<key>``. Nothing here is read
unless ``agentops.span.kind`` marks the span.
"""

from __future__ import annotations

from typing import Any, Final

from collector.core.records import AttrValue, Span
from collector.normalize.errors import GENERIC
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, parse_json, session_keys, text

NAME: Final = "agentops"
SPAN_KIND: Final = "agentops.span.kind"
OPERATION_NAME: Final = "operation.name"  # the decorated function's, class's or given name
TOOL_INPUT: Final = "agentops.tool.input"
TOOL_OUTPUT: Final = "agentops.tool.output"
# Its OpenAI Agents SDK integration's tool spans: the return value as JSON (beside the
# arguments as ``tool.parameters``, a key OpenInference uses for the tool's schema, so
# not read: the model's request gives them).
TOOL_RESULT: Final = "tool.result"
# Its Agno integration's tool spans: the call's arguments as a JSON object under
# ``tool.parameters`` (no model span is recorded beside them to give the request), a
# failure as text under ``tool.error`` (the span's status stays OK); its agent span the
# run's ``agent.input`` / ``agent.output`` as plain text.
TOOL_PARAMETERS: Final = "tool.parameters"
TOOL_ERROR: Final = "tool.error"
AGENT_INPUT: Final = "agent.input"
AGENT_OUTPUT: Final = "agent.output"
SESSION_KEYS: Final[tuple[str, ...]] = session_keys("trace.metadata.")
# Its AG2 integration's tool spans: the executed call as the one entry of a request's
# tool list (``gen_ai.request.tools.0.name`` / ``.arguments``, the arguments' JSON text
# written as a JSON string), beside ``tool.name`` holding the tool's kind (``function``).
CALL_NAME: Final = "gen_ai.request.tools.0.name"
CALL_ARGUMENTS: Final = "gen_ai.request.tools.0.arguments"
_SECOND_ENTRY: Final = "gen_ai.request.tools.1.name"
_KIND_WORDS: Final = frozenset({"function", "tool", "tool_call", "function_call"})
_KIND_NAME: Final = "tool.name"  # (OpenInference's tool name key, where AG2's kind is)

KEYS: Final[tuple[str, ...]] = (
    SPAN_KIND,
    OPERATION_NAME,
    TOOL_INPUT,
    TOOL_OUTPUT,
    TOOL_RESULT,
    TOOL_PARAMETERS,
    TOOL_ERROR,
    AGENT_INPUT,
    AGENT_OUTPUT,
    CALL_NAME,
    CALL_ARGUMENTS,
    _SECOND_ENTRY,
    *SESSION_KEYS,
)
PREFIXES: Final[tuple[str, ...]] = ()

_ROLES: Final = {
    "agent": Role.AGENT,
    "tool": Role.TOOL,
    "llm": Role.LLM,
    # Traced functions around the work (the trace's root, a workflow, an agent's
    # method, a chain of calls): plumbing unless they hold work.
    "session": Role.CHAIN,
    "workflow": Role.CHAIN,
    "operation": Role.CHAIN,
    "task": Role.CHAIN,
    "chain": Role.CHAIN,
}


def classify(span: Span) -> Role | None:
    kind = span.attributes.get(SPAN_KIND)
    if not isinstance(kind, str):
        return None
    return _ROLES.get(kind, Role.OTHER)  # team, guardrail, text, http, unknown …


def _named(span: Span, role: Role) -> str | None:
    if classify(span) is not role:
        return None
    found = text(span.attributes.get(OPERATION_NAME))
    if found:
        return found
    suffix = "." + str(span.attributes.get(SPAN_KIND))
    name = span.name
    return name[: -len(suffix)] or None if name.endswith(suffix) else None


def agent_name(span: Span) -> str | None:
    """An ``@agent`` span's agent: its ``operation.name``, else its span name's stem."""
    return _named(span, Role.AGENT)


def tool_name(span: Span) -> str | None:
    """A ``@tool`` span's tool: its ``operation.name``, else its span name's stem."""
    return _named(span, Role.TOOL)


def tool_arguments(span: Span) -> AttrValue:
    """A tool span's ``tool.parameters`` when it holds the call's arguments, not a schema
    (OpenInference's meaning of the key): a JSON object that is no schema
    (``_schema_like``); else the arguments of its executed call entry (``call_entry``)."""
    if classify(span) is not Role.TOOL:
        return None
    raw = span.attributes.get(TOOL_PARAMETERS)
    parsed = parse_json(raw) if isinstance(raw, str) else INVALID
    if isinstance(parsed, dict) and not _schema_like(parsed):
        return raw
    entry = call_entry(span)
    if entry is None or called_tool(span, text(span.attributes.get(_KIND_NAME))) != entry[0]:
        return None  # (the entry of another tool: not this span's call)
    return entry[1]


def call_entry(span: Span) -> tuple[str, str] | None:
    """``(name, arguments' JSON text)`` of the executed call a tool span records as the
    one entry of a request's tool list, with its arguments (a definition has a schema,
    not arguments); the JSON string around the arguments' text is taken off."""
    attributes = span.attributes
    name, raw = text(attributes.get(CALL_NAME)), attributes.get(CALL_ARGUMENTS)
    if not name or not isinstance(raw, str) or _SECOND_ENTRY in attributes:
        return None
    inner = parse_json(raw)
    return name, inner if isinstance(inner, str) else raw


def called_tool(span: Span, name: str | None) -> str | None:
    """The tool a span ran: ``name``, unless it is only a tool kind's word (AG2's
    ``tool.name: function``) and the span's executed call entry names the tool."""
    if name is not None and name.strip().casefold() not in _KIND_WORDS:
        return name
    entry = call_entry(span) if classify(span) is Role.TOOL else None
    return entry[0] if entry is not None else name


_JSON_TYPES: Final = frozenset(
    {"string", "integer", "number", "boolean", "object", "array", "null", "any"}
)
_SCHEMA_KEYS: Final = ("$schema", "properties", "required", "additionalProperties")


def _schema_like(value: dict[str, Any]) -> bool:
    """Whether an object reads as a schema or a tool definition, not as arguments: a
    JSON Schema (``$schema``; ``type`` naming a JSON type beside schema keywords, or
    ``object``), a definition (``parameters`` beside a ``name``), or a map of parameter
    names to schemas (``{"type": <a JSON type>}``) or to bare type names."""
    kind = value.get("type")
    if "$schema" in value or ("name" in value and isinstance(value.get("parameters"), dict)):
        return True
    if isinstance(kind, str) and kind in _JSON_TYPES:
        return kind == "object" or any(key in value for key in _SCHEMA_KEYS)
    members = list(value.values())
    return bool(members) and all(_type_of(member) for member in members)


def _type_of(member: object) -> bool:
    if isinstance(member, str):
        return member in _JSON_TYPES
    kind = member.get("type") if isinstance(member, dict) else None
    return isinstance(kind, str) and kind in _JSON_TYPES


def tool_error(span: Span) -> str | None:
    """A tool span's failure under ``tool.error``: text that is no placeholder of an
    absent value, or a true flag (the generic failure)."""
    if classify(span) is not Role.TOOL:
        return None
    value = span.attributes.get(TOOL_ERROR)
    if value is True:
        return GENERIC
    found = text(value)
    if found is None or found.strip().casefold() in _NOT_ERRORS:
        return None
    return found


_NOT_ERRORS: Final = frozenset(
    {"", "none", "null", "nil", "undefined", "n/a", "false", "true", "0", "{}", "[]"}
)


def run_input(span: Span) -> str | None:
    return _plain(span, AGENT_INPUT)


def run_output(span: Span) -> str | None:
    return _plain(span, AGENT_OUTPUT)


def _plain(span: Span, key: str) -> str | None:
    """An agent span's text under ``key``: a JSON object or list is a call's arguments,
    not the user's text (a JSON string is unquoted)."""
    if classify(span) is not Role.AGENT:
        return None
    found = text(span.attributes.get(key))
    if found is None or found.lstrip()[:1] not in ('"', "{", "["):
        return found
    parsed = parse_json(found)
    if isinstance(parsed, dict | list):
        return None
    return parsed if isinstance(parsed, str) and parsed else found
