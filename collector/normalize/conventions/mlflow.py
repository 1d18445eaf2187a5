"""MLflow Tracing's span attributes, as its OTLP export sends them: ``mlflow.span*``.

MLflow (3.x, ``mlflow`` / ``mlflow-tracing``) records every span with
``mlflow.spanType`` (``LLM``, ``CHAT_MODEL``, ``CHAIN``, ``AGENT``, ``TOOL``,
``RETRIEVER``, ``PARSER``, ``EMBEDDING``, ``RERANKER``, ``MEMORY``, ``UNKNOWN``,
``WORKFLOW``, ``TASK``, ``GUARDRAIL``, ``EVALUATOR``), ``mlflow.spanInputs`` /
``mlflow.spanOutputs`` and every other attribute JSON-encoded (a string arrives quoted:
``"\\"CHAIN\\""``). Model spans add ``mlflow.llm.model`` and token counts as the JSON
object ``mlflow.chat.tokenUsage`` (``{"input_tokens", "output_tokens", "total_tokens"}``).

What its autologgers write there (observed with mlflow 3.17.2's LangChain and OpenAI
autolog on a LangGraph agent): a chat model's input is ``{"messages": [...]}`` in
OpenAI's shape, its output ``{"choices": [{"message": {...tool_calls}}]}`` (the OpenAI
client's span: the raw Chat Completions response); a tool's input is the arguments
object and its output the serialized ``ToolMessage`` (``status`` ``error`` for a handled
failure); a chain's input/output are the graph state. LangChain's callback keywords
become attributes under their own bare names: ``metadata`` (the run metadata,
``langgraph_node``, ``lc_agent_name``, ``thread_id``) and a tool's ``tool_call_id``.
Nothing here is read unless ``mlflow.spanType`` marks the span.
"""

from __future__ import annotations

import re
from typing import Any, Final

from collector.core.records import Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    block_calls,
    content_tool_calls,
    first_choice,
    last_text,
    message_list,
    openai_tool_calls,
    role_of,
    text_of,
)
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, integer, parse_json, quoted_text, structured

NAME: Final = "mlflow"
SPAN_TYPE: Final = "mlflow.spanType"
INPUTS: Final = "mlflow.spanInputs"
OUTPUTS: Final = "mlflow.spanOutputs"
MODEL: Final = "mlflow.llm.model"
USAGE: Final = "mlflow.chat.tokenUsage"
METADATA: Final = "metadata"  # LangChain run metadata (also OpenInference's key)
TOOL_CALL_ID: Final = "tool_call_id"  # LangChain's on_tool_start keyword, JSON-quoted
TOOL_NAME: Final = "name"  # DSPy's tool attributes (name, description, args), JSON-quoted

KEYS: Final[tuple[str, ...]] = (
    SPAN_TYPE,
    INPUTS,
    OUTPUTS,
    MODEL,
    USAGE,
    METADATA,
    TOOL_CALL_ID,
    TOOL_NAME,
)
PREFIXES: Final[tuple[str, ...]] = ()

_MODEL_TYPES: Final = frozenset({"LLM", "CHAT_MODEL"})
# The messages a request ends in; a list ending in any other (or in an item without a role,
# DSPy's ``[{"text", "tool_calls"}]``) is the model's reply.
_REQUEST_ROLES: Final = USER_ROLES | frozenset({"tool", "function", "system", "developer"})
# A Python ``repr`` of keyword arguments (``{'user_msg': …, 'memory': …}``): no input text.
_KEYWORDS_REPR: Final = re.compile(r"\{'[A-Za-z_]\w*': .*\}", re.DOTALL)
_ROLES: Final = {
    "LLM": Role.LLM,
    "CHAT_MODEL": Role.LLM,
    "TOOL": Role.TOOL,
    "AGENT": Role.AGENT,
    "CHAIN": Role.CHAIN,
    "WORKFLOW": Role.CHAIN,  # a traced function around the work: plumbing unless it holds work
    "TASK": Role.CHAIN,
    "UNKNOWN": Role.CHAIN,
    "PARSER": Role.CHAIN,
}
_MAX_DEPTH: Final = 8


def span_type(span: Span) -> str | None:
    """``mlflow.spanType`` unquoted (MLflow JSON-encodes every attribute value)."""
    return quoted_text(span.attributes.get(SPAN_TYPE))


def classify(span: Span) -> Role | None:
    kind = span_type(span)
    if kind is None:
        return None
    if kind in ("CHAIN", "AGENT") and _is_graph_node(span):
        return Role.NODE
    return _ROLES.get(kind, Role.OTHER)  # retriever, embedding, memory, guardrail …


def _metadata(span: Span) -> dict[str, Any] | None:
    value = span.attributes.get(METADATA)
    if not isinstance(value, str) or "langgraph_node" not in value:
        return None
    parsed = parse_json(value)
    return parsed if isinstance(parsed, dict) else None


def _is_graph_node(span: Span) -> bool:
    metadata = _metadata(span)
    return metadata is not None and metadata.get("langgraph_node") == span.name


def _parsed(span: Span, key: str) -> Any:
    value = span.attributes.get(key)
    if value is None:
        return None
    parsed = structured(value)
    return None if parsed is INVALID else parsed


def _is_model(span: Span) -> bool:
    return span_type(span) in _MODEL_TYPES


def model(span: Span) -> str | None:
    return quoted_text(span.attributes.get(MODEL)) if _is_model(span) else None


def tool_call_id(span: Span) -> str | None:
    return quoted_text(span.attributes.get(TOOL_CALL_ID)) if span_type(span) == "TOOL" else None


def tool_name(span: Span) -> str | None:
    """A tool span's bare ``name`` attribute (DSPy's autolog names the span ``Tool.<name>``
    and records the tool's own name there), only on a span MLflow types as a tool."""
    return quoted_text(span.attributes.get(TOOL_NAME)) if span_type(span) == "TOOL" else None


def model_inputs(span: Span) -> Any:
    """A model span's recorded inputs (its request: a message list, maybe under
    ``messages``), parsed; None on any other span."""
    return _parsed(span, INPUTS) if _is_model(span) else None


def agent_name(span: Span) -> str | None:
    """An agent span's bare ``name`` attribute: MLflow's autologs copy the agent object's
    public fields onto its span (pydantic-ai's and smolagents' ``name``), as they copy a
    tool's onto a tool span (``tool_name``)."""
    return quoted_text(span.attributes.get(TOOL_NAME)) if span_type(span) == "AGENT" else None


def requested_calls(span: Span) -> list[RequestedCall] | None:
    if not _is_model(span):
        return None
    reply, history = _output_reply(span)
    if history:
        reply = history[-1]
    found = openai_tool_calls(_tool_call_items(reply, 0))
    if not found and isinstance(reply, dict):
        found = block_calls(reply.get("blocks"))  # (LlamaIndex: the call only as a block)
        if not found:  # (AutoGen's ``CreateResult``: the calls as its content)
            found = content_tool_calls(reply.get("content"))
        if not found and role_of(reply) in ASSISTANT_ROLES:
            found = block_calls(reply.get("parts"))  # (pydantic-ai's response: call parts)
    return found


def _output_reply(span: Span) -> tuple[Any, list[Any] | None]:
    """A model span's reply (``_reply``) and the message list it is, if one; ``(None,
    None)`` when the output is a request being prepared: a message list ending in a
    request's message answers nothing and requests nothing, whatever assistant turns of
    earlier rounds it holds."""
    reply = _reply(_parsed(span, OUTPUTS))
    history = message_list(reply)
    if history and role_of(history[-1]) in _REQUEST_ROLES:
        return None, None
    return reply, history


def _reply(output: Any) -> Any:
    """The assistant message of a Chat Completions-shaped output (first choice), or of a
    response object that holds it under ``message`` beside the provider's raw answer
    (LlamaIndex's ``ChatResponse``: ``{message: {role, blocks}, raw, …}``)."""
    if isinstance(output, dict):
        chosen = first_choice(output)
        if chosen is not None:
            return chosen
        message = output.get("message")
        if (
            "role" not in output
            and isinstance(message, dict)
            and role_of(message) in ASSISTANT_ROLES
        ):
            return message
    return output


def _tool_call_items(value: Any, depth: int) -> list[Any]:
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
    if isinstance(value, str):
        return value or None
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return value[0] or None  # completions, no roles (DSPy's LM: a list of texts)
    if isinstance(value, dict) and message_list(value) is None:
        return text_of(value) if role_of(value) in roles or role_of(value) is None else None
    return last_text(value, roles)


def llm_input(span: Span) -> str | None:
    if not _is_model(span):
        return None
    return last_text(_parsed(span, INPUTS), USER_ROLES)


def llm_output(span: Span) -> str | None:
    if not _is_model(span):
        return None
    reply, _ = _output_reply(span)  # (a request's earlier answers are no reply of this call)
    return None if reply is None else _text(reply, ASSISTANT_ROLES)


def run_input(span: Span) -> str | None:
    if span_type(span) is None:
        return None
    value = _parsed(span, INPUTS)
    if isinstance(value, str) and _KEYWORDS_REPR.fullmatch(value):
        return None  # the call's keyword arguments as a Python dict's repr: no user's text
    return _text(value, USER_ROLES)


def run_output(span: Span) -> str | None:
    if span_type(span) is None:
        return None
    return _text(_parsed(span, OUTPUTS), ASSISTANT_ROLES)


def tokens(span: Span) -> tuple[int | None, int | None]:
    usage = _parsed(span, USAGE)
    if not isinstance(usage, dict):
        return None, None
    return integer(usage.get("input_tokens")), integer(usage.get("output_tokens"))
