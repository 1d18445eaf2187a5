"""Agents named only by a bare ``name`` attribute, where a hand-over names them (ADR 0017,
rule 45).

Logfire's OpenAI Agents integration writes each agent run as a span whose only record
of the agent is a bare ``name`` attribute (``name: "store"`` on ``Agent run: {name!r}``).
A key that bare is no evidence by itself (ADR 0017's 2026-11-27 addendum declined it:
many spans carry a ``name``). It is evidence where the trace confirms it: a model call
in the same trace requested a hand-over that names the agent (``transfer_to_store``:
the tool's name ends in ``_to_X``, compared as slugs; a tool named X is no evidence,
since a tool's own span carries its name), and the span has model calls below it.
Such a span is read as agent X's run; the hand-over then has a hop to hand over to
(rule 35).
"""

from __future__ import annotations

from typing import Final

from collector.normalize import conventions
from collector.normalize.handoffs import slug
from collector.normalize.roles import Role
from collector.normalize.tree import SpanTree, role_below

NAME: Final = "name"
KEYS: Final[tuple[str, ...]] = (NAME,)
_MAX_DEPTH: Final = 8  # levels below a candidate looked through for a model call
_LLM: Final = frozenset({Role.LLM})


def confirmed_agents(tree: SpanTree, roles: list[Role]) -> dict[int, str]:
    """Span index → agent name for every unrecognised span that a hand-over confirms
    as an agent (module docstring); their roles become ``Role.AGENT`` in ``roles``."""
    candidates: dict[int, str] = {}
    for i, span in enumerate(tree.spans):
        if roles[i] is Role.OTHER:
            value = span.attributes.get(NAME)
            if isinstance(value, str) and value.strip():
                candidates[i] = value.strip()
    if not candidates:
        return {}
    named: set[str] = set()
    for i, span in enumerate(tree.spans):
        if roles[i] is Role.LLM:
            for call in conventions.requested_calls(span) or ():
                if call.name:
                    named.add(slug(call.name))
    found: dict[int, str] = {}
    for i, name in candidates.items():
        target = slug(name)
        if (
            target
            and _handed_over_to(named, target)
            and role_below(tree, roles, i, _LLM, max_depth=_MAX_DEPTH)
        ):
            found[i] = name
            roles[i] = Role.AGENT
    return found


def _handed_over_to(named: set[str], target: str) -> bool:
    """Whether a requested call hands over to ``target`` by the ``*_to_X`` form. A call
    named X itself is no evidence here: Logfire's ``Function: {name}`` span of a tool
    (or of ``as_tool``'s agent tool) carries that very name."""
    return any(name.endswith("_to_" + target) for name in named)
