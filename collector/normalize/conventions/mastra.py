"""Mastra's OpenTelemetry export (``@mastra/otel-exporter``): GenAI semconv names, with
the run's input only in Mastra's own attributes.

Every span carries ``gen_ai.operation.name`` and ``mastra.span.type``, and the agent,
model and tool spans are read as GenAI ones (``genai``). The user's words are in no
GenAI attribute (observed with @mastra/core 1.71: the agent span has no
``gen_ai.input.messages``, the model spans no input): only in
``mastra.agent_run.input`` of the agent span, as text, or as the JSON message list
the agent was given. Keyed to the attribute, not to a scope or span name.
"""

from __future__ import annotations

from typing import Final

from collector.core.records import Span
from collector.normalize.messages import USER_ROLES, last_text
from collector.normalize.values import INVALID, structured

NAME: Final = "mastra"
RUN_INPUT: Final = "mastra.agent_run.input"

KEYS: Final[tuple[str, ...]] = (RUN_INPUT,)
PREFIXES: Final[tuple[str, ...]] = ()


def run_input(span: Span) -> str | None:
    """The agent run's input: the text, or the last user message of a message list."""
    value = span.attributes.get(RUN_INPUT)
    if value is None:
        return None
    if isinstance(value, str) and value.lstrip()[:1] not in ("[", "{"):
        return value if value.strip() else None
    parsed = structured(value)
    if parsed is INVALID:
        return value if isinstance(value, str) and value.strip() else None
    return last_text(parsed, USER_ROLES)
