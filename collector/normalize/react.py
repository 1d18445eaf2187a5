"""ReAct transcripts: tool calls a model wrote as text, and the observations sent back.

Frameworks that drive a model without native function calling (text ReAct loops)
record no tool-call structure: the model's reply says ``Action: <tool>`` and
``Action Input: <arguments>``, and the next prompt carries ``Observation: <result>``.
The calls and results are read from those lines, in order; arguments are parsed as
JSON when they are, else kept as text.
"""

from __future__ import annotations

import re
from typing import Final

from collector.normalize.messages import RequestedCall, requested

_MAX_CHARS: Final = 256 * 1024
_NEXT: Final = r"(?=\n(?:Thought|Action|Action Input|Observation|Final Answer)\s*:|\Z)"
_ACTION: Final = re.compile(
    r"^Action\s*:\s*(?P<name>[^\n]+?)\s*\nAction Input\s*:\s*(?P<input>.*?)" + _NEXT,
    re.S | re.M,
)
_OBSERVATION: Final = re.compile(r"^Observation\s*:\s*(?P<text>.*?)" + _NEXT, re.S | re.M)


def transcript_calls(text: str) -> list[RequestedCall]:
    """The ``Action`` / ``Action Input`` pairs of a model's reply, in order."""
    if "Action" not in text or len(text) > _MAX_CHARS:
        return []
    calls = []
    for match in _ACTION.finditer(text):
        made = requested(None, match["name"].strip("`* "), match["input"].strip())
        if made is not None:
            calls.append(made)
    return calls


def transcript_steps(text: str) -> list[tuple[list[RequestedCall], list[str]]]:
    """The transcript as (calls, observations) rounds, in order: each ``Action`` block
    with the ``Observation`` lines that follow it."""
    if "Observation" not in text or len(text) > _MAX_CHARS:
        return []
    rounds: list[tuple[list[RequestedCall], list[str]]] = []
    events = sorted(
        [(m.start(), "call", m) for m in _ACTION.finditer(text)]
        + [(m.start(), "seen", m) for m in _OBSERVATION.finditer(text)],
        key=lambda item: item[0],
    )
    for _, kind, match in events:
        if kind == "call":
            made = requested(None, match["name"].strip("`* "), match["input"].strip())
            if made is not None:
                rounds.append(([made], []))
        elif rounds:
            rounds[-1][1].append(match["text"].strip())
    return rounds
