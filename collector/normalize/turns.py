"""A conversation's turns recorded in one trace: one run per turn (rule 85).

An application that keeps one span open around a whole conversation (a command-line
agent's run, an app's own session span) records every turn of it in one trace. evald
evaluates runs, and a run is what one user request set off: three turns read as one
trajectory would give the first question, the last answer and every turn's calls to
one verdict. So such a trace is split, by structure and by what the model was sent,
never by span or library names. A turn is a span holding model calls, and all of
these must hold:

* the turns are the children of the trace root (the top-level spans of a trace whose
  root never came), and that root is itself no agent, model or tool call: the steps of
  one agent's run sit below the agent, not beside one another under a bare container;
* at least two of them hold model calls, every model call of the trace is in one of
  them, and they follow one another in time;
* each turn ended with an answer: its last model call requested no tool, and no tool
  ran between it and the next turn's first model call;
* each later turn continues the earlier one's conversation: its first request is the
  previous turn's last request (message for message, by role), then one assistant
  message that requests nothing (the previous answer: no structured call, and no
  ``Action`` of a ReAct loop written as text), then one new user message that answers
  no call (a user's turn, not a tool result written as a user message);
* in a trace whose root never came, each turn names its agent: without the root, the
  turns may be the steps of an agent whose span is still to come.

What is not a turn stays with nothing: spans outside every turn (the app's set-up, an
MCP server's listing) are no one's step. Each turn's run is its span's subtree with
that span as its root; a session id only the dropped spans recorded is the turns'
(``build.normalize_runs``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any, Final, NamedTuple

from collector.core.records import Trace
from collector.normalize.gaps import SESSION_ID
from collector.normalize.history import Message, input_message_items, input_messages
from collector.normalize.join import LlmCall
from collector.normalize.messages import ASSISTANT_ROLES, USER_ROLES, text_of
from collector.normalize.roles import Role
from collector.normalize.steps import recorded_agent_name
from collector.normalize.tree import SpanTree
from evaluators.trajectory import Trajectory

_MIN_TURNS: Final = 2
# (a workflow root may hold turns: an app's own session span, typed by a decorator)
_NOT_A_CONTAINER: Final = frozenset({Role.AGENT, Role.LLM, Role.TOOL})


class Run(NamedTuple):
    """One run of a trace: its spans (the trace, or one turn's), its trajectory, and
    whether optional parts were left out of it (``normalize_for``)."""

    trace: Trace
    trajectory: Trajectory
    left_out: bool


def conversation_turns(tree: SpanTree, roles: Sequence[Role], llms: Sequence[LlmCall]) -> list[int]:
    """The spans (tree indices, in time order) that are the turns of one conversation
    (module docstring), or ``[]``: the trace is one run."""
    if len(llms) < _MIN_TURNS or (tree.has_root and roles[tree.root] in _NOT_A_CONTAINER):
        return []
    level = tree.children(tree.root) if tree.has_root else tree.tops()
    top_of = _containers(tree, level)
    where = {span.span_id: i for i, span in enumerate(tree.spans)}
    held: dict[int, list[LlmCall]] = {}
    for llm in llms:
        top = top_of.get(where.get(llm.span.span_id, -1))
        if top is None or roles[top] is Role.LLM:  # a model call outside any turn: one run
            return []
        held.setdefault(top, []).append(llm)
    if len(held) < _MIN_TURNS:
        return []
    spans = tree.spans
    turns = sorted(held, key=lambda i: spans[i].start_unix_nano)
    tool_starts = [spans[i].start_unix_nano for i, role in enumerate(roles) if role is Role.TOOL]
    for before, after in pairwise(turns):
        if spans[before].end_unix_nano > spans[after].start_unix_nano:
            return []
        last, first = held[before][-1], held[after][0]
        if last.calls or not _continues(_request(last), _request(first)):
            return []
        if not tree.has_root and not recorded_agent_name(spans[after], None):
            return []  # (the root may be an agent's that is still to come: its own steps)
        ended, resumed = last.span.start_unix_nano, first.span.start_unix_nano
        if any(ended < start < resumed for start in tool_starts):
            return []
    return turns


def turn_trace(trace: Trace, tree: SpanTree, turn: int) -> Trace:
    """The run of one turn: the subtree of span ``turn``, that span made its root, the
    spans in the trace's arrival order (which breaks ties of start times)."""
    below = _subtree(tree, turn)
    spans = [
        span._replace(parent_span_id=b"") if i == turn else span
        for i, span in enumerate(tree.spans)
        if i in below
    ]
    return trace._replace(spans=tuple(spans))


def inherit_session(trajectory: Trajectory, session: str | None) -> Trajectory:
    """``trajectory`` with the trace's ``session`` when the turn records none itself."""
    if trajectory.session_id is not None or session is None:
        return trajectory
    gaps = tuple(gap for gap in trajectory.gaps if gap != SESSION_ID)
    return trajectory._replace(session_id=session, gaps=gaps)


def _containers(tree: SpanTree, level: Sequence[int]) -> dict[int, int]:
    """Each span below (and at) ``level`` → the span of ``level`` it is under."""
    top_of: dict[int, int] = {}
    for top in level:
        for i in _subtree(tree, top):
            top_of.setdefault(i, top)
    return top_of


def _subtree(tree: SpanTree, top: int) -> set[int]:
    """Span ``top`` and every span below it (cycle-safe)."""
    below, stack = {top}, [top]
    while stack:
        for kid in tree.children(stack.pop()):
            if kid not in below:
                below.add(kid)
                stack.append(kid)
    return below


class _Request(NamedTuple):
    messages: list[Message]
    items: list[dict[str, Any]]  # the same messages, unreduced (their text)


def _request(llm: LlmCall) -> _Request:
    """The messages a model call was sent (its first layer that records them)."""
    for span in llm.spans:
        found = input_messages(span)
        if found:
            return _Request(found, input_message_items(span))
    return _Request([], [])


def _continues(earlier: _Request, later: _Request) -> bool:
    """``later`` is ``earlier``, the answer to it, and a new user message (docstring)."""
    n = len(earlier.messages)
    if not n or len(later.messages) != n + 2:
        return False
    if any(a.role != b.role for a, b in zip(earlier.messages, later.messages, strict=False)):
        return False
    answer, asked = later.messages[n], later.messages[n + 1]
    return (
        answer.role in ASSISTANT_ROLES
        and not answer.calls
        and asked.role in USER_ROLES
        and not asked.answers
        and not _an_action(later.items, n)
    )


def _an_action(items: list[dict[str, Any]], n: int) -> bool:
    """Whether the "answer" at ``n`` and the user message after it are a ReAct loop's
    action and its observation, written as text (``Action: search[…]``, then
    ``Observation: …`` as a user message): a step of one run, not a turn. The format's
    own words decide: an ``Action:`` line answered by an ``Observation``."""
    if len(items) < n + 2:
        return False
    said, asked = text_of(items[n]) or "", text_of(items[n + 1]) or ""
    if not said or not asked:
        return False
    acted = any(line.lstrip().startswith(_ACTION) for line in said.splitlines())
    return acted and asked.lstrip().startswith(_OBSERVATION)


_ACTION: Final = "Action:"
_OBSERVATION: Final = "Observation"
