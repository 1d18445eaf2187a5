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

from typing import Final

from collector.core.records import AttrValue, Span
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
    (OpenInference's meaning of the key): a JSON object whose values are not parameter
    schemas (``{"type": …}`` objects) and that has no ``properties``/``$schema``."""
    if classify(span) is not Role.TOOL:
        return None
    raw = span.attributes.get(TOOL_PARAMETERS)
    parsed = parse_json(raw) if isinstance(raw, str) else INVALID
    if not isinstance(parsed, dict) or "properties" in parsed or "$schema" in parsed:
        return None
    if parsed and all(isinstance(v, dict) and "type" in v for v in parsed.values()):
        return None  # (a map of parameter name to its schema)
    return raw


def tool_error(span: Span) -> str | None:
    """A tool span's failure written as text under ``tool.error`` (not a flag)."""
    if classify(span) is not Role.TOOL:
        return None
    found = text(span.attributes.get(TOOL_ERROR))
    return None if found is None or found in _NOT_ERRORS else found


_NOT_ERRORS: Final = frozenset({"None", "False", "false", "True", "true", "null"})


def run_input(span: Span) -> str | None:
    return _plain(span, AGENT_INPUT)


def run_output(span: Span) -> str | None:
    return _plain(span, AGENT_OUTPUT)


def _plain(span: Span, key: str) -> str | None:
    """An agent span's plain text under ``key`` (a JSON value is a call's arguments)."""
    if classify(span) is not Role.AGENT:
        return None
    found = text(span.attributes.get(key))
    return None if found is None or found.lstrip()[:1] in ("{", "[") else found
