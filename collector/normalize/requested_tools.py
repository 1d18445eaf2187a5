"""Spans that run a requested tool call without being typed a tool (ADR 0017, rule 61).

A vendor may type a tool's execution like any traced function: Langfuse JS v4's
LangChain handler starts every tool run as a plain ``span`` observation (its Python
SDK types it ``tool``), so the span reads as plumbing and every call the model
requested reads as never executed. The trace itself confirms what the span is: a
model call that ended before the span started requested a call of the span's name,
and the span recorded, as its input, exactly that call's arguments (as a JSON object;
a bare name is no evidence: a wrapper may share a tool's name). Such a span, with no
model call, tool, agent or node below it, is read as that call's tool span.

So is a span that failed (status ERROR) under the name the GenAI conventions give a
tool's execution, ``execute_tool <tool>``, when a model call that ended before it
started requested a call of that tool, and nothing runs below it: an instrumentation
that writes a tool span's attributes only once the tool returned (OpenLIT's smolagents
spans) leaves a failed call with its name and its error only. The step takes the
requested call's arguments and id (``join``), and its error from the span's status. A
request that a tool span already ran is not run a second time by such a span.

The model calls' requests are parsed only when some plumbing span records a JSON
object as its input, and then once: the builder reuses them (``requested``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, TypeAlias

from collector.core.records import StatusCode
from collector.normalize import conventions
from collector.normalize.messages import RequestedCall
from collector.normalize.roles import Role
from collector.normalize.tools import NAME_KEYS as TOOL_NAME_KEYS
from collector.normalize.tree import SpanTree, role_below
from collector.normalize.values import first, json_object

_CANDIDATES: Final = frozenset({Role.CHAIN, Role.OTHER})
# The span name the GenAI conventions give a tool's execution: ``execute_tool {tool}``.
_EXECUTE_TOOL: Final = "execute_tool "
_WORK: Final = frozenset({Role.LLM, Role.TOOL, Role.AGENT, Role.WORKFLOW, Role.NODE})
_MAX_DEPTH: Final = 8

Requested: TypeAlias = dict[int, list[RequestedCall]]  # model span index → its requests


def confirmed_tools(tree: SpanTree, roles: list[Role], argument_keys: Sequence[str]) -> Requested:
    """Turn ``roles`` of the spans that run a requested call (module docstring) to TOOL;
    return the requested calls parsed on the way, by model span index."""
    parsed: Requested = {}
    if Role.CHAIN not in roles and Role.OTHER not in roles:
        return parsed  # (most traces: every span is a model call, a tool, an agent …)
    candidates: list[tuple[int, str]] = []  # plumbing that records an object as its input
    failed: list[tuple[int, str]] = []  # failed plumbing named as a tool's execution
    for i, span in enumerate(tree.spans):
        if roles[i] in _CANDIDATES:
            raw = _recorded_input(span.attributes, argument_keys)
            if raw is not None:
                candidates.append((i, raw))
            elif span.status_code == StatusCode.ERROR and span.name.startswith(_EXECUTE_TOOL):
                failed.append((i, span.name[len(_EXECUTE_TOOL) :]))
    if not candidates and not failed:
        return parsed
    requests = _requests(tree, roles, parsed)
    names = {name for _, name, _ in requests}
    for i, raw in candidates:
        span = tree.spans[i]
        if span.name not in names:
            continue  # (the input is parsed only for a span named like a requested call)
        args = json_object(raw)
        if (
            args
            and any(
                name == span.name and wanted == args and end <= span.start_unix_nano
                for end, name, wanted in requests
            )
            and not role_below(tree, roles, i, _WORK, max_depth=_MAX_DEPTH)
        ):
            roles[i] = Role.TOOL
    for i, tool in failed:
        start = tree.spans[i].start_unix_nano
        asked = sum(name == tool and end <= start for end, name, _ in requests)
        if asked > _executions(tree, roles, tool) and not role_below(
            tree, roles, i, _WORK, max_depth=_MAX_DEPTH
        ):
            roles[i] = Role.TOOL
    return parsed


def _executions(tree: SpanTree, roles: list[Role], tool: str) -> int:
    """How many tool spans of the trace name ``tool`` (calls already recorded as run:
    a failed span named after one is not another execution of it)."""
    return sum(
        role is Role.TOOL and first(tree.spans[i].attributes, TOOL_NAME_KEYS) == tool
        for i, role in enumerate(roles)
    )


def _requests(tree: SpanTree, roles: list[Role], parsed: Requested) -> list[tuple[int, str, Any]]:
    """``(end of the model call, name, arguments)`` of every call a model call requested;
    each model call's requests noted in ``parsed``."""
    requests: list[tuple[int, str, Any]] = []
    for i, span in enumerate(tree.spans):
        if roles[i] is Role.LLM:
            try:
                calls = parsed[i] = conventions.requested_calls(span)
            except Exception:  # an odd span: the builder's visit reports it (``_unreadable``)
                continue
            requests.extend((span.end_unix_nano, call.name, call.args) for call in calls)
    return requests


def _recorded_input(attributes: Any, argument_keys: Sequence[str]) -> str | None:
    """The text a span records as its arguments (read as ``tools.ToolDraft`` reads them),
    when it opens an object (a map recorded as such is no tool input any instrumentation
    writes)."""
    value = first(attributes, argument_keys)
    return value if isinstance(value, str) and value.startswith("{") else None
