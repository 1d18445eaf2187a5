"""A run recorded only as a transcript (ADR 0017, rule 80).

Some instrumentations trace a framework's pipeline or task objects and not its model
client or tools: no span is a model call or a tool call, yet one span's output is the
conversation the agent had (Haystack's ``Agent.run`` under traceAI, CrewAI's task under
MLflow): the user's message, each assistant message with the calls it requested (ids,
names, arguments), a tool message answering each call, the final assistant text.

Such a trace is read from that transcript, and only when no span recorded a model call
or a tool call (a span, where there is one, is the better record: timed, and the
transcript would count its calls twice). The turn is the messages after the last user
message that answers no call (``rebuilt.turn_start``: earlier turns of a session are
repeated in it); each run of consecutive assistant messages in it is one model call
(a request split into one message per call is one), its calls rebuilt with their answers
as ``rebuilt`` rebuilds a call from a later model call's history. The request is the
turn's user message, the reply the last assistant text. Neither the model calls nor the
tool calls have a span: their timings are unknown (gaps ``model_timings``,
``tool_timings``), and they sit at the start of the span whose output holds them.

Which span: the one whose output holds the most messages of its turn (a pipeline that
returns its agent's result records it again, nested or whole), the deepest of equals.
One transcript per trace: sub-agents that record one each are not told apart.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from collector.core.records import Span
from collector.normalize import kinds
from collector.normalize.conventions import genai, mlflow, openinference, traceloop
from collector.normalize.history import Message, message_of
from collector.normalize.join import LlmCall
from collector.normalize.messages import ASSISTANT_ROLES, message_list, text_of
from collector.normalize.rebuilt import SOURCE, turn_start
from collector.normalize.step_list import SortKey
from collector.normalize.step_records import new_step
from collector.normalize.tree import SpanTree
from collector.normalize.values import INVALID, parse_json

# Where a span records its output as JSON (OpenInference, MLflow, the GenAI keys, Traceloop).
_OUTPUT_KEYS: Final = (
    openinference.OUTPUT_VALUE,
    mlflow.OUTPUTS,
    genai.OUTPUT_MESSAGES,
    traceloop.ENTITY_OUTPUT,
)
# A reply is written by a role of these names: text without one holds no transcript
# (checked before parsing, so a non-agent trace's JSON outputs cost a substring test).
_REPLY_MARKERS: Final = ("assistant", "ASSISTANT", '"model"', "'model'")
_MAX_MESSAGES: Final = 4096  # bounds the walk over one transcript on hostile data
# Where a span records its input (the conventions of ``_OUTPUT_KEYS`` that record one).
_INPUT_KEYS: Final = (openinference.INPUT_VALUE, mlflow.INPUTS, genai.INPUT_MESSAGES)
_MIN_ASKED: Final = 8  # a shorter text ("hi", "ok") stands in anything
_MAX_TEXTS: Final = 512
_MAX_DEPTH: Final = 8
_MAX_TEXT: Final = 1 << 22  # a larger output is not parsed for a transcript


class Transcript(NamedTuple):
    """The conversation one span's output records."""

    span: int  # the span's index in the tree
    messages: list[Message]
    turn: int  # index of the turn's user message
    request: str | None  # the turn's user message
    reply: str | None  # the turn's last assistant text (None: it asked for calls)


def recorded_transcript(tree: SpanTree, order: list[int]) -> Transcript | None:
    """The transcript of the run (module docstring), or None when no span's output holds
    a user message answered by an assistant message (an output holding the reply alone
    is no transcript) whose request the run recorded as its input (``_asked``: a
    conversation a span only loaded, a stored history an API returned, is not this
    run's). ``order``: the spans, parents first."""
    best: Transcript | None = None
    best_size = 0
    root = tree.spans[tree.root] if tree.root >= 0 else None
    for i in order:
        found = _transcript(tree.spans[i], i)
        if found is not None and _asked(found.request, [tree.spans[i], root]):
            size = len(found.messages) - found.turn
            if size >= best_size:  # (equal: the deeper span, later in ``order``)
                best, best_size = found, size
    return best


def _asked(request: str | None, spans: list[Span | None]) -> bool:
    """Whether ``request`` (the transcript's user message) is what the run was asked: a
    text of the recorded input of the transcript's span or of the trace root stands in it
    (a framework templates the request into its prompt) or holds it (a message list, a
    Python repr of one)."""
    wanted = (request or "").strip()
    if len(wanted) < _MIN_ASKED:
        return False
    for span in spans:
        if span is None:
            continue
        for key in _INPUT_KEYS:
            raw = span.attributes.get(key)
            if isinstance(raw, str) and raw:
                for text in _texts(_parsed(raw), 0, []):
                    told = text.strip()
                    if len(told) >= _MIN_ASKED and (told in wanted or wanted in told):
                        return True
    return False


def _parsed(raw: str) -> Any:
    if raw.lstrip()[:1] in ("{", "[") and len(raw) <= _MAX_TEXT:
        value = parse_json(raw)
        if value is not INVALID:
            return value
    return raw


def _texts(value: Any, depth: int, out: list[str]) -> list[str]:
    """The strings inside a JSON value (bounded: ``_MAX_TEXTS``, ``_MAX_DEPTH``)."""
    if isinstance(value, str):
        out.append(value)
        return out
    if depth >= _MAX_DEPTH:
        return out
    if isinstance(value, dict):
        items: list[Any] = list(value.values())
    elif isinstance(value, list):
        items = value
    else:
        return out
    for item in items:
        if len(out) >= _MAX_TEXTS:
            break
        _texts(item, depth + 1, out)
    return out


def _transcript(span: Span, i: int) -> Transcript | None:
    attributes = span.attributes
    for key in _OUTPUT_KEYS:
        raw = attributes.get(key)
        if not isinstance(raw, str) or len(raw) > _MAX_TEXT or raw.lstrip()[:1] not in ("{", "["):
            continue
        if not any(marker in raw for marker in _REPLY_MARKERS):
            continue
        value = parse_json(raw)
        if value is INVALID:
            continue
        found = _read(value, i)
        if found is not None:
            return found
    return None


def _read(value: Any, i: int) -> Transcript | None:
    items = [item for item in (message_list(value) or ())[:_MAX_MESSAGES] if isinstance(item, dict)]
    messages = [message_of(item) for item in items]
    turn = turn_start(messages)
    if turn < 0:
        return None  # the reply alone (an output's usual content), not the conversation
    replies = [m for m in range(turn + 1, len(messages)) if messages[m].role in ASSISTANT_ROLES]
    if not replies:
        return None
    request = text_of(items[turn])
    last = messages[replies[-1]]
    reply = None if last.calls else text_of(items[replies[-1]])
    return Transcript(i, messages, turn, request, reply)


def transcript_calls(
    transcript: Transcript, tree: SpanTree, agent: str | None, rank: int
) -> list[tuple[SortKey, LlmCall]]:
    """The model calls of the transcript's turn, as items of the step list: one per run
    of consecutive assistant messages, with the calls it requested and, as its history,
    the messages before it (``rebuilt.answer_of`` finds each call's answer in the next
    one's). Untimed, at the start of the span that records the transcript; ranked from
    ``rank`` on, in order."""
    span, messages = tree.spans[transcript.span], transcript.messages
    out: list[tuple[SortKey, LlmCall]] = []
    start = span.start_unix_nano
    m = transcript.turn + 1
    while m < len(messages):
        if messages[m].role not in ASSISTANT_ROLES:
            m += 1
            continue
        first, calls = m, []
        while m < len(messages) and messages[m].role in ASSISTANT_ROLES:
            calls.extend(messages[m].calls)
            m += 1
        step = new_step(kinds.LLM, "", "", None, start, 0.0, None, None, None, None, None,
                        agent, True, None, None, None, SOURCE)  # fmt: skip
        call = LlmCall(span, step, calls)
        call.spans = []  # no span recorded this call: its text is the transcript's
        call.history = messages[:first]
        out.append(((start, rank + len(out), 0), call))
    return out
