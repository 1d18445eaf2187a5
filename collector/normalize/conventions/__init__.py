"""One module per instrumentation family; this module fixes the order they are asked in.

Each family module exposes ``NAME``, ``KEYS``/``PREFIXES`` (the attributes it
reads: they form the decoder's selector) and whichever of these readers apply
to it; every reader returns ``None`` when the span is not of its family:

* ``classify(span)`` → ``Role`` (called by ``detect``, which fixes precedence)
* ``requested_calls(span)`` → tool calls an LLM span asked for
* ``llm_input`` / ``llm_output`` (LLM spans), ``run_input`` / ``run_output`` (agent root)

A new convention is a new module: add its readers to the tuples below and its
marker to ``detect.classify``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeAlias

from collector.core.records import Span
from collector.normalize import evidence
from collector.normalize.conventions import (
    adk,
    agentops,
    chat_events,
    genai,
    genai_events,
    genkit,
    langfuse,
    langsmith,
    langwatch,
    mastra,
    mlflow,
    openinference,
    strands,
    traceloop,
    vercel,
    voltagent,
)
from collector.normalize.messages import RequestedCall

TextReader: TypeAlias = Callable[[Span], str | None]
CallsReader: TypeAlias = Callable[[Span], list[RequestedCall] | None]

FAMILIES: Final = (
    genai,
    openinference,
    traceloop,
    vercel,
    langsmith,
    adk,
    strands,
    mastra,
    langfuse,
    mlflow,
    genkit,
    agentops,
    langwatch,
    voltagent,
    genai_events,
    chat_events,
)

REQUESTED_CALLS: Final[tuple[CallsReader, ...]] = (
    genai.requested_calls,
    openinference.requested_calls,
    vercel.requested_calls,
    strands.requested_calls,
    adk.requested_calls,
    langsmith.requested_calls,
    langfuse.requested_calls,
    mlflow.requested_calls,
    genkit.requested_calls,
    traceloop.requested_calls,
    langwatch.requested_calls,
    genai_events.requested_calls,
    chat_events.requested_calls,
    evidence.requested_calls,
)
LLM_INPUT: Final[tuple[TextReader, ...]] = (
    genai.llm_input,
    openinference.llm_input,
    strands.llm_input,
    adk.llm_input,
    langsmith.llm_input,
    langfuse.llm_input,
    mlflow.llm_input,
    genkit.llm_input,
    traceloop.llm_input,
    langwatch.llm_input,
    voltagent.llm_input,
    genai_events.llm_input,
    chat_events.llm_input,
    evidence.llm_input,
)
LLM_OUTPUT: Final[tuple[TextReader, ...]] = (
    genai.llm_output,
    openinference.llm_output,
    vercel.llm_output,
    strands.llm_output,
    adk.llm_output,
    langsmith.llm_output,
    langfuse.llm_output,
    mlflow.llm_output,
    genkit.llm_output,
    traceloop.llm_output,
    langwatch.llm_output,
    genai_events.llm_output,
    chat_events.llm_output,
    evidence.llm_output,
)
# Explicit run-level input/output on the agent root (then the trace root).
RUN_INPUT: Final[tuple[TextReader, ...]] = (
    vercel.run_input,
    genai.run_input,
    openinference.run_input,
    strands.run_input,
    langsmith.run_input,
    mastra.run_input,
    langfuse.run_input,
    mlflow.run_input,
    genkit.run_input,
    voltagent.run_input,
    evidence.run_input,
)
# Run-level inputs asked only when no model call was recorded (then nothing gives the
# request: AgentOps' Agno integration records no model span).
RUN_INPUT_FALLBACK: Final[tuple[TextReader, ...]] = (agentops.run_input,)
# Strands first: its agent span carries GenAI messages too, with a newline added. Other
# spans with Strands-style ``gen_ai.choice`` events are still read, last.
RUN_OUTPUT: Final[tuple[TextReader, ...]] = (
    strands.run_output,
    genai.run_output,
    vercel.run_output,
    strands.llm_output,
    genkit.run_output,
    langwatch.run_output,
    voltagent.run_output,
    evidence.run_output,
)
# Run-level outputs that mean parsing the whole final state: used only without LLM spans.
RUN_OUTPUT_FALLBACK: Final[tuple[TextReader, ...]] = (
    openinference.run_output,
    langsmith.run_output,
    langfuse.run_output,
    mlflow.run_output,
    agentops.run_output,
)


def first_text(readers: tuple[TextReader, ...], span: Span) -> str | None:
    """The first non-empty text any reader finds on ``span``."""
    for reader in readers:
        found = reader(span)
        if found:
            return found
    return None


def requested_calls(span: Span) -> list[RequestedCall]:
    """The tool calls an LLM span asked for, from the first family that records them."""
    for reader in REQUESTED_CALLS:
        found = reader(span)
        if found is not None:
            return found
    return []
