"""Tool calls that hand the run over to another agent, or run one: ``control`` steps.

Multi-agent frameworks switch agents through a call the model makes. The OpenAI Agents
SDK and LangGraph's supervisor give the model a ``transfer_to_<agent>`` tool, Google ADK
a ``transfer_to_agent(agent_name=…)`` tool, Strands' swarm ``handoff_to_agent``; the
framework answers the call itself (``{"assistant": "store"}``, a
``Command(goto="store")``, "Transferred to store") and runs the named agent next. Such a
call is the framework steering its own run, not work of the agent's: read as a tool
call, every multi-agent run would "call an unexpected tool", and exact matches and
precision would fail on runs that did what they should.

**A hand-over**, by evidence (no library's or tool's name): among the executed calls
that did not fail and come right before a hop into agent X (an agent step named X that
the walk entered, not below the calls, X not their own agent), with at most the calling
agent's closing model call between (one that requested no further call), the calls
that name X:

- strongly: the tool's name is X or ends in ``_to_X`` (``transfer_to_X``,
  ``handoff_to_X``), compared as slugs (``Billing Agent`` and ``billing_agent`` are
  one name); or its result is X, or an object of one or two fields holding X;
- weakly: one of its argument or result values, within a few levels, is X
  (``{"agent_name": X}``). A weak call is a hand-over only when it is the only call
  there: beside others (``create_ticket(department="billing")`` made with
  ``transfer_to_billing``) the value may be the agent's own business.

All the strong ones are hand-overs (a framework may record one hand-over twice: the
model's request and its own span of the switch).

The same agent's other calls of a tool it handed over or delegated with are steering
too, failed or not (a delegation to a coworker the model misnamed, retried).

**A delegation**: a tool call that *runs* an agent (pydantic-ai's
``await other.run(…)`` inside a tool, ADK's ``AgentTool``, the OpenAI Agents SDK's
``as_tool``): a hop the walk entered is the call's own child step. The work is that
agent's, its steps are in the trajectory, and the delegating agent is not charged with
a tool call beside them. Not every instrumentation nests the agent's span below the call
that ran it (OpenLLMetry's OpenAI Agents processor parents every agent span to the
workflow root): a call whose span holds the hop's in time and that carries the
sub-agent's exchange (one of its argument values is the hop's first model request, or
its result the hop's last model reply) ran it too. An agent that merely ran while a long
call was under way (a parallel branch) carries neither.

**A request the hop ran**: a framework may run the agent a call names with no tool
span at all (smolagents' managed agents: the model calls the team member like a tool
and the framework runs the agent's own ``run``). The request then has no execution of
its own, and the hop follows the model call that made it. The same evidence (the
request names the agent it comes right before) makes it a ``control`` step, and one
that ran: the hop is its execution.

An agent step may be named after the traced object and method, ``<agent>.<method>``
(``store.run``, ``support.arun``), when no attribute names the agent: a call names that
agent when it names the object, a bare identifier followed by one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any

from collector.normalize.step_records import EXECUTED, KIND, with_fields
from evaluators.trajectory import Step, StepKind

_MAX_DEPTH = 6  # how deep a call's arguments and result are looked through for the name
_MAX_ITEMS = 64  # how many values of one container are looked at
_MAX_SCAN = 32  # steps looked ahead of a call for the hop (a batch of parallel calls)
_SMALL_RESULT = 2  # fields of a result object that may only say where the run went
_NOT_SLUG = re.compile(r"[^0-9a-z]+")
_MAX_BACK = 128  # steps looked back from a hop for a call that ran it beside
_SLACK_NS = 1_000  # rounding of ``duration_s`` when one span's end is compared with another's

# A model call's (request text, reply text), by its step's span id.
Texts = Callable[[str], tuple[str | None, str | None]]


def mark_handoffs(
    steps: tuple[Step, ...], agents: Collection[str], texts: Texts | None = None
) -> tuple[Step, ...]:
    """``steps`` with every hand-over and every delegation (module docstring) made a
    ``control`` step; the others as they were. ``agents``: the agents the walk entered
    (an agent step of another name is a graph's node, no hop); ``texts``: the model
    calls' request and reply texts (for a delegation whose hop is not nested)."""
    hops = [
        n
        for n, step in enumerate(steps)
        if step.kind is StepKind.AGENT and step.name and step.name in agents
    ]
    if not hops:
        return steps
    marked: set[int] = set()
    for h in hops:
        hop = steps[h]
        parent = hop.parent_span_id
        batch = _batch_before(steps, h)
        for n in batch:
            step = steps[n]
            if step.span_id and step.span_id == parent and step.agent != hop.name:
                marked.add(n)  # the call ran the agent
        marked.update(_hand_overs(steps, batch, hop))
        if texts is not None:
            marked.update(_ran_beside(steps, h, texts))
    if not marked:
        return steps
    # The same agent's other calls of a tool it handed over or delegated with are the
    # same steering, failed or not (CrewAI's delegation to a coworker it misnamed, then
    # to the right one).
    steering = {(steps[n].agent, steps[n].name) for n in marked}
    marked.update(
        n
        for n, step in enumerate(steps)
        if step.kind is StepKind.TOOL and (step.agent, step.name) in steering
    )
    changed = list(steps)
    for n in marked:
        ran = {EXECUTED: True} if not steps[n].executed else {}  # (the hop ran the request)
        changed[n] = with_fields(steps[n], {KIND: StepKind.CONTROL, **ran})
    return tuple(changed)


def _batch_before(steps: tuple[Step, ...], hop: int) -> list[int]:
    """The executed tool calls right before the hop at ``hop``, and the requests no span
    executed there: back over tool and control steps, through at most one closing model
    call of their agent (none of the steps between it and the hop is a call it
    requested: they would come after it)."""
    found: list[int] = []
    closing: str | None = None
    n = hop - 1
    while n >= 0 and hop - n <= _MAX_SCAN:
        step = steps[n]
        if step.kind is StepKind.TOOL or step.kind is StepKind.CONTROL:
            if closing is not None and step.agent != closing:
                break
            if step.kind is StepKind.TOOL:
                found.append(n)
        elif step.kind is StepKind.LLM and closing is None and not found:
            closing = step.agent or ""
        else:
            break
        n -= 1
    return found


def _ran_beside(steps: tuple[Step, ...], h: int, texts: Texts) -> list[int]:
    """The calls before the hop at ``h`` that ran its agent without holding its span
    (module docstring): their time holds the hop's, and they carry its exchange."""
    hop = steps[h]
    start, end = hop.start_unix_nano, _end(hop)
    inside: list[str] = []
    for s in steps[h + 1 :]:
        if s.start_unix_nano > end + _SLACK_NS:
            break  # (steps are in start order: the rest began after the hop ended)
        if s.kind is StepKind.LLM and s.agent == hop.name and s.span_id:
            inside.append(s.span_id)
    if not inside:
        return []
    request, _ = texts(inside[0])
    _, reply = texts(inside[-1])
    found: list[int] = []
    for n in range(h - 1, max(-1, h - 1 - _MAX_BACK), -1):
        step = steps[n]
        if step.kind is not StepKind.TOOL or not step.executed or step.agent == hop.name:
            continue
        if step.start_unix_nano > start or _end(step) + _SLACK_NS < end:
            continue
        result = step.result
        answered = (
            isinstance(result, str) and bool(reply) and result.strip() == (reply or "").strip()
        )
        if answered or (request and _carries_text(step.args, request, 0)):
            found.append(n)
    return found


def _end(step: Step) -> int:
    return step.start_unix_nano + round(step.duration_s * 1e9)


def _carries_text(value: Any, text: str, depth: int) -> bool:
    """Whether ``value`` is ``text`` or holds it as a whole value (bounded walk)."""
    if isinstance(value, str):
        return value.strip() == text.strip()
    if depth >= _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        items = list(value.values())[:_MAX_ITEMS]
    elif isinstance(value, list | tuple):
        items = list(value)[:_MAX_ITEMS]
    else:
        return False
    return any(_carries_text(item, text, depth + 1) for item in items)


def _hand_overs(steps: tuple[Step, ...], batch: list[int], hop: Step) -> list[int]:
    """The calls of ``batch`` that hand over to ``hop`` (module docstring)."""
    targets = _targets(hop.name)
    candidates = [n for n in batch if steps[n].error is None and steps[n].agent != hop.name]
    strong = [n for n in candidates if any(_strongly_named(steps[n], t) for t in targets)]
    if strong:
        return strong
    if len(candidates) == 1 and len(batch) == 1:
        step = steps[candidates[0]]
        if any(_holds(step.args, t, 0) or _holds(step.result, t, 0) for t in targets):
            return candidates
    return []


def _targets(agent: str) -> tuple[str, ...]:
    """The slugs a call may name ``agent`` by: its name's, and for a name
    ``<object>.<method>`` (two bare identifiers) the object's."""
    head, dot, method = agent.rpartition(".")
    if dot and method.isidentifier() and head.replace("-", "_").isidentifier():
        return (_slug(agent), _slug(head))
    return (_slug(agent),)


def _strongly_named(step: Step, target: str) -> bool:
    """The tool is called after the agent, or its whole (small) result names it."""
    name = _slug(step.name)
    if name == target or name.endswith("_to_" + target):
        return True
    result = step.result
    if isinstance(result, str):
        return _slug(result) == target
    if isinstance(result, dict) and 0 < len(result) <= _SMALL_RESULT:
        return any(isinstance(v, str) and _slug(v) == target for v in result.values())
    return False


def _slug(text: str) -> str:
    """``text`` folded for comparing names: lower case, runs of other characters as ``_``."""
    return _NOT_SLUG.sub("_", text.casefold()).strip("_")


def _holds(value: Any, target: str, depth: int) -> bool:
    """Whether ``value`` is, or holds as a whole value, a text whose slug is ``target``
    (bounded walk)."""
    if isinstance(value, str):
        return len(value) <= len(target) * 2 + 8 and _slug(value) == target
    if depth >= _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        items = list(value.values())[:_MAX_ITEMS]
    elif isinstance(value, list | tuple):
        items = list(value)[:_MAX_ITEMS]
    else:
        return False
    return any(_holds(item, target, depth + 1) for item in items)
