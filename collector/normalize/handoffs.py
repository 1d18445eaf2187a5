"""Tool calls that hand the run over to another agent: ``control`` steps.

Multi-agent frameworks switch agents through a call the model makes. The OpenAI Agents
SDK and LangGraph's supervisor give the model a ``transfer_to_<agent>`` tool, Google ADK
a ``transfer_to_agent(agent_name=…)`` tool; the framework answers the call itself
(``{"assistant": "store"}``, a ``Command(goto="store")``, "Transferred to store") and
runs the named agent next. Such a call is the framework steering its own run, not work
of the agent's: read as a tool call, every multi-agent run would "call an unexpected
tool", and exact matches and precision would fail on runs that did what they should.

The evidence, not a library's or a tool's name: an executed tool call that did not
fail, whose next step other than tool calls is a hop into agent X (an agent step named
X, not below the call, and X is not the call's own agent) with no model call between
them, and the call names X: the tool is called X or ends with ``_X``, or one of its
argument or result values (within a few levels) is X exactly.

A tool call that *runs* an agent is the other form of the same thing (delegation, an
agent as a tool: pydantic-ai's ``await other.run(…)`` inside a tool, ADK's
``AgentTool``, the OpenAI Agents SDK's ``as_tool``): the agent's hop is the call's own
child step, the work is that agent's, and its steps are in the trajectory. The call is
a ``control`` step too, so that the delegating agent is not charged with a tool call
beside the sub-agent's real ones.
"""

from __future__ import annotations

from typing import Any

from collector.normalize.step_records import KIND, with_fields
from evaluators.trajectory import Step, StepKind

_MAX_DEPTH = 6  # how deep a call's arguments and result are looked through for the name
_MAX_ITEMS = 64  # how many values of one container are looked at


def mark_handoffs(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    """``steps`` with every hand-over and every call that ran a sub-agent (module
    docstring) made a ``control`` step; the others as they were."""
    changed: list[Step] | None = None
    running = {step.parent_span_id for step in steps if step.kind is StepKind.AGENT}
    for n in range(len(steps) - 1):
        step = steps[n]
        if step.kind is not StepKind.TOOL or not step.executed:
            continue
        if step.span_id and step.span_id in running:  # the call ran a sub-agent
            if changed is None:
                changed = list(steps)
            changed[n] = with_fields(step, {KIND: StepKind.CONTROL})
            continue
        if step.error is not None:
            continue
        hop = _next_hop(steps, n + 1)
        if hop is None or not hop.name or hop.name == step.agent:
            continue
        if _names_agent(step, hop.name):
            if changed is None:
                changed = list(steps)
            changed[n] = with_fields(step, {KIND: StepKind.CONTROL})
    return steps if changed is None else tuple(changed)


def _next_hop(steps: tuple[Step, ...], start: int) -> Step | None:
    """The first step from ``start`` that is no tool call, if it is an agent step."""
    for n in range(start, len(steps)):
        kind = steps[n].kind
        if kind is StepKind.TOOL or kind is StepKind.CONTROL:
            continue
        return steps[n] if kind is StepKind.AGENT else None
    return None


def _names_agent(step: Step, agent: str) -> bool:
    """Whether the call names ``agent``: by its tool name, or as a value it carries."""
    if step.name == agent or step.name.endswith("_" + agent):
        return True
    return _holds(step.args, agent, 0) or _holds(step.result, agent, 0)


def _holds(value: Any, text: str, depth: int) -> bool:
    """Whether ``value`` is ``text`` or holds it as a whole value (bounded walk)."""
    if isinstance(value, str):
        return value.strip() == text
    if depth >= _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        items = list(value.values())[:_MAX_ITEMS]
    elif isinstance(value, list | tuple):
        items = list(value)[:_MAX_ITEMS]
    else:
        return False
    return any(_holds(item, text, depth + 1) for item in items)
