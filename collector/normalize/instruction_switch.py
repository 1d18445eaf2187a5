"""Hand-overs inside one loop: the model is given another agent's instructions after a
call (ADR 0017, rule 49).

Some frameworks run several agents in one loop with no span per agent (LlamaIndex's
``AgentWorkflow``: its steps are siblings of one workflow span, and the agents' names
are only in Python reprs). The only record of a hand-over is then the call that made
it, ``handoff(to_agent="store")``, and that the model calls after it run under other
instructions. Read as a tool call, the hand-over is an "unexpected tool" of every run.

A successful executed tool call C, in a run that recorded no hop into another agent,
is a hand-over to agent X when

- one of its argument values is a name X (a short single-line text with a letter, the
  whole value) that its result also holds as text, and
- the model call that requested C and the next model call both record a system prompt,
  and the two differ within their first 64 characters: another agent's instructions,
  not an instruction block edited in place (a memory, a date) further on; and the
  run's first and last model calls were not sent the same opening (a run that ends
  with the agent it started with is not read: A → B → A goes unseen).

C becomes a ``control`` step; the steps after it are X's, until the next hand-over;
X joins the run's agents.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from collector.core.records import Span
from collector.normalize.conventions import genai_events
from collector.normalize.conventions.genai import INPUT_MESSAGES
from collector.normalize.conventions.openinference import INPUT_MESSAGES as OI_MESSAGES
from collector.normalize.join import LlmCall
from collector.normalize.messages import message_list, role_of, text_of
from collector.normalize.step_records import KIND, with_fields
from collector.normalize.values import INVALID, holds_text, parse_json
from evaluators.trajectory import Step, StepKind

AGENT = Step._fields.index("agent")
_SAME_START = 64  # characters of two prompts compared: different agents differ early
_OPENING = 256  # characters of a JSON history holding the first message's opening
_NAME = re.compile(r"[^\W\d_][\w .:-]{2,63}")  # one line, a letter first, 3 to 64
_INSTRUCTION_ROLES = frozenset({"system", "developer"})
_FIRST_ROLE = f"{OI_MESSAGES}0.message.role"
_FIRST_CONTENT = f"{OI_MESSAGES}0.message.content"


def switched_instructions(
    steps: tuple[Step, ...], llms: list[LlmCall], agents: dict[str, None]
) -> tuple[Step, ...]:
    """``steps`` with every hand-over of the module docstring made ``control`` and the
    steps after it given their agent; the agents handed over to are added to ``agents``.

    Cost: a run whose first and last model calls open with the same text (most runs: one
    agent, the same instructions throughout) is returned at once, nothing parsed; the
    others compare their model calls' instructions around each successful call, and
    read a call's arguments and result only where the instructions changed."""
    if len(llms) < 2 or _opening(llms[0]) == _opening(llms[-1]):  # (in trajectory order)
        return steps
    calls = {llm.step.span_id: llm for llm in llms}
    read: dict[str, str | None] = {}
    switches: list[tuple[int, str]] = []
    for k, step in enumerate(steps):
        if step.kind is not StepKind.TOOL or not step.executed or step.error is not None:
            continue
        before = _model_call(steps, range(k - 1, -1, -1), calls)
        after = _model_call(steps, range(k + 1, len(steps)), calls)
        if before is None or after is None:
            continue
        old, new = _read(before, read), _read(after, read)
        if old is None or new is None or old[:_SAME_START] == new[:_SAME_START]:
            continue
        name = _echoes_a_name(step)
        if name is not None:
            switches.append((k, name))
    changed = list(steps)
    for at, (k, name) in enumerate(switches):
        changed[k] = with_fields(steps[k], {KIND: StepKind.CONTROL})
        end = switches[at + 1][0] if at + 1 < len(switches) else len(steps)
        for j in range(k + 1, end):
            changed[j] = with_fields(changed[j], {AGENT: name})
        agents[name] = None
    return tuple(changed)


def _read(llm: LlmCall, read: dict[str, str | None]) -> str | None:
    key = llm.step.span_id
    if key not in read:
        read[key] = instructions(llm)
    return read[key]


def _opening(llm: LlmCall) -> str | None:
    """The first characters of what a model call was sent, unparsed: equal for two calls
    sent the same instructions (the first message), whatever followed."""
    for span in llm.spans:
        attributes = span.attributes
        content = attributes.get(_FIRST_CONTENT)
        if isinstance(content, str):
            return content[:_SAME_START]
        raw = attributes.get(INPUT_MESSAGES)
        if isinstance(raw, str):
            return raw[:_OPENING]
        for event in span.events[:4]:  # the first message event (or the 1.26 prompt)
            if event.name.startswith("gen_ai.") and event.attributes:
                return repr(sorted(event.attributes.items()))[:_OPENING]
    return None


def _echoes_a_name(step: Step) -> str | None:
    """The name among an executed, successful tool call's argument values that its
    result holds too, if there is one."""
    if step.kind is not StepKind.TOOL or not step.executed or step.error is not None:
        return None
    args, result = step.args, step.result
    if not isinstance(args, dict) or result is None:
        return None
    for value in list(args.values())[:16]:
        named = isinstance(value, str) and _NAME.fullmatch(value) is not None
        if named and holds_text(result, _containing(value)):
            return str(value)
    return None


def _containing(name: str) -> Callable[[str], bool]:
    return lambda text: name in text


def _model_call(steps: tuple[Step, ...], at: range, calls: dict[str, LlmCall]) -> LlmCall | None:
    """The first model call met walking ``at`` (a tool call's neighbours)."""
    for j in at:
        if steps[j].kind is StepKind.LLM:
            return calls.get(steps[j].span_id)
    return None


def instructions(llm: LlmCall) -> str | None:
    """The system prompt a model call was sent, from the first layer recording one."""
    for span in llm.spans:
        found = _instructions(span)
        if found is not None:
            return found
    return None


def _instructions(span: Span) -> str | None:
    attributes = span.attributes
    role = attributes.get(_FIRST_ROLE)
    if isinstance(role, str):  # OpenInference's flattened history
        content = attributes.get(_FIRST_CONTENT)
        return content if role.lower() in _INSTRUCTION_ROLES and isinstance(content, str) else None
    raw = attributes.get(INPUT_MESSAGES)
    messages: Any = parse_json(raw) if isinstance(raw, str) else None
    if messages is None or messages is INVALID:
        messages = genai_events.input_messages(span)
    found = message_list(messages) if messages else None
    if not found:
        return None
    first = found[0]
    return text_of(first) if role_of(first) in _INSTRUCTION_ROLES else None
