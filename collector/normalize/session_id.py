"""The session / conversation id of a trace (CONVENTIONS §6.8).

Precedence (by key, whichever span holds it): the user's mapping →
``gen_ai.conversation.id`` → ADK legacy ``gcp.vertex.agent.session_id`` →
``session.id`` → ``traceloop.association.properties.<leaf>`` →
``langsmith.metadata.<leaf>`` → ``ai.telemetry.metadata.<leaf>`` →
``ai.settings.context.<leaf>``, each namespace with the leaves ``session_id``,
``sessionId``, ``thread_id``, ``threadId``, ``conversation_id``, ``conversationId`` in
that order (``values.SESSION_LEAVES``) → OpenInference ``metadata`` JSON
(``session_id|conversation_id|thread_id``), parsed only if nothing else matched, or
VoltAgent's ``conversation.id`` (a common key name: on VoltAgent's spans only) →
``session.id`` on a span's resource (a process-wide session). A
value written as the text ``null`` / ``None`` is no id, nor is a bracketed one: a
redaction's placeholder (Logfire scrubs a ``session_id`` on its own spans to
``[Scrubbed due to 'session']`` and leaves it on the model client's), so the next span
holding the key is asked.

Caveats users see: pydantic-ai always sets a (random) conversation id; LangGraph
copies its thread id into ``session.id`` even for one-shot runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from collector.core.records import Span, Trace
from collector.normalize.conventions import (
    adk,
    agentops,
    genai,
    genkit,
    langsmith,
    openinference,
    traceloop,
    vercel,
    voltagent,
)
from collector.normalize.mappings import Mappings
from collector.normalize.tree import SpanTree
from collector.normalize.values import parse_json, scalar_text

SESSION_KEYS: Final = (
    genai.CONVERSATION_ID,
    adk.SESSION_ID,
    openinference.SESSION_ID,
    *traceloop.SESSION_KEYS,
    *langsmith.SESSION_KEYS,
    *vercel.SESSION_KEYS,
    *genkit.SESSION_KEYS,
    *agentops.SESSION_KEYS,
)


# An absent value written as text (Logfire records a None ``group_id`` as "null"): no id.
_ABSENT: Final = frozenset({"null", "None", "undefined", "nil"})


def session_id(spans: Sequence[Span], mappings: Mappings | None) -> str | None:
    """The best-ranked session id on any of ``spans`` (pass them root first)."""
    keys = SESSION_KEYS
    if mappings is not None and mappings.session_id:
        keys = (mappings.session_id, *keys)
    best: str | None = None
    rank = len(keys)
    for span in spans:
        attributes = span.attributes
        for candidate in range(rank):  # only keys that would beat what we have
            found = _unquoted(scalar_text(attributes.get(keys[candidate])))
            if found is not None and found not in _ABSENT and not _placeholder(found):
                best, rank = found, candidate
                break
        if rank == 0:
            break
    if best is not None:
        return best
    for span in spans:
        found = openinference.metadata_session(span)
        if found is None and voltagent.CONVERSATION_ID in span.attributes:
            found = voltagent.session(span)  # (a common key name: VoltAgent's spans only)
        if found is not None and found not in _ABSENT:
            return found
    return _resource_session(spans)


def _resource_session(spans: Sequence[Span]) -> str | None:
    """``session.id`` set on a process's resource (mcp-agent's ``MCPApp(session_id=)``):
    every span that process sends is in that session. The last resort: a span's own id
    is more precise than its process's."""
    seen: set[int] = set()
    for span in spans:
        resource = span.resource
        if id(resource) in seen:
            continue
        seen.add(id(resource))
        found = scalar_text(resource.attributes.get(openinference.SESSION_ID))
        if found is not None and found not in _ABSENT and not _placeholder(found):
            return found
    return None


def _unquoted(value: str | None) -> str | None:
    """An id written as a JSON string literal (``"sess-1"``, quotes included: AgentScope
    JSON-encodes some attribute values) is the string it encodes."""
    if value is None or len(value) < 3 or value[0] != '"' or value[-1] != '"':
        return value
    decoded = parse_json(value)
    return decoded if isinstance(decoded, str) else value


def _placeholder(value: str) -> bool:
    """A value standing in for a hidden one: bracketed, and a note (words) or a
    redaction's word inside (``[Scrubbed due to 'session']``, ``[REDACTED]``). An id
    in brackets (``<CAF+abc@mail.example.com>``, an email thread's) is an id."""
    if len(value) < 3 or value[0] not in _CLOSING or value[-1] != _CLOSING[value[0]]:
        return False
    inner = value[1:-1]
    if " " in inner:
        return True
    lowered = inner.lower()
    return any(word in lowered for word in _REDACTION_WORDS)


_CLOSING: Final = {"[": "]", "<": ">"}
_REDACTION_WORDS: Final = ("redact", "scrub", "mask", "hidden", "filtered", "removed")


def session_key(trace: Trace, mappings: Mappings | None = None) -> tuple[str, str | None]:
    """``(service, session id)`` of ``trace``'s trajectory, without building it.

    Exactly what ``normalize`` puts in ``Trajectory.service`` / ``session_id`` (same
    root, same span order), for a fraction of its cost: replay workers shard by it so
    that every turn of a session reaches the same worker.
    """
    tree = SpanTree(trace.spans)
    if not len(tree):
        return "unknown_service", None
    spans = tree.spans
    service = spans[tree.root].resource.service_name
    return service, session_id([spans[i] for i in tree.preorder()], mappings)
