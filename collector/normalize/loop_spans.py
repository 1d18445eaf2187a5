"""A model-call span around an agent's whole loop is the loop, not a call (rule 92).

An instrumentation may type the span of a framework's generation loop like a model
call: Mastra's AI tracing, exported through the OpenInference mapping, writes one
``LLM`` span per ``agent.generate`` (the model's name, the first request's messages, the
final answer, the loop's token sums) with one ``LLM`` span per request below it, and
the tools running between them. Read as a call, the inner requests merge into it as
layers of one call (``build.RunBuilder._layer_above``): one model step per turn.

The trace says which it is. One model call runs no tool, and a second layer of one call
is one span inside it. A model-call span is the loop when both hold below it:

* a tool runs (a tool span, through plumbing);
* two or more model-call spans each record a request of their own (input messages),
  none inside another.

It is then plumbing, and each inner request is a model step. Spans of the model's role
below an inner call that record no request and name no model (its stream chunks) are
parts of that call, not second layers of it (no duplicate-instrumentation gap).
"""

from __future__ import annotations

from typing import Final

from collector.core.records import Span
from collector.normalize import conventions
from collector.normalize.roles import Role
from collector.normalize.steps import MODEL_KEYS
from collector.normalize.tree import SpanTree, role_below
from collector.normalize.values import first

_MAX_DEPTH: Final = 8
_TOOL: Final = frozenset({Role.TOOL})
_MIN_REQUESTS: Final = 2
_STOPS: Final = frozenset({Role.TOOL, Role.AGENT, Role.WORKFLOW})


def settle_loop_spans(tree: SpanTree, roles: list[Role]) -> None:
    """Turn the role of each model-call span that is an agent's loop (module docstring)
    into plumbing (``CHAIN``), and so the spans of the model's role below its calls that
    record neither a request nor a model (a call's stream chunks). A model-call span with
    nothing below it costs one lookup; each span is asked for a request at most once and
    settled at most once, whatever the nesting."""
    requested: dict[int, bool] = {}
    settled: set[int] = set()
    for i, role in enumerate(roles):
        if role is Role.LLM and tree.children(i):
            calls = _requests_below(tree, roles, i, requested)
            if len(calls) >= _MIN_REQUESTS and role_below(
                tree, roles, i, _TOOL, max_depth=_MAX_DEPTH
            ):
                roles[i] = Role.CHAIN
                for call in calls:
                    _settle_parts(tree, roles, call, requested, settled)


def _requests_below(
    tree: SpanTree, roles: list[Role], i: int, requested: dict[int, bool]
) -> list[int]:
    """The model-call spans below ``i`` that record a request, none inside another."""
    found: list[int] = []
    level = tree.children(i)
    for _ in range(_MAX_DEPTH):
        below: list[int] = []
        for j in level:
            if roles[j] is Role.LLM and _asks(tree, j, requested):
                found.append(j)  # (a call's own layers and chunks are below it: not looked at)
            else:
                below.extend(tree.children(j))
        if not below:
            break
        level = below
    return found


def _settle_parts(
    tree: SpanTree, roles: list[Role], call: int, requested: dict[int, bool], settled: set[int]
) -> None:
    """The request-less, model-less spans of the model's role below ``call`` (down to
    the next call, tool or agent) become plumbing."""
    level = [kid for kid in tree.children(call) if kid not in settled]
    for _ in range(_MAX_DEPTH):
        below: list[int] = []
        for j in level:
            settled.add(j)
            role = roles[j]
            if role in _STOPS or (role is Role.LLM and _asks(tree, j, requested)):
                continue  # (another call's parts are its own)
            if role is Role.LLM and first(tree.spans[j].attributes, MODEL_KEYS) is None:
                roles[j] = Role.CHAIN
            below.extend(kid for kid in tree.children(j) if kid not in settled)
        if not below:
            return
        level = below


def _asks(tree: SpanTree, j: int, requested: dict[int, bool]) -> bool:
    found = requested.get(j)
    if found is None:
        found = requested[j] = _requested(tree.spans[j])
    return found


def _requested(span: Span) -> bool:
    return conventions.first_text(conventions.LLM_INPUT, span) is not None
