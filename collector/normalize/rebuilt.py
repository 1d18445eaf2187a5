"""Tool calls that no span executed, answered in a later model call's history.

A call the model requested is unexecuted as far as spans tell when no tool span ran
it. When the input history of a *later* model call of the same run holds the
assistant message that requested it followed by its result, it did run: the step is
rebuilt from those messages (``source: "messages"``) with the result or error found.

Matching: the *last* assistant message of the history that requested this call (the
same name; the same id and arguments wherever both sides have them: histories repeat
earlier turns, and some SDKs reuse ids across turns), then among the answers after
it, the one with the call's id, else the one at the call's position. A history that
records no request at all (the assistant messages holding only tool calls dropped)
pairs a call with the answer of its id after the last user message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from collector.core.records import Span
from collector.normalize import kinds
from collector.normalize.history import INPUT_MESSAGES, Answer, Message, history
from collector.normalize.join import LlmCall
from collector.normalize.messages import USER_ROLES, RequestedCall
from evaluators.trajectory import Step

SOURCE: Final = "messages"


def answer_of(llms: Sequence[LlmCall], index: int, call: RequestedCall) -> Answer | None:
    """The answer to ``call`` (requested by ``llms[index]``) in the history of a later
    model call of ``llms``, or None. An answer paired by its id alone (a history that
    records no request) is looked for in the next model call's history only."""
    for n, later in enumerate(llms[index + 1 :]):
        messages = history_of(later)
        if messages:
            found = _find(messages, call, n == 0)
            if found is not None:
                return found
    return None


def call_id_of(llms: Sequence[LlmCall], index: int, name: str, args: object) -> str | None:
    """The id a later model call's history gives the call ``name(args)`` that
    ``llms[index]`` requested (for tool spans that record none), or None."""
    wanted = RequestedCall(None, name, args, None)
    for later in llms[index + 1 :]:
        messages = history_of(later)
        if not messages:
            continue
        for m in range(len(messages) - 1, -1, -1):  # (mypyc: no reversed() here)
            for seen in messages[m].calls:
                found = seen.call_id
                if found is not None and _same(seen, wanted):
                    return str(found)
        return None
    return None


def history_of(llm: LlmCall) -> list[Message]:
    """The input history of model call ``llm`` (its first layer that records one), read
    once per trace: every unexecuted call of a run asks the same later calls."""
    found: list[Message] | None = llm.history
    if found is None:
        found = []
        for span in llm.spans:
            found = history(span)
            if found:
                break
        llm.history = found
    return found


def rebuilt_step(llm: Step, call: RequestedCall, answer: Answer) -> Step:
    """The executed call, placed where an unexecuted one would be (the LLM's end)."""
    end = llm.start_unix_nano + round(llm.duration_s * 1e9)
    call_id = call.call_id or answer.call_id
    result = answer.result
    return Step(kinds.TOOL, call.name, "", llm.parent_span_id, end, 0.0, call.args,
                result.value, result.error, call_id, call.raw_args, llm.agent, True,
                None, None, None, SOURCE)  # fmt: skip


def _find(messages: list[Message], call: RequestedCall, by_id: bool) -> Answer | None:
    for m in range(len(messages) - 1, -1, -1):
        calls = messages[m].calls
        k = next((k for k, seen in enumerate(calls) if _same(seen, call)), None)
        if k is None:
            continue
        start = m  # a request split into one message per call (Responses API items)
        while start > 0 and messages[start - 1].calls and not messages[start - 1].answers:
            start -= 1
        k += sum(len(messages[i].calls) for i in range(start, m))
        answers = _answers_after(messages, m)
        if call.call_id is not None:
            for answer in answers:
                if answer.call_id == call.call_id:
                    return answer
        if k >= len(answers):
            return None
        found = answers[k]  # answers follow the calls' order, unless an id says otherwise
        conflict = call.call_id is not None and found.call_id not in (None, call.call_id)
        return None if conflict else found
    return _answer_by_id(messages, call) if by_id else None


def _answer_by_id(messages: list[Message], call: RequestedCall) -> Answer | None:
    """The answer carrying the call's id, in a history that records no request at all
    (an instrumentation that drops the assistant messages holding only tool calls keeps
    their answers, with ids): the id alone pairs them, when exactly one answer after the
    last user message carries it (ids are only unique within a turn, and some SDKs reuse
    them across the rounds of one: two answers with the id are no evidence of which)."""
    if call.call_id is None or any(message.calls for message in messages):
        return None
    last_user = turn_start(messages)
    found = [
        answer
        for message in messages[last_user + 1 :]
        for answer in message.answers
        if answer.call_id == call.call_id
    ]
    return found[0] if len(found) == 1 else None


def _answers_after(messages: list[Message], m: int) -> list[Answer]:
    """The answers following message ``m``, up to the next message with calls (the
    messages with calls right after ``m`` are the same request, split per call)."""
    found: list[Answer] = []
    leading = True
    for message in messages[m + 1 :]:
        if message.calls and not message.answers:
            if leading:
                continue
            break
        leading = False
        found.extend(message.answers)
    return found


def _same(seen: RequestedCall, call: RequestedCall) -> bool:
    """Whether ``seen`` (a call in a later request's history) is ``call``: the same name,
    no other id, and equal arguments where both record them. With the same id, the
    history may add arguments (rule 71): frameworks that rebuild the call from their own
    tool object write fields of theirs beside the model's (Langroid's ``request``); a
    value that differs on a key both hold still tells two calls apart (ids are reused
    across turns by some SDKs)."""
    if seen.name != call.name:
        return False
    if seen.call_id is not None and call.call_id is not None and seen.call_id != call.call_id:
        return False
    if seen.args is None or call.args is None or seen.args == call.args:
        return True
    return seen.call_id is not None and call.call_id is not None and _extends(seen.args, call.args)


def _extends(more: object, args: object) -> bool:
    """Whether object ``more`` holds every member of object ``args``, equal."""
    if not isinstance(more, dict) or not isinstance(args, dict) or len(more) <= len(args):
        return False
    return all(key in more and more[key] == value for key, value in args.items())


def _may_answer(span: Span) -> bool:
    """Whether a model call's recorded input may hold a tool result (unparsed: a JSON
    history that names no tool message holds none; other forms are read)."""
    raw = span.attributes.get(INPUT_MESSAGES)
    if not isinstance(raw, str):
        return True
    return any(marker in raw for marker in _ANSWER_MARKERS)


# How a tool result is written in the histories ``history`` reads (a role, a part type,
# an id key, a Responses-API item type).
_ANSWER_MARKERS: Final[tuple[str, ...]] = (
    '"tool"',
    "tool_call_response",
    "tool_call_id",
    "function_call_output",
    '"function"',
)


def answered_unrecorded(llms: Sequence[LlmCall], steps: Sequence[Step]) -> bool:
    """Whether tools ran that the run records nowhere (the ``tool_calls`` gap): no tool
    step and no model request for a call, yet the last model call was sent tool results
    after the turn's user message. (An instrumentation that records neither tool spans
    nor the model's replies: which tools ran, and with what, is unknown.) Reads one
    history, and only for runs that record no call at all."""
    if len(llms) < 2 or any(llm.calls for llm in llms):
        return False  # (results in this turn answer a request of an earlier model call)
    if any(step.kind is kinds.TOOL for step in steps):
        return False
    if not any(_may_answer(span) for span in llms[-1].spans):
        return False
    messages = history_of(llms[-1])
    last_user = turn_start(messages)
    return any(message.answers for message in messages[last_user + 1 :])


def turn_start(messages: list[Message]) -> int:
    """The index of the turn's user message (-1: none): the last message of a user's
    role that carries no tool result. Anthropic's Messages API sends tool results in a
    ``user`` message (GenAI ``tool_call_response`` parts under role ``user``): that
    message answers calls, it does not start a turn."""
    start = -1
    for m, message in enumerate(messages):
        if message.role in USER_ROLES and not message.answers:
            start = m
    return start
