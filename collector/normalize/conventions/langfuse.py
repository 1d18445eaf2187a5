"""Langfuse's OpenTelemetry attributes (the Python SDK v3+ and the JS SDK v4+):
``langfuse.observation.*`` and ``langfuse.trace.*``.

Every observation the SDK records is a span with ``langfuse.observation.type``
(``span``, ``generation``, ``event``, ``agent``, ``tool``, ``chain``, ``retriever``,
``evaluator``, ``embedding``, ``guardrail``), its ``langfuse.observation.input`` /
``.output`` as JSON text, the model in ``.model.name``, token counts as the JSON
object ``.usage_details`` (``{"input": …, "output": …, "total": …}``), and an error
as ``.level`` ``ERROR`` with ``.status_message`` (read by ``errors.span_error``: the
Python SDK sets the span status too, the JS SDK v4 does not).
Metadata is flattened to ``langfuse.observation.metadata.<key>`` with each value
JSON-encoded (a string arrives quoted: ``"\\"model\\""``). The session id is
``session.id``, read with OpenInference's key.

What the integrations write there (observed with langfuse 5.0.4's LangChain
``CallbackHandler`` on a LangGraph agent): a generation's input is the OpenAI-style
message list the model was sent, followed by one ``{"role": "tool", "content":
<tool definition>}`` per bound tool (definitions, not results); its output is the
assistant message with LangChain ``tool_calls`` (``{"name", "args", "id"}``); a tool's
input is the arguments object and its output the serialized ``ToolMessage``; a chain's
input/output are the graph state (``{"messages": [...]}``). Graph nodes carry
LangChain's run metadata (``langgraph_node``, tags ``graph:step:N``).
"""

from __future__ import annotations

from typing import Any, Final

from collector.core.records import Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    last_text,
    message_list,
    openai_tool_calls,
    role_of,
    text_of,
)
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, integer, quoted_text, structured

NAME: Final = "langfuse"
TYPE: Final = "langfuse.observation.type"
INPUT: Final = "langfuse.observation.input"
OUTPUT: Final = "langfuse.observation.output"
MODEL: Final = "langfuse.observation.model.name"
USAGE: Final = "langfuse.observation.usage_details"
TRACE_INPUT: Final = "langfuse.trace.input"
TRACE_OUTPUT: Final = "langfuse.trace.output"
_METADATA: Final = "langfuse.observation.metadata."
AGENT_NAME: Final = _METADATA + "lc_agent_name"
LANGGRAPH_NODE: Final = _METADATA + "langgraph_node"
TAGS: Final = _METADATA + "tags"
TOOL_CALL_ID: Final = _METADATA + "tool_call_id"

KEYS: Final[tuple[str, ...]] = (TYPE, INPUT, OUTPUT, MODEL, USAGE, TRACE_INPUT, TRACE_OUTPUT,
        AGENT_NAME, LANGGRAPH_NODE, TAGS, TOOL_CALL_ID)  # fmt: skip
PREFIXES: Final[tuple[str, ...]] = ()

_ROLES: Final = {
    "generation": Role.LLM,
    "tool": Role.TOOL,
    "agent": Role.AGENT,
    "span": Role.CHAIN,  # a traced function (``@observe``): plumbing unless it holds work
    "event": Role.CHAIN,
}
_MAX_DEPTH: Final = 8


def classify(span: Span) -> Role | None:
    kind = span.attributes.get(TYPE)
    if not isinstance(kind, str):
        return None
    if kind in ("chain", "agent") and _is_graph_node(span):
        # The LangChain handler types a chain ``agent`` when its name contains "agent"
        # (a LangGraph node called ``agent``): the node is the stronger evidence.
        return Role.NODE
    if kind == "chain":
        return Role.CHAIN
    return _ROLES.get(kind, Role.OTHER)  # retriever, evaluator, embedding, guardrail …


def _is_graph_node(span: Span) -> bool:
    attributes = span.attributes
    if quoted_text(attributes.get(LANGGRAPH_NODE)) == span.name:
        return True
    tags = attributes.get(TAGS)
    return isinstance(tags, str) and "graph:step:" in tags


def _parsed(span: Span, key: str) -> Any:
    value = span.attributes.get(key)
    if value is None:
        return None
    parsed = structured(value)
    return None if parsed is INVALID else parsed


def _parsed_or_text(span: Span, key: str) -> Any:
    """A run's input / output as recorded: JSON text parsed, else the text itself. The
    SDKs serialize only non-string values (``JSON.stringify`` / ``json.dumps``); a string
    input or output (a user's plain request) is written as it is, not as a JSON string."""
    value = span.attributes.get(key)
    if value is None:
        return None
    parsed = structured(value)
    if parsed is INVALID:
        return value.strip() or None if isinstance(value, str) else None
    return parsed


def requested_calls(span: Span) -> list[RequestedCall] | None:
    if span.attributes.get(TYPE) != "generation":
        return None
    return openai_tool_calls(_tool_call_items(_parsed(span, OUTPUT), 0))


def _tool_call_items(value: Any, depth: int) -> list[Any]:
    """Items of the first non-empty ``tool_calls`` list found depth-first in ``value``."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, dict):
        calls = value.get("tool_calls")
        if isinstance(calls, list) and calls:
            return calls
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return []
    for child in children:
        found = _tool_call_items(child, depth + 1)
        if found:
            return found
    return []


def _text(value: Any, roles: frozenset[str]) -> str | None:
    """The last text of ``roles`` in a message list, or of a single message."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict) and message_list(value) is None:
        return text_of(value) if role_of(value) in roles or role_of(value) is None else None
    return last_text(value, roles)


def llm_input(span: Span) -> str | None:
    if span.attributes.get(TYPE) != "generation":
        return None
    return last_text(_parsed(span, INPUT), USER_ROLES)


def llm_output(span: Span) -> str | None:
    if span.attributes.get(TYPE) != "generation":
        return None
    return _text(_parsed(span, OUTPUT), ASSISTANT_ROLES)


def run_input(span: Span) -> str | None:
    for key in (TRACE_INPUT, INPUT):
        found = _text(_parsed_or_text(span, key), USER_ROLES)
        if found:
            return found
    return None


def run_output(span: Span) -> str | None:
    """The run's answer from its recorded output (a whole graph state: the last
    assistant message); used only when no model call gives it."""
    for key in (TRACE_OUTPUT, OUTPUT):
        found = _text(_parsed_or_text(span, key), ASSISTANT_ROLES)
        if found:
            return found
    return None


# ``usage_details`` is free-form: the SDK's own integrations write Langfuse's keys
# (``input``/``output``), but a usage object handed over as the provider returned it (the
# ``langfuse.openai`` drop-in, a user's ``update_current_generation(usage_details=...)``)
# keeps the provider's names, which Langfuse's server maps: Chat Completions'
# ``prompt_tokens``/``completion_tokens`` and the Responses/Anthropic ``input_tokens``/
# ``output_tokens`` (the same aliases as the GenAI convention's token keys).
_INPUT_TOKENS: Final = ("input", "prompt_tokens", "input_tokens")
_OUTPUT_TOKENS: Final = ("output", "completion_tokens", "output_tokens")


def tokens(span: Span) -> tuple[int | None, int | None]:
    """``(input, output)`` tokens from ``usage_details``, under whichever usage names."""
    usage = _parsed(span, USAGE)
    if not isinstance(usage, dict):
        return None, None
    return _first_count(usage, _INPUT_TOKENS), _first_count(usage, _OUTPUT_TOKENS)


def _first_count(usage: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        count = integer(usage.get(key))
        if count is not None:
            return count
    return None
