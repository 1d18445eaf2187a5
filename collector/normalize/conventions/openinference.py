"""OpenInference (Arize): LangChain/LangGraph, OpenAI Agents SDK, CrewAI instrumentors.

``openinference.span.kind`` decides the role. Tool spans carry no call id
(observed), so ids come from the LLM span's flattened
``llm.output_messages.N.message.tool_calls.M.tool_call.*`` family via the join;
CrewAI's event listener records no output message for a tool-calling response,
only the provider's tool calls as a JSON list in ``output.value`` (observed).
Inputs/outputs are ``input.value``/``output.value`` (JSON or plain text); a CrewAI
task span's request is its ``task_description`` (``input.value`` adds CrewAI's prompt).
History (``llm.input_messages.*``) is read only for the run's input, only its first
few messages, and only when ``input.value`` gives none (LlamaIndex records it as
Python reprs): it grows with the conversation on every LLM span, and ``input.value``
usually holds the same text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from collector.core.records import AttrValue, Span
from collector.normalize.conventions.recorded_values import generated_text, value_text
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    first_choice,
    flattened_calls,
    openai_tool_calls,
    requested,
)
from collector.normalize.roles import Role
from collector.normalize.values import parse_json, text

NAME: Final = "openinference"
SPAN_KIND: Final = "openinference.span.kind"
# OpenInference's vocabulary under GenAI names (Future AGI's traceAI, its "fi"
# convention: OpenInference's processors with the keys renamed): the span kind, and the
# flattened message families. Read only where OpenInference's own keys are absent.
GENAI_SPAN_KIND: Final = "gen_ai.span.kind"
GENAI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages."
GENAI_INPUT_MESSAGES: Final = "gen_ai.input.messages."
_KINDS: Final = frozenset(
    {"LLM", "TOOL", "AGENT", "CHAIN", "RETRIEVER", "EMBEDDING", "RERANKER", "GUARDRAIL",
     "EVALUATOR", "PROMPT", "UNKNOWN"}
)  # fmt: skip
TOOL_NAME: Final = "tool.name"
# In the spec; no instrumentor we ran emits them. (Typed: mypyc reads it in an import cycle.)
TOOL_IDS: Final[tuple[str, ...]] = ("tool.id", "tool_call.id")
TOOL_PARAMETERS: Final = "tool.parameters"  # JSON schema of the tool (single-parameter binding)
# The same under a GenAI name (traceAI writes OpenInference's vocabulary so: rule 69).
GENAI_TOOL_PARAMETERS: Final = "gen_ai.tool.parameters"
INPUT_VALUE: Final = "input.value"
OUTPUT_VALUE: Final = "output.value"
AGENT_NAME: Final = "agent.name"
NODE_ID: Final = "graph.node.id"  # openai-agents / CrewAI agent spans name the agent here too
SESSION_ID: Final = "session.id"
METADATA: Final = "metadata"  # JSON; LangGraph puts thread_id and langgraph_node here
MODEL_NAME: Final = "llm.model_name"
INPUT_TOKENS: Final = "llm.token_count.prompt"
OUTPUT_TOKENS: Final = "llm.token_count.completion"
OUTPUT_MESSAGES: Final = "llm.output_messages."
INPUT_MESSAGES: Final = "llm.input_messages."
# CrewAI event-listener task spans: the task description with the kickoff inputs filled in.
TASK_DESCRIPTION: Final = "task_description"
CREWAI_TASK_DESCRIPTION: Final = "crewai.task.description"  # the same, as OpenLLMetry records it

KEYS: Final[tuple[str, ...]] = (
    SPAN_KIND,
    GENAI_SPAN_KIND,
    TOOL_NAME,
    *TOOL_IDS,
    TOOL_PARAMETERS,
    GENAI_TOOL_PARAMETERS,
    INPUT_VALUE,
    OUTPUT_VALUE,
    AGENT_NAME,
    NODE_ID,
    SESSION_ID,
    METADATA,
    MODEL_NAME,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    TASK_DESCRIPTION,
    CREWAI_TASK_DESCRIPTION,
)
# The run's input may be only in the history (``llm_input``): its first few messages
# are kept (the system prompt, the user's request), not the growing rest.
_FIRST_MESSAGES: Final = 4
PREFIXES: Final[tuple[str, ...]] = (
    OUTPUT_MESSAGES,
    *(f"{INPUT_MESSAGES}{i}.message." for i in range(_FIRST_MESSAGES)),
    GENAI_OUTPUT_MESSAGES,
    *(f"{GENAI_INPUT_MESSAGES}{i}.message." for i in range(_FIRST_MESSAGES + 1)),
)

_ROLES: Final = {"LLM": Role.LLM, "AGENT": Role.AGENT}
# openai-agents ≥0.24 wraps each model→tools round of the agent loop in a ``turn`` span
# (SDK ``TurnSpanData``, no attributes), exported as a CHAIN: structure, like Strands cycles.
OPENAI_AGENTS_SCOPE: Final = "openinference.instrumentation.openai_agents"
_OPENAI_AGENTS_TURN: Final = "turn"
_MAX_INDEX: Final = 256  # bounds the flattened-family walk on hostile data
# CrewAI's crew chat (``inputs["crew_chat_messages"]``) appends its
# ``conversation_history_instruction`` and the conversation to the task description
# (crewai 1.15, translations/en.json); the request is what precedes it.
_CREWAI_CHAT_HISTORY: Final = (
    "\n\nYou are a member of a crew collaborating to achieve a common goal."
)


def tool_parameters(span: Span) -> AttrValue:
    """The tool's declared parameters (a schema) a tool span records, under either name."""
    attributes = span.attributes
    found = attributes.get(TOOL_PARAMETERS)
    return attributes.get(GENAI_TOOL_PARAMETERS) if found is None else found


def span_kind(attributes: Mapping[str, AttrValue]) -> AttrValue:
    """The OpenInference span kind: ``openinference.span.kind``, else ``gen_ai.span.kind``
    when it holds a kind of OpenInference's vocabulary (None: neither)."""
    kind = attributes.get(SPAN_KIND)
    if kind is not None:
        return kind
    renamed = attributes.get(GENAI_SPAN_KIND)
    return renamed if isinstance(renamed, str) and renamed in _KINDS else None


def classify(span: Span) -> Role | None:
    kind = span_kind(span.attributes)
    if not isinstance(kind, str):
        return None
    if kind == "CHAIN":
        if span.name == _OPENAI_AGENTS_TURN and span.scope_name == OPENAI_AGENTS_SCOPE:
            return Role.LOOP
        return Role.NODE if is_langgraph_node(span) else Role.CHAIN
    if kind == "AGENT" and AGENT_NAME not in span.attributes and NODE_ID not in span.attributes:
        # The LangChain instrumentor types any run whose *name* says "agent" an AGENT; a
        # span that is the LangGraph node its metadata names is that node (a prebuilt
        # loop's ``agent`` node is the loop's model step), whatever its name says.
        if is_langgraph_node(span):
            return Role.NODE
        return Role.WORKFLOW  # openai-agents' unnamed top span is the workflow around the agent
    return _ROLES.get(kind, Role.OTHER)


def is_langgraph_node(span: Span) -> bool:
    """True if this CHAIN span is the LangGraph node its metadata names.

    Every span inside a node inherits ``langgraph_node`` in its metadata; only the
    node's own span has the node's name. A substring test spares a JSON parse on
    every CHAIN span; the parse only confirms a hit in a non-standard layout.
    """
    metadata = text(span.attributes.get(METADATA))
    if metadata is None or '"langgraph_node"' not in metadata:
        return False
    if f'"langgraph_node": "{span.name}"' in metadata:
        return True
    parsed = parse_json(metadata)
    return isinstance(parsed, dict) and parsed.get("langgraph_node") == span.name


def metadata_session(span: Span) -> str | None:
    """``session_id``, else ``conversation_id``, else ``thread_id`` from the ``metadata`` JSON."""
    metadata = text(span.attributes.get(METADATA))
    if metadata is None or "_id" not in metadata:
        return None
    parsed = parse_json(metadata)
    if not isinstance(parsed, dict):
        return None
    for key in ("session_id", "conversation_id", "thread_id"):
        value = parsed.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
            return str(value)
    return None


def _has_message(attributes: Mapping[str, AttrValue], message: str) -> bool:
    return (
        message + "role" in attributes
        or message + "content" in attributes
        or message + "tool_calls.0.tool_call.function.name" in attributes
    )


def _reply_family(attributes: Mapping[str, AttrValue]) -> str | None:
    """Where the reply's flattened messages are: OpenInference's key family, else the
    same layout under ``gen_ai.output.messages.`` (None: neither holds a message)."""
    if _has_message(attributes, OUTPUT_MESSAGES + "0.message."):
        return OUTPUT_MESSAGES
    if _has_message(attributes, GENAI_OUTPUT_MESSAGES + "0.message."):
        return GENAI_OUTPUT_MESSAGES
    return None


def requested_calls(span: Span) -> list[RequestedCall] | None:
    attributes = span.attributes
    family = _reply_family(attributes)
    if family is None:
        return _output_value_calls(span)
    calls: list[RequestedCall] = []
    for i in range(_MAX_INDEX):
        message = f"{family}{i}.message."
        if not _has_message(attributes, message):
            break
        calls += flattened_calls(
            attributes, f"{message}tool_calls.", "tool_call.", "function.name",
            "function.arguments", limit=_MAX_INDEX,
        )  # fmt: skip
    if calls and any(call.call_id is None for call in calls):
        return _ids_from_response(attributes.get(OUTPUT_VALUE), calls)
    return calls


def _ids_from_response(raw: AttrValue, calls: list[RequestedCall]) -> list[RequestedCall]:
    """``calls`` (flattened without ids: OpenInference's Mistral instrumentation writes
    none) with the ids of the raw response in ``output.value``, when it is a Chat
    Completions response whose first choice requests the same calls (names and
    arguments) in the same order (rule 79); else ``calls`` as they are."""
    if not isinstance(raw, str) or raw[:1] != "{" or '"choices"' not in raw:
        return calls
    message = first_choice(parse_json(raw))
    listed = message.get("tool_calls") if isinstance(message, dict) else None
    recorded = openai_tool_calls(listed) if isinstance(listed, list) else []
    if [(call.name, call.args) for call in recorded] != [(call.name, call.args) for call in calls]:
        return calls
    ids = [found.call_id for found in recorded]
    if None in ids or len(set(ids)) != len(ids) or any(call.call_id in ids for call in calls):
        return calls  # (ids that would name two calls: ambiguous)
    return [
        call._replace(call_id=found.call_id) if call.call_id is None else call
        for call, found in zip(calls, recorded, strict=True)
    ]


def _output_value_calls(span: Span) -> list[RequestedCall] | None:
    """The tool calls of an LLM span whose ``output.value`` is a provider's tool-call list.

    CrewAI's native function calling hands the provider's tool calls to its executor,
    and the event listener serializes them as the output: OpenAI Chat Completions
    ``{"id", "type": "function", "function": {"name", "arguments"}}`` (observed), or the
    flat ``{"id"|"call_id"|"toolUseId", "name", "arguments"|"input"}`` items of other
    providers, read as CrewAI's own executor reads them. Any other list is no call list.
    """
    attributes = span.attributes
    raw = attributes.get(OUTPUT_VALUE)
    if not isinstance(raw, str) or raw[:1] != "[" or span_kind(attributes) != "LLM":
        return None
    items = parse_json(raw)
    if not isinstance(items, list) or not items:
        return None
    calls: list[RequestedCall] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        function = item.get("function")
        function = function if isinstance(function, dict) else {}
        call_id = item.get("call_id") or item.get("id") or item.get("toolUseId")
        name = function.get("name") or item.get("name")
        arguments = function.get("arguments") or item.get("arguments") or item.get("input")
        made = requested(call_id, name, arguments)
        if made is None:
            return None
        calls.append(made)
    return calls


def llm_output(span: Span) -> str | None:
    """The last assistant message's text: ``content``, else its text ``contents`` items
    (how OpenInference flattens a reply made of content blocks, e.g. Anthropic's); with
    no output message, a generation result's text (``recorded_values.generated_text``)."""
    attributes = span.attributes
    family = _reply_family(attributes)
    if family is None:
        return generated_text(attributes.get(OUTPUT_VALUE))
    found = None
    for i in range(_MAX_INDEX):
        message = f"{family}{i}.message."
        role = attributes.get(message + "role")
        content = text(attributes.get(message + "content")) or _contents_text(attributes, message)
        if role is None and content is None:
            break
        if content is not None and (
            role is None or (isinstance(role, str) and role in ASSISTANT_ROLES)
        ):
            found = content
    return found


def _contents_text(attributes: Mapping[str, AttrValue], message: str) -> str | None:
    texts = []
    for j in range(_MAX_INDEX):
        item = f"{message}contents.{j}.message_content."
        kind = attributes.get(item + "type")
        if kind is None:
            break
        value = text(attributes.get(item + "text"))
        if kind == "text" and value is not None:
            texts.append(value)
    return "\n".join(texts) if texts else None


def llm_input(span: Span) -> str | None:
    """The first user message: of ``input.value``, else of the flattened history."""
    found = value_text(span.attributes.get(INPUT_VALUE), USER_ROLES, plain=False)
    return found if found is not None else _first_user_message(span.attributes)


def _first_user_message(attributes: Mapping[str, AttrValue]) -> str | None:
    found = _first_user_message_in(attributes, INPUT_MESSAGES, 0)
    if found is not None:
        return found
    # (1-based: traceAI's index 0 is the system prompt, if echoed; one more kept for it)
    return _first_user_message_in(attributes, GENAI_INPUT_MESSAGES, 1)


def _first_user_message_in(
    attributes: Mapping[str, AttrValue], family: str, base: int
) -> str | None:
    for i in range(_FIRST_MESSAGES + base):
        message = f"{family}{i}.message."
        role = attributes.get(message + "role")
        if role is None:
            if i < base:
                continue
            return None
        if isinstance(role, str) and role in USER_ROLES:
            return text(attributes.get(message + "content")) or _contents_text(attributes, message)
    return None


def run_input(span: Span) -> str | None:
    description = task_request(span)
    if description is not None:  # CrewAI task span: input.value is the whole task prompt
        return description
    return value_text(span.attributes.get(INPUT_VALUE), USER_ROLES, plain=True, call=True)


def task_request(span: Span) -> str | None:
    """The request in a CrewAI task span's ``crewai.task.description`` (its
    instrumentations all record it): what precedes any crew-chat history."""
    attributes = span.attributes
    description = text(attributes.get(TASK_DESCRIPTION) or attributes.get(CREWAI_TASK_DESCRIPTION))
    return None if description is None else description.split(_CREWAI_CHAT_HISTORY, 1)[0] or None


def without_chat_history(request: str) -> str:
    """A request without the crew-chat history CrewAI appends to it (whatever span or
    instrumentation recorded it: the history is the framework's text)."""
    return request.split(_CREWAI_CHAT_HISTORY, 1)[0] or request


def run_output(span: Span) -> str | None:
    """Root ``output.value`` (LangGraph: the whole state) — a fallback after the last LLM."""
    return value_text(span.attributes.get(OUTPUT_VALUE), ASSISTANT_ROLES, plain=True)
