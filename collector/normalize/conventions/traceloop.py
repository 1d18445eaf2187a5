"""OpenLLMetry / Traceloop: ``traceloop.span.kind`` plus GenAI semconv attributes (0.62).

Tool arguments come as the LangChain wrapper JSON (handled by ``arguments``), the
session as ``traceloop.association.properties.<key>``. Older OpenLLMetry releases
flatten the request as ``gen_ai.prompt.N.{role, content}`` and completions as
``gen_ai.completion.N.{content, tool_calls.M.{id,name,arguments}}`` on LLM spans marked
by ``llm.request.type`` (``gen_ai.request.type`` in forks of that instrumentation, such
as AgentOps'); those are read too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from collector.core.records import AttrValue, Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    flattened_calls,
    text_of_content,
)
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, json_ready, parse_json, session_keys, text

NAME: Final = "traceloop"
SPAN_KIND: Final = "traceloop.span.kind"
ENTITY_NAME: Final = "traceloop.entity.name"
_ASSOCIATION: Final = "traceloop.association.properties."
SESSION_KEYS: Final[tuple[str, ...]] = session_keys(_ASSOCIATION)
LANGGRAPH_NODE: Final = _ASSOCIATION + "langgraph_node"
LEGACY_REQUEST_TYPE: Final = "llm.request.type"
LEGACY_REQUEST_TYPES: Final = (LEGACY_REQUEST_TYPE, "gen_ai.request.type")
LEGACY_PROMPT: Final = "gen_ai.prompt."
LEGACY_COMPLETION: Final = "gen_ai.completion."
# The LlamaIndex instrumentation's tool calls: ``tool.name``, ``tool.arguments`` (JSON)
# and the call's record as the entity output (``ToolCallResult``: ``tool_id``, the
# ``ToolOutput``); its model calls carry ``gen_ai.*`` under the kind ``task``.
TOOL_ARGUMENTS: Final = "tool.arguments"
ENTITY_OUTPUT: Final = "traceloop.entity.output"

KEYS: Final[tuple[str, ...]] = (
    SPAN_KIND,
    ENTITY_NAME,
    *SESSION_KEYS,
    LANGGRAPH_NODE,
    *LEGACY_REQUEST_TYPES,
    TOOL_ARGUMENTS,
    ENTITY_OUTPUT,
)
PREFIXES: Final[tuple[str, ...]] = (LEGACY_PROMPT, LEGACY_COMPLETION)

_ROLES: Final = {"workflow": Role.WORKFLOW, "agent": Role.AGENT, "unknown": Role.OTHER}
_LEGACY_LLM_TYPES: Final = frozenset({"chat", "completion"})
_MAX_INDEX: Final = 256


def classify(span: Span) -> Role | None:
    attributes = span.attributes
    kind = attributes.get(SPAN_KIND)
    if kind == "task":
        # LangGraph nodes are tasks whose association properties name them.
        node = attributes.get(LANGGRAPH_NODE)
        return Role.NODE if node is not None and node == attributes.get(ENTITY_NAME) else Role.CHAIN
    if isinstance(kind, str):
        return _ROLES.get(kind, Role.OTHER)
    for key in LEGACY_REQUEST_TYPES:
        request_type = attributes.get(key)
        if isinstance(request_type, str) and request_type in _LEGACY_LLM_TYPES:
            return Role.LLM
    return None


def flattened_exchange(attributes: Mapping[str, AttrValue]) -> bool:
    """Whether a span records a model request and the assistant's reply in the flattened
    layout: ``gen_ai.prompt.0.role`` and an assistant ``gen_ai.completion.0.role``."""
    role = attributes.get(LEGACY_COMPLETION + "0.role")
    return (
        isinstance(role, str) and role in ASSISTANT_ROLES and LEGACY_PROMPT + "0.role" in attributes
    )


def node_name(span: Span) -> str | None:
    return text(span.attributes.get(ENTITY_NAME))


def requested_calls(span: Span) -> list[RequestedCall] | None:
    """Legacy flattened ``gen_ai.completion.N.tool_calls.M.*`` requested calls."""
    attributes = span.attributes
    if not _completion_at(attributes, LEGACY_COMPLETION + "0."):
        return None
    calls: list[RequestedCall] = []
    for i in range(_MAX_INDEX):
        prefix = f"{LEGACY_COMPLETION}{i}."
        if not _completion_at(attributes, prefix):
            break
        calls += flattened_calls(
            attributes, f"{prefix}tool_calls.", "", "name", "arguments", limit=_MAX_INDEX
        )
    return calls


def _completion_at(attributes: Mapping[str, AttrValue], prefix: str) -> bool:
    """Whether a flattened completion is at ``prefix``: a role, a content, or only the
    calls it requests (AgentOps' OpenAI Agents integration writes a Responses-API
    ``function_call`` item so: only the assistant requests calls)."""
    return (
        prefix + "role" in attributes
        or prefix + "content" in attributes
        or prefix + "tool_calls.0.name" in attributes
    )


def llm_input(span: Span) -> str | None:
    """Legacy flattened request: the last ``gen_ai.prompt.N.content`` of a user message."""
    attributes = span.attributes
    found = None
    for prefix, role in _prompt_messages(attributes):
        if isinstance(role, str) and role in USER_ROLES:
            found = _content_text(attributes.get(prefix + "content")) or found
    return found


def _prompt_messages(attributes: Mapping[str, AttrValue]) -> list[tuple[str, AttrValue]]:
    """``(key prefix, role)`` of each flattened request message ``gen_ai.prompt.N.*``,
    in order, up to the first index without a role (at most ``_MAX_INDEX``)."""
    found: list[tuple[str, AttrValue]] = []
    if LEGACY_PROMPT + "0.role" not in attributes:
        return found
    for i in range(_MAX_INDEX):
        prefix = f"{LEGACY_PROMPT}{i}."
        role = attributes.get(prefix + "role")
        if role is None:
            break
        found.append((prefix, role))
    return found


def _content_text(content: AttrValue) -> str | None:
    """A flattened message's text: content written as a JSON list of blocks (Anthropic's,
    multimodal OpenAI) gives its text blocks only (a ``tool_result`` block is none)."""
    if isinstance(content, str) and content.startswith("["):
        parsed = parse_json(content)
        if parsed is not INVALID:
            return text_of_content(parsed)
    return text(content)


def legacy_messages(span: Span) -> list[dict[str, Any]] | None:
    """The flattened request ``gen_ai.prompt.N.*`` as OpenAI chat messages (``role``,
    ``content``, assistant ``tool_calls`` with ids, a tool message's ``tool_call_id``),
    for the history readers; None when the span records no such request."""
    attributes = span.attributes
    prompt = _prompt_messages(attributes)
    if not prompt:
        return None
    messages: list[dict[str, Any]] = []
    for prefix, role in prompt:
        content = json_ready(attributes.get(prefix + "content"))  # (any OTLP value: bytes too)
        message: dict[str, Any] = {"role": role, "content": content}
        calls = [
            {"id": call.call_id, "type": "function",
             "function": {"name": call.name,
                          "arguments": call.args if call.raw_args is None else call.raw_args}}
            for call in flattened_calls(
                attributes, f"{prefix}tool_calls.", "", "name", "arguments", limit=_MAX_INDEX
            )
        ]  # fmt: skip
        called = _function_call(attributes, prefix)
        if called is not None and not any(call["id"] == called["id"] for call in calls):
            calls.append(called)
        if calls:
            message["tool_calls"] = calls
        call_id = json_ready(attributes.get(prefix + "tool_call_id"))
        if call_id is not None:
            message["tool_call_id"] = call_id
        _function_response(attributes, prefix, message)
        messages.append(message)
    return messages


def _function_call(attributes: Mapping[str, AttrValue], prefix: str) -> dict[str, Any] | None:
    """A Gemini ``function_call`` part flattened under a message (``….function_call.name``,
    ``.args`` as JSON text, ``.id``: AgentOps' record of ADK's requests) as a tool call."""
    name = attributes.get(prefix + "function_call.name")
    if not isinstance(name, str) or not name:
        return None
    arguments = json_ready(attributes.get(prefix + "function_call.args"))  # (any OTLP value)
    function = {"name": name, "arguments": arguments}
    return {"id": json_ready(attributes.get(prefix + "function_call.id")), "type": "function",
            "function": function}  # fmt: skip


def _function_response(
    attributes: Mapping[str, AttrValue], prefix: str, message: dict[str, Any]
) -> None:
    """A flattened Gemini ``function_response`` part (``….function_response.id``,
    ``.result`` or ``.response``) makes ``message`` the answer to the call of that id: a
    tool message (Gemini sends the answers in the user's turn)."""
    call_id = attributes.get(prefix + "function_response.id")
    name = attributes.get(prefix + "function_response.name")
    if call_id is None and name is None:
        return
    result = attributes.get(prefix + "function_response.result")
    if result is None:
        result = attributes.get(prefix + "function_response.response")
    message["role"] = "tool"
    message["content"] = json_ready(result)
    if call_id is not None:
        message["tool_call_id"] = json_ready(call_id)
    if name is not None:
        message["name"] = name


def llm_output(span: Span) -> str | None:
    """Legacy flattened completion text (last non-empty ``gen_ai.completion.N.content``)."""
    attributes = span.attributes
    found = None
    for i in range(_MAX_INDEX):
        prefix = f"{LEGACY_COMPLETION}{i}."
        content = attributes.get(prefix + "content")
        if content is None and prefix + "role" not in attributes:
            break
        found = text(content) or found
    return found
