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

from collector.core.records import Span
from collector.normalize.roles import Role
from collector.normalize.values import session_keys, text

NAME: Final = "agentops"
SPAN_KIND: Final = "agentops.span.kind"
OPERATION_NAME: Final = "operation.name"  # the decorated function's, class's or given name
TOOL_INPUT: Final = "agentops.tool.input"
TOOL_OUTPUT: Final = "agentops.tool.output"
# Its OpenAI Agents SDK integration's tool spans: the return value as JSON (beside the
# arguments as ``tool.parameters``, a key OpenInference uses for the tool's schema, so
# not read: the model's request gives them).
TOOL_RESULT: Final = "tool.result"
SESSION_KEYS: Final[tuple[str, ...]] = session_keys("trace.metadata.")

KEYS: Final[tuple[str, ...]] = (
    SPAN_KIND,
    OPERATION_NAME,
    TOOL_INPUT,
    TOOL_OUTPUT,
    TOOL_RESULT,
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
