"""Strands Agents (``strands.telemetry.tracer``): GenAI semconv with content in span events.

Default (semconv ≤1.36 style) Strands records content only as events: tool input
in ``gen_ai.tool.message`` (``content``), tool output and model replies in
``gen_ai.choice`` (``message``: JSON content blocks ``[{"text"}|{"toolUse"}]``),
user input in ``gen_ai.user.message``. With the latest-semconv opt-in it uses span
attributes and ``gen_ai.client.inference.operation.details`` events (``genai``).
Event attributes are always decoded whole, so no selector keys are needed here.
"""

from __future__ import annotations

from typing import Final

from collector.core.records import AttrValue, Span
from collector.normalize.conventions import genai
from collector.normalize.messages import RequestedCall, requested, text_of_content
from collector.normalize.values import INVALID, as_list, event_attribute, structured, text

NAME: Final = "strands"
SCOPE_PREFIX: Final = "strands"
TOOL_MESSAGE_EVENT: Final = "gen_ai.tool.message"  # on execute_tool: the tool input
# On execute_tool: the result; on chat/invoke_agent: the reply.
CHOICE_EVENT: Final = "gen_ai.choice"
USER_MESSAGE_EVENT: Final = "gen_ai.user.message"

KEYS: Final[tuple[str, ...]] = ()
PREFIXES: Final[tuple[str, ...]] = ()


def tool_arguments(span: Span) -> AttrValue:
    return event_attribute(span, TOOL_MESSAGE_EVENT, "content")


def tool_result(span: Span) -> AttrValue:
    return event_attribute(span, CHOICE_EVENT, "message")


def _choice_blocks(span: Span) -> list[object] | tuple[object, ...] | None:
    value = event_attribute(span, CHOICE_EVENT, "message")
    if value is None:
        return None
    parsed = structured(value)
    return None if parsed is INVALID else as_list(parsed)


def requested_calls(span: Span) -> list[RequestedCall] | None:
    blocks = _choice_blocks(span)
    if blocks is None:
        return None
    calls: list[RequestedCall] = []
    for block in blocks:
        use = block.get("toolUse") if isinstance(block, dict) else None
        if isinstance(use, dict):
            made = requested(use.get("toolUseId"), use.get("name"), use.get("input"))
            if made is not None:
                calls.append(made)
    return calls


def llm_output(span: Span) -> str | None:
    return text_of_content(_choice_blocks(span))


def llm_input(span: Span) -> str | None:
    """Text of the last ``gen_ai.user.message`` event that has text (history precedes it)."""
    for event in reversed(span.events):
        if event.name != USER_MESSAGE_EVENT:
            continue
        content = event.attributes.get("content")
        parsed = structured(content) if content is not None else None
        found = text_of_content(parsed if parsed is not INVALID else content)
        if found:
            return found
    return None


run_input = llm_input


def run_output(span: Span) -> str | None:
    """The reply on a Strands ``invoke_agent`` span, as the final message had it.

    Strands records ``str(AgentResult)`` there, which ends every text block with a
    newline (observed, both modes), and in default mode as plain text, not JSON
    blocks; the newline is dropped so the output equals the final message's text.
    """
    if not span.scope_name.startswith(SCOPE_PREFIX):
        return None
    value = event_attribute(span, CHOICE_EVENT, "message")
    if value is None:
        found = genai.run_output(span)  # latest semconv: operation-details event
    else:
        parsed = structured(value)
        blocks = None if parsed is INVALID else as_list(parsed)
        found = text_of_content(blocks) if blocks is not None else text(value)
    if not found:
        return None
    return found.removesuffix("\n") or None
