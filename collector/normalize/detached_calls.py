"""Model and tool calls cut off from the agent that made them are that agent's (rule 93).

Two context mechanisms in one process can split a run: Laminar parents its OpenAI
client spans in a context of its own, which holds only its ``@observe`` span, while
OpenLLMetry's CrewAI spans (crew, task, agent) live in the global one. The model calls
then hang under the trace root beside the agent's branch, and the agent span has no
call below it: the run reads as having no agent, and the task's request is off the
run's path.

The trace still says whose the calls are, by time and by model. When exactly one span
names an agent, that agent has no model or tool call below it, and calls outside every
agent lie wholly within its time (and request the model it names, when both record
one), those calls are taken as the agent's children. Calls that start before the agent
or end after it stay where they are (a router's or a pre-processor's own call), and so
does a call above the agent (a clock too coarse to order them would make a cycle); a
run with two named agents is left as it is, whatever the times say.
"""

from __future__ import annotations

from typing import Final

from collector.normalize.mappings import Mappings
from collector.normalize.roles import AGENTIC, LEAF_ROLES, Role
from collector.normalize.steps import MODEL_KEYS, recorded_agent_name
from collector.normalize.tree import SpanTree, role_below
from collector.normalize.values import first

_MAX_DEPTH: Final = 16


def adopt_detached_calls(tree: SpanTree, roles: list[Role], mappings: Mappings | None) -> None:
    """Re-parent the calls cut off from the trace's one named agent (module docstring)
    to it, in ``tree``. Costs one pass over the roles when no agent is idle."""
    spans = tree.spans
    named = [
        i
        for i, role in enumerate(roles)
        if role is Role.AGENT and recorded_agent_name(spans[i], mappings)
    ]
    if len(named) != 1 or role_below(tree, roles, named[0], LEAF_ROLES, max_depth=_MAX_DEPTH):
        return
    agent = spans[named[0]]
    model = first(agent.attributes, MODEL_KEYS)
    above = _ancestors(tree, named[0])  # (never adopted: a parent cycle)
    adopted = [
        i
        for i, role in enumerate(roles)
        if role in LEAF_ROLES
        and i not in above
        and agent.start_unix_nano <= spans[i].start_unix_nano
        and spans[i].end_unix_nano <= agent.end_unix_nano
        and _same_model(model, first(spans[i].attributes, MODEL_KEYS))
        and not _below_agentic(tree, roles, i)
    ]
    if adopted:
        tree.adopt(adopted, named[0])


def _ancestors(tree: SpanTree, i: int) -> set[int]:
    found: set[int] = set()
    up = tree.parent[i]
    while up >= 0 and up not in found:
        found.add(up)
        up = tree.parent[up]
    return found


def _same_model(agent_model: object, call_model: object) -> bool:
    return agent_model is None or call_model is None or agent_model == call_model


def _below_agentic(tree: SpanTree, roles: list[Role], i: int) -> bool:
    """Whether an agent, a workflow or another call is above span ``i`` (a call's own
    layers and tools belong to that call; an agent's to that agent)."""
    up = tree.parent[i]
    for _ in range(_MAX_DEPTH):
        if up < 0:
            return False
        if roles[up] in AGENTIC or roles[up] in LEAF_ROLES:
            return True
        up = tree.parent[up]
    return True
