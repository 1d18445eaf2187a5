"""Spans that wrap the run's work without being steps of their own.

**Operations none of the roles knows.** A span with a GenAI operation name no rule
knows (``Role.OTHER``) that wraps model or tool calls or agents (a generation, a step
of the loop: Mastra's ``model_generation``, ``agent_step``) or is part of a model call
(its stream chunks) is plumbing; one that stands alone (a memory read) stays an
``other`` step, and so does a vendor's named kind (OpenInference's RETRIEVER).

**Agent spans that are the loop's model step, not a hop to another agent.** Some
instrumentations record each run of a graph's model node as an agent span (OpenLIT
writes LangGraph's ``model`` node as ``invoke_agent model``), beside the tool spans that
run what it asked for. A sub-agent does its own work below its span; this one only
wraps model calls whose requested tools ran *beside* it, under the same parent. That
is the evidence, not the name: its model calls requested a call (id and tool name)
that a sibling tool span executed. The siblings of the same name under that parent
are the same wrapper (the loop's last model run requests no tool), so the verdict is
per (parent, name).

**Agent spans that name no agent, inside one that does.** An agent span whose
attributes record no agent name and whose span name is only its GenAI operation
(``invoke_agent``: the form the GenAI conventions prescribe when the name is unknown)
names nothing to hop to. Below an agent the walk is already in, whose model and tool
calls all sit in such spans (none beside them), it is a turn of that agent's loop
(OpenLIT writes the OpenAI Agents SDK's per-model-step ``turn`` spans, which it does
not know, as bare ``invoke_agent``): looked through, its children stay that agent's.
Beside the agent's own model calls it is a sub-agent, unnamed. The mirror of
``unnamed_wrapper`` (such a span *around* the named agent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from collector.core.records import Span
from collector.normalize import conventions
from collector.normalize.conventions import genai
from collector.normalize.conventions.openinference import INPUT_VALUE, OUTPUT_VALUE
from collector.normalize.mappings import Mappings
from collector.normalize.roles import AGENTIC, LANGFUSE, Role
from collector.normalize.steps import agent_name, node_name, recorded_agent_name
from collector.normalize.tools import CALL_ID_KEYS, NAME_KEYS
from collector.normalize.tree import SpanTree
from collector.normalize.values import first, scalar_text, text

_MAX_DEPTH: Final = 16  # how deep below a wrapper its model calls are looked for
_LLM: Final = int(Role.LLM)


def wraps_work(
    tree: SpanTree,
    work: Callable[[int, int], int],
    layer_above: Callable[[int, Role], int | None],
    i: int,
) -> bool:
    """Whether span ``i`` (``Role.OTHER``) is an unknown GenAI operation that wraps work or
    is part of a model call (module docstring). ``work`` and ``layer_above`` are the
    builder's (``build.RunBuilder._work``, ``_layer_above``)."""
    if genai.OPERATION not in tree.spans[i].attributes:
        return False
    return work(i, 0) != 0 or layer_above(i, Role.LLM) is not None


def not_a_hop(
    tree: SpanTree,
    roles: list[Role],
    work: Callable[[int, int], int],
    i: int,
    *,
    memo: dict[tuple[int, str], bool],
    family: str,
    mappings: Mappings | None,
) -> bool:
    """Whether agent span ``i`` (not the agent root) is no hop: the loop's model step
    (``is_model_wrapper``), or a Langfuse ``agent`` observation with no work below it
    (Langfuse's LangChain handler types any chain whose name or class path says "agent"
    an agent: AgentExecutor's ``RunnableAssign<agent_scratchpad>``, its output parser),
    or an empty unnamed agent span / an agent's own workflow (``no_agent_inside``), or a
    graph hook that returned nothing (``empty_hook``)."""
    if no_agent_inside(tree, roles, i, mappings, memo):
        return True
    if family == LANGFUSE and work(i, 0) == 0:
        return True
    if empty_hook(tree, i):
        return True
    return is_model_wrapper(tree, roles, work, i, memo)


# What a span records as its output when the function it traced returned nothing.
_NOTHING: Final = frozenset({"null", "None", ""})


def empty_hook(tree: SpanTree, i: int) -> bool:
    """Whether agent or graph-node span ``i`` has nothing below it and recorded its output
    as nothing (JSON ``null``) and no input: a hook of the framework's graph (Deep Agents'
    ``PatchToolCallsMiddleware.before_agent`` node, typed an agent by its name), not a
    hop and not a step. The recorded null is the evidence (content capture was on, and
    nothing was handed over); a remote sub-agent with content capture off records no
    output at all, and stays a hop (``no_agent_inside``)."""
    if tree.children(i):
        return False
    attributes = tree.spans[i].attributes
    output = attributes.get(OUTPUT_VALUE)
    if not isinstance(output, str) or output.strip() not in _NOTHING:
        return False
    request = attributes.get(INPUT_VALUE)
    return request is None or (isinstance(request, str) and request.strip() in _NOTHING)


def is_model_wrapper(
    tree: SpanTree,
    roles: list[Role],
    work: Callable[[int, int], int],
    i: int,
    memo: dict[tuple[int, str], bool],
) -> bool:
    """Whether agent span ``i`` (not the agent root) wraps model calls only, whose
    requested tools ran beside it (module docstring). ``work(i, 0)`` is the one kind
    of leaf work below span ``i`` (``build.RunBuilder._work``)."""
    parent = tree.parent[i]
    if parent < 0 or work(i, 0) != _LLM:
        return False
    key = (parent, tree.spans[i].name)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _requests_ran_beside(tree, roles, work, parent, key[1])
    return found


def _requests_ran_beside(
    tree: SpanTree, roles: list[Role], work: Callable[[int, int], int], parent: int, name: str
) -> bool:
    kids = tree.children(parent)
    ran: set[tuple[str, str | None]] = set()  # (call id, tool name): ids alone may repeat
    for kid in kids:
        if roles[kid] is Role.TOOL:
            attributes = tree.spans[kid].attributes
            call_id = scalar_text(first(attributes, CALL_ID_KEYS))
            if call_id is not None:
                ran.add((call_id, text(first(attributes, NAME_KEYS))))
    if not ran:
        return False
    for kid in kids:
        if roles[kid] in AGENTIC and tree.spans[kid].name == name and work(kid, 0) == _LLM:
            for llm in _model_calls_below(tree, roles, kid):
                for call in conventions.requested_calls(tree.spans[llm]):
                    call_id = call.call_id
                    if call_id is not None and (
                        (call_id, call.name) in ran or (call_id, None) in ran
                    ):
                        return True  # (a tool span without a name attribute: by id)
    return False


def _model_calls_below(tree: SpanTree, roles: list[Role], top: int) -> list[int]:
    found: list[int] = []
    level = [top]
    for _ in range(_MAX_DEPTH):
        below = [kid for i in level for kid in tree.children(i)]
        if not below:
            break
        found.extend(i for i in below if roles[i] is Role.LLM)
        level = [i for i in below if roles[i] is not Role.LLM]
    return found


def unnamed_wrapper(
    tree: SpanTree,
    roles: list[Role],
    work: Callable[[int, int], int],
    outer: int,
    *,
    inner: int,
    mappings: Mappings | None,
) -> bool:
    """An agent span that records no agent name (only its span name: a crew's or a
    runner's ``invoke_agent`` without ``gen_ai.agent.name``) around the one agent that
    does, with no work of its own beside it, is the same run, not a hop into it: the
    named one is the run's agent."""
    if roles[inner] is not Role.AGENT:
        return False
    spans = tree.spans
    if recorded_agent_name(spans[outer], mappings) is not None:
        return False
    if recorded_agent_name(spans[inner], mappings) is None:
        return False
    on_path = child_toward(tree, outer, inner)
    return all(work(kid, 0) == 0 for kid in tree.children(outer) if kid != on_path)


def child_toward(tree: SpanTree, outer: int, inner: int) -> int:
    """The child of ``outer`` on the path down to its descendant ``inner`` (``inner``
    itself if no such path: then nothing beside it is excused)."""
    at = inner
    for _ in range(64):  # the agent root's descent is bounded far below this
        up = tree.parent[at]
        if up == outer:
            return at
        if up < 0:
            return inner
        at = up
    return inner


def anonymous_agent(span: Span, mappings: Mappings | None) -> bool:
    """Whether an agent span names no agent: no agent-name attribute, and a span name
    that is empty or only its GenAI operation (module docstring)."""
    if recorded_agent_name(span, mappings) is not None:
        return False
    operation = text(span.attributes.get(genai.OPERATION))
    return not span.name.strip() or (operation is not None and span.name.strip() == operation)


_WRAPPED: Final = frozenset({Role.LLM, Role.TOOL, Role.AGENT, Role.WORKFLOW, Role.NODE})


def rewraps(
    tree: SpanTree, roles: list[Role], i: int, agent: str | None, mappings: Mappings | None
) -> bool:
    """Whether agent span ``i`` records no agent name and its only child with a role
    (through plumbing) is a node or agent named ``agent``, with no work beside it: a
    call wrapper around the hop the walk is already in (langgraph-supervisor's
    ``call_agent`` around the worker's node), not a hop of its own."""
    if agent is None or recorded_agent_name(tree.spans[i], mappings) is not None:
        return False
    level, found = [i], []
    for _ in range(_MAX_DEPTH):
        below = [kid for j in level for kid in tree.children(j)]
        if not below:
            break
        found += [k for k in below if roles[k] in _WRAPPED]
        level = [k for k in below if roles[k] not in _WRAPPED]
    if len(found) != 1:
        return False
    inner = tree.spans[found[0]]
    if roles[found[0]] is Role.NODE:
        return node_name(inner) == agent
    return roles[found[0]] in AGENTIC and agent_name(inner, mappings) == agent


def _empty_unnamed(tree: SpanTree, i: int, mappings: Mappings | None) -> bool:
    """An agentic span with nothing below it that records no agent name."""
    return not tree.children(i) and recorded_agent_name(tree.spans[i], mappings) is None


def _agents_loop(tree: SpanTree, roles: list[Role], i: int) -> bool:
    """Span ``i`` is a workflow directly inside an agent span."""
    parent = tree.parent[i]
    return roles[i] is Role.WORKFLOW and parent >= 0 and roles[parent] is Role.AGENT


def no_agent_inside(
    tree: SpanTree,
    roles: list[Role],
    i: int,
    mappings: Mappings | None,
    memo: dict[tuple[int, str], bool],
) -> bool:
    """Agentic span ``i`` is no hop: a workflow directly inside an agent span that holds
    no agent or graph node (only model and tool calls, and agentic spans with nothing
    below them that name no agent): that agent's own loop run as a workflow (CrewAI's
    ``AgentExecutor`` flow), whose work stays the agent's; or one of those empty unnamed
    spans inside such a loop (OpenLIT's spans around the flow's async methods, which end
    when the coroutine is created: rule 24 without the zero length). An empty unnamed
    agent span anywhere else stays a hop (a remote sub-agent, its work in another trace).
    A loop's verdict is kept in ``memo``: each of its empty spans asks for it."""
    parent = tree.parent[i]
    if parent >= 0 and _empty_unnamed(tree, i, mappings) and _agents_loop(tree, roles, parent):
        i = parent
    if not _agents_loop(tree, roles, i):
        return False
    key = (-1 - i, "")  # (``is_model_wrapper``'s keys hold a parent index, never negative)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _holds_no_agent(tree, roles, i, mappings)
    return found


def _holds_no_agent(tree: SpanTree, roles: list[Role], i: int, mappings: Mappings | None) -> bool:
    """Below span ``i``: no graph node, and no agentic span but empty unnamed ones."""
    level = [i]
    for _ in range(_MAX_DEPTH):
        below = [kid for j in level for kid in tree.children(j)]
        if not below:
            return True
        for kid in below:
            if roles[kid] is Role.NODE:
                return False
            if roles[kid] in AGENTIC and not _empty_unnamed(tree, kid, mappings):
                return False
        level = [kid for kid in below if roles[kid] not in (Role.LLM, Role.TOOL)]
    return False
