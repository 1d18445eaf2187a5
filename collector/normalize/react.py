"""ReAct transcripts: tool calls a model wrote as text, and the observations sent back.

Frameworks that drive a model without native function calling (text ReAct loops)
record no tool-call structure: the model's reply says ``Action: <tool>`` and
``Action Input: <arguments>``, and the next prompt carries ``Observation: <result>``.
The calls and results are read from those lines, in order; arguments are parsed as
JSON when they are, else kept as text.

DSPy's ReAct writes the same loop in its ChatAdapter's field sections (rule 74): the
reply's ``[[ ## next_tool_name ## ]]`` and ``[[ ## next_tool_args ## ]]`` are the call,
and the next prompt's trajectory repeats each round as ``tool_name_<i>``,
``tool_args_<i>`` and ``observation_<i>``. Any instrumentation that records the model
calls' messages (and not DSPy's tool spans) records only these.
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


# A ChatAdapter field section: its header line, then its text up to the next header.
_SECTION: Final = re.compile(r"^\[\[ ## (?P<field>\w+) ## \]\][ \t]*\n?", re.M)
_NEXT_TOOL: Final = "[[ ## next_tool_name ## ]]"
_ROUND_TOOL: Final = "[[ ## tool_name_"


def transcript_calls(text: str) -> list[RequestedCall]:
    """The ``Action`` / ``Action Input`` pairs of a model's reply, in order (or the
    ChatAdapter's next tool and its arguments)."""
    if len(text) > _MAX_CHARS:
        return []
    if _NEXT_TOOL in text:
        fields = sections(text)
        made = requested(None, fields.get("next_tool_name", ""), fields.get("next_tool_args"))
        return [] if made is None else [made]
    if "Action" not in text:
        return []
    calls = []
    for match in _ACTION.finditer(text):
        made = requested(None, match["name"].strip("`* "), match["input"].strip())
        if made is not None:
            calls.append(made)
    return calls


def transcript_steps(text: str) -> list[tuple[list[RequestedCall], list[str]]]:
    """The transcript as (calls, observations) rounds, in order: each ``Action`` block
    with the ``Observation`` lines that follow it (or each numbered ChatAdapter round)."""
    if len(text) > _MAX_CHARS:
        return []
    if _ROUND_TOOL in text:
        return _numbered_rounds(sections(text))
    if "Observation" not in text:
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


def sections(text: str) -> dict[str, str]:
    """A ChatAdapter text's field sections, by field name (stripped; a repeated field:
    the last)."""
    found: dict[str, str] = {}
    matches = list(_SECTION.finditer(text))
    for n, match in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        body = text[match.end() : end]
        found[match["field"]] = body.split(_REQUIREMENTS, 1)[0].strip()
    return found


# What the adapter appends after a request's last input field (the output fields asked
# for): no part of that field.
_REQUIREMENTS: Final = "\n\nRespond with the corresponding output fields"


def _numbered_rounds(fields: dict[str, str]) -> list[tuple[list[RequestedCall], list[str]]]:
    """``tool_name_<i>`` / ``tool_args_<i>`` / ``observation_<i>`` from 0 up, while the
    numbering lasts."""
    rounds: list[tuple[list[RequestedCall], list[str]]] = []
    for i in range(len(fields)):
        name = fields.get(f"tool_name_{i}")
        if name is None:
            break
        made = requested(None, name, fields.get(f"tool_args_{i}"))
        if made is None:
            break
        seen = fields.get(f"observation_{i}")
        rounds.append(([made], [] if seen is None else [seen]))
    return rounds


def field_request(text: str) -> str | None:
    """The request of a ReAct request written as ChatAdapter sections (one with a
    ``trajectory`` field): its first input field (the signature's first input; what
    follows is context and the trajectory), or None. Other DSPy programs' first field
    may be retrieved context (``context, question -> response``): not read."""
    if not text.startswith(_HEADER) or _TRAJECTORY not in text or len(text) > _MAX_CHARS:
        return None
    match = _SECTION.search(text)
    if match is None or match["field"] == "trajectory":
        return None
    found = sections(text).get(match["field"])
    return found or None


def field_answer(text: str) -> str | None:
    """The answer of a reply written as ChatAdapter sections and closed by its
    ``completed`` marker, when it holds one output field beside its ``reasoning``
    (ReAct's extraction: ``reasoning``, then the answer), or None: with several, which
    one is the answer is the program's to say."""
    if not text.startswith(_HEADER) or _COMPLETED not in text or len(text) > _MAX_CHARS:
        return None
    fields = sections(text)
    fields.pop("completed", None)
    fields.pop("reasoning", None)
    if len(fields) != 1:
        return None
    return next(iter(fields.values())) or None


_HEADER: Final = "[[ ## "
_COMPLETED: Final = "[[ ## completed ## ]]"
_TRAJECTORY: Final = "[[ ## trajectory ## ]]"
