"""Agents named only by a bare ``name`` attribute, where a hand-over names them (ADR 0017,
rule 45), or only by their span's name, where the spans below name them (rule 66).

Logfire's OpenAI Agents integration writes each agent run as a span whose only record
of the agent is a bare ``name`` attribute (``name: "store"`` on ``Agent run: {name!r}``).
A key that bare is no evidence by itself (ADR 0017's 2026-11-27 addendum declined it:
many spans carry a ``name``). It is evidence where the trace confirms it: a model call
in the same trace requested a hand-over that names the agent (``transfer_to_store``:
the tool's name ends in ``_to_X``, compared as slugs; a tool named X is no evidence,
since a tool's own span carries its name), and the span has model calls below it.
Such a span is read as agent X's run; the hand-over then has a hop to hand over to
(rule 35).

Laminar's OpenAI Agents instrumentation writes the agent's run as a plain span named
after the agent (``music_store_support``), and each turn of the loop below it as a span
that says whose turn it is (``openai.agents.turn.agent_name: music_store_support``),
under a key of its own that no convention names. A span name is no evidence by itself;
it is where the spans directly below agree under the key the user maps as the agent's
name (``normalization.mappings.agent_name``): an unrecognised span some of whose
children record its own name under that key (and none another), with a model call
below it and no agent span of the trace recording that name, is that agent's run
(rule 66). Unmapped, the key is any that ends in ``.agent.name`` (the GenAI
conventions' ``gen_ai.agent.name``, a vendor's ``<ns>.agent.name``: Langtrace's Agno
wrapper writes ``agno.agent.name`` on an ``Agent.arun`` span beside the model calls,
under the user's root span named after the agent), the only keys of that form the
decoder keeps (``evidence.SUFFIXES``); children that record two names under such keys
name nothing, and agent spans among them are not asked (their name is their own).
"""

from __future__ import annotations

from typing import Final

from collector.core.records import AttrValue
from collector.normalize import conventions
from collector.normalize.evidence import AGENT_NAME  # (kept by the decoder by its ending)
from collector.normalize.handoffs import slug
from collector.normalize.history import reply_authors
from collector.normalize.mappings import Mappings
from collector.normalize.roles import AGENTIC, Role
from collector.normalize.steps import agent_name, recorded_agent_name
from collector.normalize.tree import SpanTree, role_below

NAME: Final = "name"
KEYS: Final[tuple[str, ...]] = (NAME,)
_MAX_DEPTH: Final = 8  # levels below a candidate looked through for a model call
_LLM: Final = frozenset({Role.LLM})


def confirmed_agents(
    tree: SpanTree, roles: list[Role], mappings: Mappings | None = None
) -> dict[int, str]:
    """Span index → agent name for every unrecognised span that a hand-over or the
    spans below confirm as an agent (module docstring); their roles become
    ``Role.AGENT`` in ``roles``."""
    mapped = mappings.agent_name if mappings is not None else None
    found = _named_by_children(tree, roles, mapped, mappings)
    found.update(_named_by_hand_over(tree, roles))
    found.update(_named_by_replies(tree, roles, mappings, found))
    return found


def _named_by_replies(
    tree: SpanTree, roles: list[Role], mappings: Mappings | None, named: dict[int, str]
) -> dict[int, str]:
    """Rule 95: an agent span named ``<X>.<method>`` that records no agent name is agent
    X when the assistant messages in the request of the last model call below it (its
    own work: the walk stops at agent spans of another object) all say X wrote them
    (``history.reply_authors``: MLflow's AutoGen autolog, ``<agent>.run`` around
    ``<agent>.on_messages``, the messages' ``source``). A span name that is no method of
    its author's, no author or several (a group chat): no name."""
    found: dict[int, str] = {}
    for i, role in enumerate(roles):
        span = tree.spans[i]
        owner, dot, _ = span.name.rpartition(".")
        if role is not Role.AGENT or not dot or not owner or i in named:
            continue
        if recorded_agent_name(span, mappings):
            continue
        last = _last_model_call(tree, roles, i, owner + ".")
        authors = reply_authors(tree.spans[last]) if last >= 0 else set()
        if authors == {owner}:
            found[i] = owner
    return found


def _last_model_call(tree: SpanTree, roles: list[Role], top: int, own: str) -> int:
    """The model call below ``top`` that ended last, through plumbing and the agent spans
    of the same object (named ``own…``); -1 when there is none."""
    last, stack = -1, list(tree.children(top))
    while stack:
        i = stack.pop()
        span = tree.spans[i]
        if roles[i] is Role.LLM:
            if last < 0 or span.end_unix_nano >= tree.spans[last].end_unix_nano:
                last = i
        elif roles[i] not in AGENTIC or span.name.startswith(own):
            stack.extend(tree.children(i))
    return last


def _named_by_children(
    tree: SpanTree, roles: list[Role], key: str | None, mappings: Mappings | None
) -> dict[int, str]:
    """Rule 66 (module docstring): ``key`` is the mapped agent-name key (None: any key
    ending in ``.agent.name``). A name an agent span of the trace records is that span's:
    a plain span of the same name around it (a wrapper) is not the agent a second time."""
    found: dict[int, str] = {}
    recorded: set[str] | None = None  # (the agent spans' names: looked up once, if asked)
    for i, span in enumerate(tree.spans):
        if (
            roles[i] is Role.OTHER
            and span.name.strip()
            and _name_below(tree, roles, i, key) == span.name
            and role_below(tree, roles, i, _LLM, max_depth=_MAX_DEPTH)
        ):
            if recorded is None:
                recorded = _agent_names(tree, roles, mappings)
            if span.name not in recorded:
                found[i] = span.name
    for i in found:
        roles[i] = Role.AGENT
    return found


def _agent_names(tree: SpanTree, roles: list[Role], mappings: Mappings | None) -> set[str]:
    """The names the trace's agent spans record (their span names when they record none)."""
    return {
        agent_name(span, mappings) for i, span in enumerate(tree.spans) if roles[i] is Role.AGENT
    }


def _name_below(tree: SpanTree, roles: list[Role], i: int, key: str | None) -> str | None:
    """The agent name span ``i``'s children record under ``key`` (None: under any key
    ending in ``.agent.name``), when those that record one agree; else None."""
    named: str | None = None
    for kid in tree.children(i):
        attributes = tree.spans[kid].attributes
        values: list[AttrValue]
        if key is not None:
            value = attributes.get(key)
            values = [value] if isinstance(value, str) else []
        elif roles[kid] is Role.AGENT:
            continue  # (an agent span's name is its own: a sub-agent's, or the wrapped one's)
        else:
            values = [attributes[k] for k in attributes if k.endswith(AGENT_NAME)]
        for found in values:
            if not isinstance(found, str) or (named is not None and found != named):
                return None
            named = found
    return named


def _named_by_hand_over(tree: SpanTree, roles: list[Role]) -> dict[int, str]:
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
