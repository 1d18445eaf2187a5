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

The same agent's other calls of a tool it only ever steered with (every call of it
that succeeded is a hand-over or a delegation) are steering too, failed or not (a
delegation to a coworker the model misnamed, retried); a tool that also did work of
its own keeps its other calls.

**A delegation**: a tool call that *runs* an agent (pydantic-ai's
``await other.run(…)`` inside a tool, ADK's ``AgentTool``, the OpenAI Agents SDK's
``as_tool``): a hop the walk entered is the call's own child step. The work is that
agent's, its steps are in the trajectory, and the delegating agent is not charged with
a tool call beside them. A call that ran an agent whose span is not below it is found by
time and content (``delegations``).

**A request the hop ran**: a framework may run the agent a call names with no tool
span at all (smolagents' managed agents: the model calls the team member like a tool
and the framework runs the agent's own ``run``). The request then has no execution of
its own, and the hop follows the model call that made it. The same evidence (the
request names the agent it comes right before, strongly) makes it a ``control`` step,
and one that ran: the hop is its execution. Requests that never ran do not count
among the calls of a batch otherwise (a closing model call that asked for something
the framework never ran still closes).

An agent step may be named after the traced object and its run method, ``<agent>.run``
(``store.run``, ``support.arun``: no attribute names the agent): a call names that agent
when it names the object. Only run methods are cut off (``support.billing``, an agent's
own dotted name, is not ``support``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Final

from collector.normalize import kinds
from collector.normalize.delegations import ModelCalls, Texts, ran_beside
from collector.normalize.instruction_switch import switched_instructions
from collector.normalize.join import LlmCall
from collector.normalize.run_text import llm_texts
from collector.normalize.step_records import EXECUTED, KIND, with_fields
from collector.normalize.values import holds_text
from evaluators.trajectory import Step

_MAX_SCAN: Final = 32  # steps looked back from a hop for its batch (parallel calls)
_SMALL_RESULT: Final = 2  # fields of a result object that may only say where the run went
_NOT_SLUG: Final = re.compile(r"[^0-9a-z]+")
# Methods that run an agent, whose names instrumentations append to the agent's object's.
_RUN_METHODS: Final = frozenset(
    {"run", "arun", "run_sync", "invoke", "ainvoke", "forward", "aforward", "kickoff", "execute"}
)


def steered(
    steps: tuple[Step, ...], agent: str | None, agents: dict[str, None], llms: list[LlmCall]
) -> tuple[Step, ...]:
    """``steps`` with the run's hand-overs and delegations made ``control``: by the hops
    the walk entered (``mark_handoffs``), or, in a run that entered none, by a switch of
    the model's instructions (``instruction_switch``, which adds to ``agents``)."""
    if any(name != agent for name in agents):  # a hop into another agent
        return mark_handoffs(steps, agents, llm_texts(llms))
    return switched_instructions(steps, llms, agents)


def mark_handoffs(
    steps: tuple[Step, ...], agents: Collection[str], texts: Texts | None = None
) -> tuple[Step, ...]:
    """``steps`` with every hand-over and every delegation (module docstring) made a
    ``control`` step; the others as they were. ``agents``: the agents the walk entered
    (an agent step of another name is a graph's node, no hop); ``texts``: the model
    calls' request and reply texts (``delegations``)."""
    hops = [
        n
        for n, step in enumerate(steps)
        if step.kind is kinds.AGENT and step.name and step.name in agents
    ]
    if not hops:
        return steps
    marked: set[int] = set()
    ran_by_hop: set[int] = set()  # requests no span ran, whose execution is the hop
    calls = ModelCalls(steps) if texts is not None else None
    for h in hops:
        hop = steps[h]
        executed, requests = _batch_before(steps, h)
        for n in executed:
            step = steps[n]
            if step.span_id and step.span_id == hop.parent_span_id and step.agent != hop.name:
                marked.add(n)  # the call ran the agent
        marked.update(_hand_overs(steps, executed, hop))
        found = _requested_hand_overs(steps, requests, hop)
        marked.update(found)
        ran_by_hop.update(found)
        if texts is not None and calls is not None:
            marked.update(ran_beside(steps, h, texts, calls))
    if not marked:
        return steps
    marked.update(_same_steering(steps, marked))
    changed = list(steps)
    for n in marked:
        ran = {EXECUTED: True} if n in ran_by_hop else {}
        changed[n] = with_fields(steps[n], {KIND: kinds.CONTROL, **ran})
    return tuple(changed)


def _same_steering(steps: tuple[Step, ...], marked: set[int]) -> list[int]:
    """The other calls of each (agent, tool) whose every successful call is marked."""
    pairs = {(steps[n].agent, steps[n].name) for n in marked}
    calls: dict[tuple[str | None, str], list[int]] = {}
    for n, step in enumerate(steps):
        if step.kind is kinds.TOOL and (step.agent, step.name) in pairs:
            calls.setdefault((step.agent, step.name), []).append(n)
    found: list[int] = []
    for group in calls.values():
        worked = [n for n in group if steps[n].executed and steps[n].error is None]
        if all(n in marked for n in worked):
            found.extend(n for n in group if n not in marked and steps[n].executed)
    return found


def _batch_before(steps: tuple[Step, ...], hop: int) -> tuple[list[int], list[int]]:
    """The executed tool calls right before the hop at ``hop``, and apart the requests no
    span executed there: back over tool and control steps, through at most one closing
    model call of their agent (none of the steps between it and the hop is a call it
    requested and that ran: they would come after it)."""
    executed: list[int] = []
    requests: list[int] = []
    closing: str | None = None
    n = hop - 1
    while n >= 0 and hop - n <= _MAX_SCAN:
        step = steps[n]
        if step.kind is kinds.TOOL or step.kind is kinds.CONTROL:
            if closing is not None and step.agent != closing:
                break
            if step.kind is kinds.TOOL:
                (executed if step.executed else requests).append(n)
        elif step.kind is kinds.LLM and closing is None and not executed:
            closing = step.agent or ""
        else:
            break
        n -= 1
    return executed, requests


def _requested_hand_overs(steps: tuple[Step, ...], requests: list[int], hop: Step) -> list[int]:
    """The requests no span ran that strongly name the agent of ``hop``."""
    targets = _targets(hop.name)
    return [
        n
        for n in requests
        if steps[n].agent != hop.name and any(_strongly_named(steps[n], t) for t in targets)
    ]


def _hand_overs(steps: tuple[Step, ...], batch: list[int], hop: Step) -> list[int]:
    """The calls of ``batch`` that hand over to ``hop`` (module docstring)."""
    targets = _targets(hop.name)
    candidates = [n for n in batch if steps[n].error is None and steps[n].agent != hop.name]
    strong = [n for n in candidates if any(_strongly_named(steps[n], t) for t in targets)]
    if strong:
        return strong
    if len(candidates) == 1 and len(batch) == 1:
        step = steps[candidates[0]]
        if any(
            holds_text(step.args, _named(t)) or holds_text(step.result, _named(t)) for t in targets
        ):
            return candidates
    return []


def _targets(agent: str) -> tuple[str, ...]:
    """The slugs a call may name ``agent`` by: its name's, and for a name
    ``<object>.<run method>`` the object's."""
    head, dot, method = agent.rpartition(".")
    if dot and method in _RUN_METHODS and head.replace("-", "_").isidentifier():
        return (slug(agent), slug(head))
    return (slug(agent),)


def _strongly_named(step: Step, target: str) -> bool:
    """The tool is called after the agent, or its whole (small) result names it."""
    name = slug(step.name)
    if name == target or name.endswith("_to_" + target):
        return True
    result = step.result
    if isinstance(result, str):
        return slug(result) == target
    if isinstance(result, dict) and 0 < len(result) <= _SMALL_RESULT:
        return any(isinstance(v, str) and slug(v) == target for v in result.values())
    return False


def slug(text: str) -> str:
    """``text`` folded for comparing names: lower case, runs of other characters as ``_``."""
    return _NOT_SLUG.sub("_", text.casefold()).strip("_")


def _named(target: str) -> Callable[[str], bool]:
    """Whether a text (of a length a name may have) is ``target``'s name, as a slug."""
    return lambda text: len(text) <= len(target) * 2 + 8 and slug(text) == target
