"""LangSmith's OTel export (``LANGSMITH_TRACING_MODE=otel``): ``langsmith.*``, ``gen_ai.prompt``.

Built from CONVENTIONS.md and the INVENTORY (no LangSmith trace files ship here):
run types map to ``langsmith.span.kind`` (``chain``/``llm``/``tool``); tool args
are ``gen_ai.prompt``, results ``gen_ai.completion`` (``{"output": <ToolMessage>}``);
LLM prompts/completions are LangChain serialized messages/generations, so tool
calls are found by a bounded search for ``tool_calls`` lists.
"""

from __future__ import annotations

from typing import Any, Final

from collector.core.records import Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    genai_tool_calls,
    last_text,
    requested,
    text_of,
)
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, session_keys, structured, text

NAME: Final = "langsmith"
SPAN_KIND: Final = "langsmith.span.kind"
PROMPT: Final = "gen_ai.prompt"
COMPLETION: Final = "gen_ai.completion"
TAGS: Final = "langsmith.span.tags"
_METADATA: Final = "langsmith.metadata."
# NB ``langsmith.trace.session_id/_name`` is the LangSmith *project*, not a conversation.
SESSION_KEYS: Final[tuple[str, ...]] = session_keys(_METADATA)
AGENT_NAME: Final = _METADATA + "lc_agent_name"
LANGGRAPH_NODE: Final = _METADATA + "langgraph_node"

KEYS: Final[tuple[str, ...]] = (
    SPAN_KIND,
    PROMPT,
    COMPLETION,
    TAGS,
    *SESSION_KEYS,
    AGENT_NAME,
    LANGGRAPH_NODE,
)
PREFIXES: Final[tuple[str, ...]] = ()

_ROLES: Final = {"llm": Role.LLM, "chat_model": Role.LLM}
_MAX_DEPTH: Final = 8


def classify(span: Span) -> Role | None:
    kind = span.attributes.get(SPAN_KIND)
    if not isinstance(kind, str):
        return None
    if kind == "chain":
        return Role.NODE if _is_graph_node(span) else Role.CHAIN
    return _ROLES.get(kind, Role.OTHER)


def _is_graph_node(span: Span) -> bool:
    """LangGraph tags node runs ``graph:step:N``; metadata may also name the node."""
    if span.attributes.get(LANGGRAPH_NODE) == span.name:
        return True
    tags = span.attributes.get(TAGS)
    if isinstance(tags, str):
        return "graph:step:" in tags
    return isinstance(tags, tuple) and any(
        isinstance(tag, str) and tag.startswith("graph:step:") for tag in tags
    )


def requested_calls(span: Span) -> list[RequestedCall] | None:
    value = span.attributes.get(COMPLETION)
    kind = span.attributes.get(SPAN_KIND)
    if value is None or not isinstance(kind, str) or kind not in _ROLES:
        return None  # (a kind of another type, a list or a map, is no kind: unhashable too)
    parsed = structured(value)
    calls: list[RequestedCall] = []
    for item in _tool_call_items(parsed, 0):
        function = item.get("function")
        if isinstance(function, dict):  # OpenAI shape {"id", "function": {"name", "arguments"}}
            made = requested(item.get("id"), function.get("name"), function.get("arguments"))
        else:  # LangChain ToolCall {"name", "args", "id"}
            made = requested(item.get("id"), item.get("name"), item.get("args"))
        if made is not None:
            calls.append(made)
    # The OpenAI Responses API's reply (the OpenAI Agents SDK traced by LangSmith): its
    # ``function_call`` items, under ``output``.
    return calls or list(genai_tool_calls(parsed))


def _tool_call_items(value: Any, depth: int) -> list[dict[str, Any]]:
    """Items of the first ``tool_calls`` list found depth-first in ``value``."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, dict):
        calls = value.get("tool_calls")
        if isinstance(calls, list) and calls:
            return [item for item in calls if isinstance(item, dict)]
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


def llm_input(span: Span) -> str | None:
    return _last(span, PROMPT, USER_ROLES)


def llm_output(span: Span) -> str | None:
    parsed = _parsed(span, COMPLETION)
    generations = parsed.get("generations") if isinstance(parsed, dict) else None
    while isinstance(generations, list) and generations:
        generations = generations[-1]  # [[generation]] → the last generation
    if isinstance(generations, dict):
        return text(generations.get("text")) or text_of(generations.get("message"))
    return last_text(parsed, ASSISTANT_ROLES)


def run_input(span: Span) -> str | None:
    return _last(span, PROMPT, USER_ROLES)


def run_output(span: Span) -> str | None:
    return _last(span, COMPLETION, ASSISTANT_ROLES)


def _parsed(span: Span, key: str) -> Any:
    value = span.attributes.get(key)
    if value is None or span.attributes.get(SPAN_KIND) is None:
        return None  # gen_ai.prompt/completion mean something else outside LangSmith
    parsed = structured(value)
    return None if parsed is INVALID else parsed


def _last(span: Span, key: str, roles: frozenset[str]) -> str | None:
    parsed = _parsed(span, key)
    return None if parsed is None else last_text(parsed, roles)
