"""Vercel AI SDK ``experimental_telemetry`` (``ai`` 6.x; ``ai.*`` attributes).

``ai.operationId`` (or the span name) decides the role: ``ai.generateText`` /
``ai.streamText`` … are the agent run, ``….doGenerate``/``….doStream`` the model
calls, ``ai.toolCall`` the tools. No conversation concept: sessions only exist as
user metadata ``ai.telemetry.metadata.<key>`` (``ai`` <= 6) or included runtime
context ``ai.settings.context.<key>`` (``ai`` 7, on the spans of both @ai-sdk/otel
integrations; ``ai`` 7's ``ToolLoopAgent`` spans are plain GenAI ones, read by
``genai``). Start times have millisecond resolution (observed), so ordering ties are
common and broken by tree order.
"""

from __future__ import annotations

from typing import Final

from collector.core.records import Span
from collector.normalize.messages import USER_ROLES, RequestedCall, last_text, requested
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, as_list, session_keys, structured, text

NAME: Final = "vercel_ai"
OPERATION_ID: Final = "ai.operationId"
TOOL_CALL: Final = "ai.toolCall"
TOOL_NAME: Final = "ai.toolCall.name"
TOOL_CALL_ID: Final = "ai.toolCall.id"
TOOL_ARGS: Final = "ai.toolCall.args"
TOOL_RESULT: Final = "ai.toolCall.result"
FUNCTION_ID: Final = "ai.telemetry.functionId"
PROMPT: Final = "ai.prompt"
RESPONSE_TEXT: Final = "ai.response.text"
RESPONSE_TOOL_CALLS: Final = "ai.response.toolCalls"
MODEL_ID: Final = "ai.model.id"
INPUT_TOKENS: Final = ("ai.usage.inputTokens", "ai.usage.promptTokens")  # 5.x+, 4.x
OUTPUT_TOKENS: Final = ("ai.usage.outputTokens", "ai.usage.completionTokens")
_METADATA: Final = "ai.telemetry.metadata."  # ai <= 6: experimental_telemetry.metadata
# ai 7 (@ai-sdk/otel, both integrations): the runtime context the user let through
# (telemetry.includeRuntimeContext) with the integration's ``runtimeContext: true``;
# ``metadata`` is gone from TelemetryOptions.
_RUNTIME_CONTEXT: Final = "ai.settings.context."
SESSION_KEYS: Final[tuple[str, ...]] = session_keys(_METADATA, _RUNTIME_CONTEXT)

KEYS: Final[tuple[str, ...]] = (
    OPERATION_ID,
    TOOL_NAME,
    TOOL_CALL_ID,
    TOOL_ARGS,
    TOOL_RESULT,
    FUNCTION_ID,
    PROMPT,
    RESPONSE_TEXT,
    RESPONSE_TOOL_CALLS,
    MODEL_ID,
    *INPUT_TOKENS,
    *OUTPUT_TOKENS,
    *SESSION_KEYS,
)
PREFIXES: Final[tuple[str, ...]] = ()

_RUN_OPERATIONS: Final = frozenset(
    {"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"}
)
_MODEL_CALL_SUFFIXES: Final = (".doGenerate", ".doStream")


def _operation(span: Span) -> str | None:
    operation = text(span.attributes.get(OPERATION_ID))
    if operation is not None:
        return operation
    return span.name if span.name == TOOL_CALL or span.name in _RUN_OPERATIONS else None


def classify(span: Span) -> Role | None:
    operation = _operation(span)
    if operation is None or not operation.startswith("ai."):
        return None
    if operation == TOOL_CALL:
        return Role.TOOL
    if operation in _RUN_OPERATIONS:
        return Role.AGENT
    return Role.LLM if operation.endswith(_MODEL_CALL_SUFFIXES) else Role.OTHER


def requested_calls(span: Span) -> list[RequestedCall] | None:
    value = span.attributes.get(RESPONSE_TOOL_CALLS)
    if value is None:
        return None
    parsed = structured(value)
    calls: list[RequestedCall] = []
    for item in as_list(parsed) or ():
        if not isinstance(item, dict):
            continue
        # ``input`` since ai 5; ``args`` before.
        arguments = item.get("input") if "input" in item else item.get("args")
        made = requested(item.get("toolCallId"), item.get("toolName"), arguments)
        if made is not None:
            calls.append(made)
    return calls


def llm_output(span: Span) -> str | None:
    return text(span.attributes.get(RESPONSE_TEXT))


def run_input(span: Span) -> str | None:
    value = span.attributes.get(PROMPT)
    if value is None:
        return None
    parsed = structured(value)
    return None if parsed is INVALID else last_text(parsed, USER_ROLES)


def run_output(span: Span) -> str | None:
    return text(span.attributes.get(RESPONSE_TEXT))
