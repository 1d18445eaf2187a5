"""A tool call that ran an agent whose span is not below the call's (ADR 0017, rule 42).

Not every instrumentation nests an agent's span below the call that ran it: OpenLLMetry's
OpenAI Agents processor parents every agent span to the workflow root, so the agent an
``as_tool`` call ran is the call's sibling. The evidence that the call ran it anyway:
the call's span holds the agent's in time, and the call carries the agent's exchange —
its result is the agent's last model reply, or one of its argument values is the
agent's first model request while that text is not the calling agent's own request
(the question a parallel branch was given too, passed on by nobody).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Final

from collector.normalize import kinds
from collector.normalize.values import holds_text
from evaluators.trajectory import Step

_MAX_BACK: Final = 128  # steps looked back from a hop for a call that ran it
# Rounding of ``duration_s`` when one span's end is compared with another's.
_SLACK_NS: Final = 1_000

Texts = Callable[[str], tuple[str | None, str | None]]
"""A model call's (request text, reply text), by its step's span id."""


class ModelCalls:
    """The model steps of each agent, in start order, for finding the first and last
    model call of a hop in its time window in logarithmic time."""

    def __init__(self, steps: tuple[Step, ...]) -> None:
        self._starts: dict[str, list[int]] = {}
        self._ids: dict[str, list[str]] = {}
        for step in steps:
            if step.kind is kinds.LLM and step.agent and step.span_id:
                self._starts.setdefault(step.agent, []).append(step.start_unix_nano)
                self._ids.setdefault(step.agent, []).append(step.span_id)

    def window(self, agent: str, start: int, end: int) -> tuple[str, str] | None:
        """The span ids of ``agent``'s first and last model call started in
        [``start``, ``end``], if any (steps are in start order)."""
        starts = self._starts.get(agent)
        if not starts:
            return None
        first = bisect_left(starts, start)
        last = bisect_right(starts, end) - 1
        if first > last:
            return None
        ids = self._ids[agent]
        return ids[first], ids[last]


def ran_beside(steps: tuple[Step, ...], h: int, texts: Texts, calls: ModelCalls) -> list[int]:
    """The calls before the hop at ``h`` that ran its agent without holding its span
    (module docstring)."""
    hop = steps[h]
    start, end = hop.start_unix_nano, end_of(hop)
    window = calls.window(hop.name, start, end + _SLACK_NS)
    if window is None:
        return []
    request, _ = texts(window[0])
    _, reply = texts(window[1])
    request_text = request.strip() if request else None
    reply_text = reply.strip() if reply else None
    found: list[int] = []
    for n in range(h - 1, max(-1, h - 1 - _MAX_BACK), -1):
        step = steps[n]
        if step.kind is not kinds.TOOL or not step.executed or step.agent == hop.name:
            continue
        if step.start_unix_nano > start or end_of(step) + _SLACK_NS < end:
            continue
        result = step.result
        if (
            reply_text is not None and isinstance(result, str) and result.strip() == reply_text
        ) or (request_text and _passed_on(steps, n, request_text, texts)):
            found.append(n)
    return found


def end_of(step: Step) -> int:
    return step.start_unix_nano + round(step.duration_s * 1e9)


def _passed_on(steps: tuple[Step, ...], n: int, request: str, texts: Texts) -> bool:
    """Whether the call at ``n`` passed ``request`` on: one of its argument values, and
    not the calling agent's own request (a text everyone was given)."""
    passed = holds_text(steps[n].args, lambda text: text.strip() == request)
    return passed and _own_request(steps, n, texts) != request


def _own_request(steps: tuple[Step, ...], n: int, texts: Texts) -> str | None:
    """The request of the calling agent's model call that asked for the call at ``n``
    (its nearest model call before it)."""
    agent = steps[n].agent
    for m in range(n - 1, max(-1, n - 1 - _MAX_BACK), -1):
        step = steps[m]
        if step.kind is kinds.LLM and step.agent == agent:
            own, _ = texts(step.span_id)
            return own.strip() if own else None
    return None
