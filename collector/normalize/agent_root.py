"""The agent root: where the run itself is, below the wrappers around it (ADR 0005).

From the trace root, descend while a span holds exactly one agent or workflow child and
no model or tool call of its own. Lone plumbing spans between two wrappers are looked
through: a known convention's chain (OpenAI Agents through OpenInference nests workflow
AGENT → task CHAIN → AGENT) or spans no rule recognises (the contrib GenAI
instrumentation's ``unknown`` task span; a message runtime's send → process spans
around the agent that handles the message), as the builder looks through them. Past an
unrecognised span, the agent's siblings must do no work at all: another agent's run is
no plumbing.
An agent span stops the descent, unless it names no agent and wraps the one agent that
does, with no work of its own beside it (``wrappers.unnamed_wrapper``: a crew's or a
runner's ``invoke_agent`` around the agent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from collector.normalize.detached_calls import adopt_detached_calls
from collector.normalize.mappings import Mappings
from collector.normalize.roles import AGENTIC, LEAF_ROLES, Role
from collector.normalize.steps import agent_name, recorded_agent_name
from collector.normalize.tree import SpanTree, role_below
from collector.normalize.wrappers import child_toward, unnamed_wrapper

_MAX_DEPTH: Final = 16
_TOOL: Final = frozenset({Role.TOOL})
_PLUMBING: Final = frozenset({Role.CHAIN, Role.OTHER})


def find_agent_root(
    tree: SpanTree,
    roles: list[Role],
    work: Callable[[int, int], int],
    mappings: Mappings | None,
    runners: list[int] | None = None,
) -> int:
    """The index of the agent root (module docstring); ``work(i, 0)`` is the one kind of
    leaf work below span ``i`` (``build.RunBuilder._work``). The named agent spans passed
    as runners (rule 63) are appended to ``runners``: their failure is the run's. Calls
    cut off from the one named agent are first given back to it (``detached_calls``)."""
    adopt_detached_calls(tree, roles, mappings)
    current = tree.root
    for _ in range(_MAX_DEPTH):
        if roles[current] is Role.AGENT and recorded_agent_name(tree.spans[current], mappings):
            inner = _idle_runner(tree, roles, work, current, mappings)
            if inner is None:
                break  # (an agent that names itself and does work: the usual root)
            if runners is not None:
                runners.append(current)
            current = inner
            continue
        found = _lone_agent(tree, roles, current)
        if found is None:
            found = _through_plumbing(tree, roles, current)
            if found is None:
                break
        if roles[current] is Role.AGENT and not unnamed_wrapper(
            tree, roles, work, current, inner=found, mappings=mappings
        ):
            break
        current = found
    return current


def _idle_runner(
    tree: SpanTree,
    roles: list[Role],
    work: Callable[[int, int], int],
    outer: int,
    mappings: Mappings | None,
) -> int | None:
    """The named agent that named agent span ``outer`` only runs (rule 63): reached through lone
    agentic or plumbing children, with no model call, tool call or other agent anywhere
    below ``outer`` beside the path, *and* through a workflow span that names that same
    agent (the framework's own run of it: a runner's ``invoke_agent <app>`` >
    ``invoke_workflow <agent>`` > ``invoke_agent <agent>``). The outer span made no
    decision of its own and the framework ran the agent as a run of its own: the inner
    agent is the run's agent, not a hop. A named agent around a named sub-agent with no
    such workflow of it stays a hop (a code router's delegation)."""
    if Role.WORKFLOW not in roles:
        return None  # (the usual trace: no workflow, no runner to look through)
    current = outer
    workflows: list[int] = []
    for _ in range(_MAX_DEPTH):
        found = _lone_agent(tree, roles, current)
        if found is None:
            found = _through_plumbing(tree, roles, current)
        if found is None:  # (a run of several agents: the workflow is the run, if it is one)
            return (
                current
                if current in workflows and _runs_itself(tree, roles, current, mappings)
                else None
            )
        on_path = child_toward(tree, current, found)
        if any(work(kid, 0) != 0 for kid in tree.children(current) if kid != on_path):
            return None
        name = recorded_agent_name(tree.spans[found], mappings)
        if roles[found] is Role.AGENT and name:
            run_of_it = any(agent_name(tree.spans[w], mappings) == name for w in workflows)
            return found if run_of_it else None
        if roles[found] is Role.WORKFLOW:
            workflows.append(found)
        elif roles[found] not in AGENTIC:
            return None
        current = found
    return None


def _runs_itself(tree: SpanTree, roles: list[Role], i: int, mappings: Mappings | None) -> bool:
    """Whether workflow span ``i`` runs, as one of its own children, the agent it names
    (ADK's ``invoke_workflow <agent>`` of a team: that agent first, its sub-agents after)."""
    name = agent_name(tree.spans[i], mappings)
    return any(
        roles[kid] is Role.AGENT and recorded_agent_name(tree.spans[kid], mappings) == name
        for kid in tree.children(i)
    )


def _through_plumbing(tree: SpanTree, roles: list[Role], i: int) -> int | None:
    """The lone agent at the end of a chain of lone plumbing children below span ``i``
    (bounded), if the chain ends in one (module docstring)."""
    unrecognised = False
    for _ in range(_MAX_DEPTH):
        kids = tree.children(i)
        if len(kids) != 1 or roles[kids[0]] not in _PLUMBING:
            return None
        i = kids[0]
        unrecognised = unrecognised or roles[i] is Role.OTHER
        found = _lone_agent(tree, roles, i)
        if found is not None:
            idle = not unrecognised or all(
                kid == found or not role_below(tree, roles, kid, LEAF_ROLES, max_depth=_MAX_DEPTH)
                for kid in tree.children(i)
            )
            return found if idle else None
    return None


def _lone_agent(tree: SpanTree, roles: list[Role], i: int) -> int | None:
    """Span ``i``'s only agent/workflow child, if it has no LLM/tool child."""
    kids = tree.children(i)
    agentic = [kid for kid in kids if roles[kid] in AGENTIC]
    if len(agentic) != 1 or any(roles[kid] in LEAF_ROLES for kid in kids):
        return None
    if any(kid != agentic[0] and _calls_tools(tree, roles, kid) for kid in kids):
        return None  # (a sibling running a tool loop of its own: another agent's run)
    return agentic[0]


def _calls_tools(tree: SpanTree, roles: list[Role], i: int) -> bool:
    """Whether a tool call runs below span ``i`` through plumbing only (bounded): an agent's
    loop, unlike a lone model call that rewrites or condenses the question."""
    return role_below(tree, roles, i, _TOOL, stop=AGENTIC, max_depth=_MAX_DEPTH)
