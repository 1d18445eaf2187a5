"""Google ADK (tracer ``gcp.vertex.agent``): GenAI semconv plus its legacy schema.

The default schema (v2) is plain GenAI semconv and handled by ``genai``. This
module adds the legacy schema (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``): root
``invocation``, model calls ``call_llm`` with Gemini-shaped
``gcp.vertex.agent.llm_request``/``llm_response``, tool args/results in
``gcp.vertex.agent.tool_call_args``/``tool_response``, session in
``gcp.vertex.agent.session_id``. ADK tools report handled errors as result dicts
``{"status": "error", …}`` with span status UNSET (see ``results``).
"""

from __future__ import annotations

from typing import Any, Final

from collector.core.records import Span
from collector.normalize.messages import USER_ROLES, RequestedCall, last_text, requested, text_of
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, structured

NAME: Final = "google_adk"
SCOPE: Final = "gcp.vertex.agent"
_PREFIX: Final = "gcp.vertex.agent."
TOOL_ARGS: Final = _PREFIX + "tool_call_args"
TOOL_RESPONSE: Final = _PREFIX + "tool_response"
LLM_REQUEST: Final = _PREFIX + "llm_request"
LLM_RESPONSE: Final = _PREFIX + "llm_response"
SESSION_ID: Final[str] = _PREFIX + "session_id"

KEYS: Final[tuple[str, ...]] = (TOOL_ARGS, TOOL_RESPONSE, LLM_REQUEST, LLM_RESPONSE, SESSION_ID)
PREFIXES: Final[tuple[str, ...]] = ()

_ROLES: Final = {"call_llm": Role.LLM, "invocation": Role.WORKFLOW}


def classify(span: Span) -> Role | None:
    """``call_llm`` / ``invocation`` of ADK's tracer; a span that records a Gemini-shaped
    ``gcp.vertex.agent.llm_request`` or ``llm_response`` is a model call whatever its
    scope (the attributes are evidence enough: a renamed tracer or a re-exporter that
    drops scopes must not lose the model calls' texts)."""
    role = _ROLES.get(span.name)
    if role is None or span.scope_name == SCOPE:
        return role
    attributes = span.attributes
    if role is Role.LLM and (LLM_REQUEST in attributes or LLM_RESPONSE in attributes):
        return role
    return None


def _llm_response_parts(span: Span) -> list[Any] | None:
    value = span.attributes.get(LLM_RESPONSE)
    parsed = None if value is None else structured(value)
    content = parsed.get("content") if isinstance(parsed, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else ([] if value is not None else None)


def requested_calls(span: Span) -> list[RequestedCall] | None:
    parts = _llm_response_parts(span)
    if parts is None:
        return None
    calls: list[RequestedCall] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        call = part.get("function_call") or part.get("functionCall")
        if isinstance(call, dict):
            made = requested(call.get("id"), call.get("name"), call.get("args"))
            if made is not None:
                calls.append(made)
    return calls


def llm_input(span: Span) -> str | None:
    value = span.attributes.get(LLM_REQUEST)
    parsed = None if value is None else structured(value)
    return None if parsed is None or parsed is INVALID else last_text(parsed, USER_ROLES)


def llm_output(span: Span) -> str | None:
    parts = _llm_response_parts(span)
    return text_of({"parts": parts}) if parts else None
