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
- the model calls right before and after C both record a system prompt, and the two
  differ within their first 64 characters: another agent's instructions, not an
  instruction block edited in place (a memory, a date) further on;
- the new instructions are settled: the model call after the next one was sent them
  too (a prompt that opens with the time or a counter changes on every call, and an
  agent handed over to makes more than one call before it answers; one that answers
  at once goes unseen);
- the run's first and last model calls were not sent the same opening (a run that
  ends with the agent it started with is not read: A → B → A goes unseen).

C becomes a ``control`` step; the steps after it are X's, until the next hand-over;
X joins the run's agents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

from collector.core.records import Span
from collector.normalize import kinds
from collector.normalize.conventions import genai_events
from collector.normalize.conventions.genai import INPUT_MESSAGES
from collector.normalize.conventions.openinference import INPUT_MESSAGES as OI_MESSAGES
from collector.normalize.join import LlmCall
from collector.normalize.messages import message_list, role_of, text_of
from collector.normalize.step_records import AGENT, KIND, with_fields
from collector.normalize.values import holds_text
from evaluators.trajectory import Step

_SAME_START: Final = 64  # characters of two prompts compared: different agents differ early
_OPENING: Final = 256  # characters of a JSON history holding the first message's opening
_NAME: Final = re.compile(r"[^\W\d_][\w .:-]{2,63}")  # one line, a letter first, 3 to 64
_INSTRUCTION_ROLES: Final = frozenset({"system", "developer"})
_DECODER: Final = json.JSONDecoder()
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")  # JSON's (json.decoder.WHITESPACE)
_FIRST_ROLE: Final = f"{OI_MESSAGES}0.message.role"
_FIRST_CONTENT: Final = f"{OI_MESSAGES}0.message.content"


def switched_instructions(
    steps: tuple[Step, ...], llms: list[LlmCall], agents: dict[str, None]
) -> tuple[Step, ...]:
    """``steps`` with every hand-over of the module docstring made ``control`` and the
    steps after it given their agent; the agents handed over to are added to ``agents``.

    Cost: a run whose first and last model calls open with the same text (most runs: one
    agent, the same instructions throughout) is returned at once, nothing parsed; the
    others read each model call's instructions once, and a call's arguments and result
    only where the instructions changed."""
    if len(llms) < 2 or _opening(llms[0]) == _opening(llms[-1]):  # (in trajectory order)
        return steps
    calls = {llm.step.span_id: llm for llm in llms}
    # The model calls in order, each with the start of its instructions (None: unread).
    models: list[tuple[int, str | None]] = []
    for k, step in enumerate(steps):
        if step.kind is kinds.LLM:
            llm = calls.get(step.span_id)
            found = instructions(llm) if llm is not None else None
            models.append((k, found[:_SAME_START] if found is not None else None))
    switches: list[tuple[int, str]] = []
    for at in range(1, len(models)):
        before, after = models[at - 1][1], models[at][1]
        if before is None or after is None or before == after:
            continue
        if not _settled(models, at, after):
            continue  # (instructions that change on every call: a date, a counter)
        for k in range(models[at - 1][0] + 1, models[at][0]):
            name = _echoes_a_name(steps[k])
            if name is not None:
                switches.append((k, name))
    changed = list(steps)
    for n, (k, name) in enumerate(switches):
        changed[k] = with_fields(changed[k], {KIND: kinds.CONTROL})
        # X's steps run up to the next hand-over, which X makes (so it is X's too)
        end = switches[n + 1][0] + 1 if n + 1 < len(switches) else len(steps)
        for j in range(k + 1, end):
            changed[j] = with_fields(changed[j], {AGENT: name})
        agents[name] = None
    return tuple(changed)


def _settled(models: list[tuple[int, str | None]], at: int, opening: str) -> bool:
    """Whether the instructions from model call ``at`` on are the same for at least two
    calls in a row: an agent's, not a prompt rewritten on every call."""
    return at + 1 < len(models) and models[at + 1][1] == opening


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
    if step.kind is not kinds.TOOL or not step.executed or step.error is not None:
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
    first: Any = _first_item(raw) if isinstance(raw, str) else None
    if first is None:
        messages = genai_events.input_messages(span)
        found = message_list(messages) if messages else None
        first = found[0] if found else None
    return text_of(first) if role_of(first) in _INSTRUCTION_ROLES else None


def _first_item(raw: str) -> Any:
    """The first item of a JSON list, decoded alone (a history's first message: the rest,
    the whole conversation, is not parsed), or None."""
    at = _after_space(raw, 0)
    if not raw.startswith("[", at):
        return None
    at = _after_space(raw, at + 1)
    try:
        item, _ = _DECODER.raw_decode(raw, at)
    except (ValueError, RecursionError):  # (a list nested past the decoder's depth)
        return None
    return item


def _after_space(raw: str, at: int) -> int:
    found = _WHITESPACE.match(raw, at)
    return found.end() if found is not None else at
