"""The run's agent: what the trajectory's ``agent`` names.

The agent root's name (``agent_root``), as its attributes record it, else its span
name (``run_agents``). A root that records no agent name and is no agent itself (a
workflow, a graph) is named after the agent the run enters first, when the evidence
says which:

- a workflow (or an unrecognised span: a swarm) around several named agents, with no
  work of its own beside them (the OpenAI Agents SDK's workflow span around a triage
  agent and the agent it hands over to): the first of them, by start time. With one
  agent, ``agent_root`` has already descended into it (``wrappers.unnamed_wrapper``);
- a graph whose nodes all hold an agent and whose run starts and ends in the same node
  (a supervisor: LangGraph's ``create_supervisor`` runs the supervisor node, a worker,
  and the supervisor again): that node;
- a graph whose nodes all hold an agent, at least two of them by name, and whose run
  ends elsewhere (a swarm: ``langgraph-swarm`` runs the active agent's node, which hands
  over to another that answers): the node it enters first; a graph that runs one such
  node and nothing else with work (a swarm's later turn starting at the agent that
  answered last): that node.

Nodes with no model or tool call anywhere below them are plumbing here, whatever their
children are called (LangGraph's ``__start__`` node runs the swarm's router,
``route_to_active_agent``, which instrumentations that type runs by name call an agent).

An unrecognised root (``Role.OTHER``) is named only by its attributes.
"""

from __future__ import annotations

from typing import Final

from collector.normalize.mappings import Mappings
from collector.normalize.roles import AGENTIC, LEAF_ROLES, Role
from collector.normalize.steps import agent_name, node_name, recorded_agent_name
from collector.normalize.tree import SpanTree, role_below

_MAX_DEPTH: Final = 8  # plumbing levels looked through below a workflow for its agents
_MIN_SUPERVISOR_NODES: Final = 3  # supervisor, a worker, supervisor again
_MAX_HOLD_DEPTH: Final = 16  # levels below a node looked through for an agent
_HOLDERS: Final = AGENTIC | {Role.NODE}


def run_agents(
    tree: SpanTree,
    roles: list[Role],
    agent_root: int,
    mappings: Mappings | None,
    named: dict[int, str] | None = None,
) -> tuple[str, ...]:
    """The run's agent (module docstring), then, when the run is named after the agent
    it enters, the workflow's own name (a spec that selects the run by it still does);
    empty when nothing names the run. ``named``: the agents the trace's evidence names
    (``named_agents.confirmed_agents``), asked before a span's name."""
    span, role = tree.spans[agent_root], roles[agent_root]
    confirmed = named.get(agent_root) if named else None
    if confirmed is not None and recorded_agent_name(span, mappings) is None:
        return (confirmed,)
    if recorded_agent_name(span, mappings) is None:
        if role is Role.WORKFLOW or role is Role.OTHER:
            entry = _first_agent(tree, roles, agent_root, mappings)
            if entry is not None:
                own = agent_name(span, mappings) if role is Role.WORKFLOW else None
                return (entry, own) if own and own != entry else (entry,)
        elif role is Role.CHAIN:
            entry = _supervisor_node(tree, roles, agent_root)
            if entry is not None:
                return (entry,)
    name = recorded_agent_name(span, mappings) if role is Role.OTHER else agent_name(span, mappings)
    return (name,) if name else ()


def _first_agent(
    tree: SpanTree, roles: list[Role], top: int, mappings: Mappings | None
) -> str | None:
    """The first named agent below ``top`` through plumbing only, when ``top`` holds
    at least two and no model or tool call of its own."""
    level, agents = [top], list[int]()
    for _ in range(_MAX_DEPTH):
        below = [kid for i in level for kid in tree.children(i)]
        if not below:
            break
        if any(roles[kid] in LEAF_ROLES for kid in below):
            return None
        agents.extend(kid for kid in below if roles[kid] in AGENTIC)
        level = [kid for kid in below if roles[kid] not in AGENTIC and roles[kid] is not Role.NODE]
    named = [i for i in agents if recorded_agent_name(tree.spans[i], mappings) is not None]
    if len(named) < 2 or len(named) != len(agents):
        return None
    first = min(named, key=lambda i: tree.spans[i].start_unix_nano)
    return recorded_agent_name(tree.spans[first], mappings)


def holds_agent(tree: SpanTree, roles: list[Role], i: int) -> bool:
    """Whether an agent, a workflow or a graph node runs below span ``i`` (a node that
    only calls the model and tools is a step of its graph, not a sub-agent's run)."""
    return role_below(tree, roles, i, _HOLDERS, max_depth=_MAX_HOLD_DEPTH)


def _has_work(tree: SpanTree, roles: list[Role], i: int) -> bool:
    """Whether span ``i`` is, or has below it, a model or tool call (bounded depth)."""
    return roles[i] in LEAF_ROLES or role_below(
        tree, roles, i, LEAF_ROLES, max_depth=_MAX_HOLD_DEPTH
    )


def _supervisor_node(tree: SpanTree, roles: list[Role], top: int) -> str | None:
    """The node a graph's run enters first, when all its children with work are nodes
    that hold an agent (module docstring: a supervisor, a swarm)."""
    kids = sorted(tree.children(top), key=lambda k: tree.spans[k].start_unix_nano)
    working = [k for k in kids if _has_work(tree, roles, k)]
    nodes = [k for k in working if roles[k] is Role.NODE and holds_agent(tree, roles, k)]
    if not nodes or len(nodes) != len(working):
        return None
    names = [node_name(tree.spans[k]) for k in nodes]
    first, last = names[0], names[-1]
    if len(nodes) >= _MIN_SUPERVISOR_NODES and first == last:  # a supervisor
        return first
    if first != last and len(set(names)) >= 2:  # a swarm: the entry hands over
        return first
    if len(nodes) == 1 and len(kids) > 1:  # one agent's node beside plumbing only
        return first
    return None
