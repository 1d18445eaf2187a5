"""Events of a call written as spans of their own.

Some instrumentations turn a framework's events into zero-length spans of the same kind
below the call they belong to: BeeAI's OpenInference instrumentation writes a failing
tool's ``error`` event as a TOOL span under the tool, and its ``final_answer`` event as
an AGENT span under the agent. Such a span is no call: it lasts no time, has no
children, sits directly below a span of its own role (agents and workflows alike) and
records none of that role's identity itself (a tool's name, a model, an agent's name;
Langfuse and MLflow name their tools by span name, so theirs are never events).
It is looked through, so it is neither a step nor a hop. (A streaming model call's
per-token spans have the same shape.)
"""

from __future__ import annotations

from typing import Final

from collector.normalize.conventions import langfuse, mlflow
from collector.normalize.mappings import Mappings
from collector.normalize.roles import AGENTIC, Role
from collector.normalize.steps import MODEL_KEYS, recorded_agent_name
from collector.normalize.tools import NAME_KEYS as TOOL_NAME_KEYS
from collector.normalize.tree import SpanTree
from collector.normalize.values import first

EVENT_ROLES: Final = frozenset({Role.LLM, Role.TOOL, Role.AGENT, Role.WORKFLOW})
# What names a tool span: a name attribute, or a convention whose tools are named by
# their span name (Langfuse and MLflow observations: the type is on every one).
_TOOL_IDENTITY: Final = (*TOOL_NAME_KEYS, langfuse.TYPE, mlflow.SPAN_TYPE)


def is_event_span(tree: SpanTree, roles: list[Role], i: int, mappings: Mappings | None) -> bool:
    """Whether span ``i`` (of a role in ``EVENT_ROLES``) is an event of its parent."""
    span = tree.spans[i]
    if span.end_unix_nano != span.start_unix_nano or tree.children(i):
        return False
    parent = tree.parent[i]
    if parent < 0:
        return False
    role, above = roles[i], roles[parent]
    if above is not role and not (role in AGENTIC and above in AGENTIC):
        return False
    attributes = span.attributes
    if role is Role.TOOL:  # no tool name of its own (a user's mapping's too)
        if mappings is not None and mappings.tool_name and mappings.tool_name in attributes:
            return False
        return first(attributes, _TOOL_IDENTITY) is None
    if role is Role.LLM:
        return first(attributes, MODEL_KEYS) is None
    return recorded_agent_name(span, mappings) is None
