"""OpenTelemetry GenAI semantic conventions (pydantic-ai, ADK, Strands, Traceloop 0.62 …).

Operation names (``gen_ai.operation.name``) decide the role; messages are the
semconv JSON ``[{role, parts: [{type: text|tool_call, …}]}]`` on span attributes,
or on the ``gen_ai.client.inference.operation.details`` event (latest semconv,
e.g. Strands with ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from collector.core.records import AttrValue, Span
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    USER_ROLES,
    RequestedCall,
    genai_tool_calls,
    has_role,
    last_text,
    requested,
)
from collector.normalize.roles import Role
from collector.normalize.values import INVALID, event_attribute, scalar_text, structured

NAME: Final = "otel_genai"
OPERATION: Final = "gen_ai.operation.name"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_RESULT: Final = "gen_ai.tool.call.result"
AGENT_NAME: Final = "gen_ai.agent.name"
WORKFLOW_NAME: Final = "gen_ai.workflow.name"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
REQUEST_MODEL: Final = "gen_ai.request.model"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"  # read only to tie a record to its call (``run_records``)
INPUT_TOKENS: Final = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
OUTPUT_TOKENS: Final = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"  # on LLM spans; parsed only to bind a bare arg
FINAL_RESULT: Final = "final_result"  # pydantic-ai, on the invoke_agent span
# An operation's output and a tool's arguments under generic names (any-agent): on a
# model call, its reply text or a list of the calls it requested; on a tool call, its
# result (``tools.RESULT_KEYS``, after every convention's own key).
OUTPUT: Final = "gen_ai.output"
TOOL_ARGS: Final = "gen_ai.tool.args"
DETAILS_EVENT: Final = "gen_ai.client.inference.operation.details"
MERGED_TOOLS: Final = "(merged tools)"  # ADK's extra span for parallel calls: not a tool execution

# The OTel database conventions' operation name: a client span's database call.
DB_OPERATION: Final = "db.operation.name"
KEYS: Final[tuple[str, ...]] = (
    DB_OPERATION,
    OPERATION,
    TOOL_NAME,
    TOOL_CALL_ID,
    TOOL_ARGUMENTS,
    TOOL_RESULT,
    AGENT_NAME,
    WORKFLOW_NAME,
    CONVERSATION_ID,
    INPUT_MESSAGES,
    OUTPUT_MESSAGES,
    REQUEST_MODEL,
    RESPONSE_MODEL,
    RESPONSE_ID,
    *INPUT_TOKENS,
    *OUTPUT_TOKENS,
    TOOL_DEFINITIONS,
    FINAL_RESULT,
    OUTPUT,
    TOOL_ARGS,
)
PREFIXES: Final[tuple[str, ...]] = ()

_TOKEN_KEYS: Final = (*INPUT_TOKENS, *OUTPUT_TOKENS)
_NO_MODEL: Final = frozenset({"", "unknown"})  # a model named by a placeholder: none
# The conventions' operations that are no generation (a model call of another kind, or
# none): never a model call by rule 81.
_OTHER_OPERATIONS: Final = frozenset(
    {"embeddings", "embedding", "retrieval", "retrieve", "rerank", "memory", "guardrail",
     "execute_tool", "create_agent"}
)  # fmt: skip
# A requested call written as an object of these names (``gen_ai.output``'s list).
_CALL_NAMES: Final = ("tool.name", "name", "tool_name")
_CALL_ARGUMENTS: Final = ("tool.args", "arguments", "args", "tool.arguments")
# A requested call is a ``tool_call`` part, or a Responses-API ``function_call`` item: a
# reply whose JSON text names neither requests nothing (one scan for both).
_CALL_MARK: Final = "_call"
_LLM_OPERATIONS: Final = frozenset({"chat", "generate_content", "text_completion"})
_ROLES: Final = {
    "invoke_agent": Role.AGENT,
    "invoke_workflow": Role.WORKFLOW,
    # Building an agent is not running it (Traceloop emits a stray one-span trace).
    "create_agent": Role.PHANTOM,
    # Strands wraps each model→tools round in a cycle span: structure, not a step.
    "execute_event_loop_cycle": Role.LOOP,
}


def tool_role(span: Span) -> Role | None:
    """TOOL for ``execute_tool`` spans, PHANTOM for ADK's merged-tools span."""
    if span.attributes.get(OPERATION) != "execute_tool":
        return None
    if span.attributes.get(TOOL_NAME) == MERGED_TOOLS or span.name == "execute_tool (merged)":
        return Role.PHANTOM
    if _names_its_model(span):
        return Role.CHAIN
    return Role.TOOL


def _names_its_model(span: Span) -> bool:
    """A span of a GenAI operation that names no tool (no ``gen_ai.tool.name``) and whose
    name, ``<operation> <x>``, names the model it requested (``gen_ai.request.model`` =
    x), with no answer of that model on it: a phase of the agent's loop around its model,
    not an operation of its own (rule 62). OpenLIT's pydantic-ai spans, one per phase of each
    model step: ``execute_tool <model>`` around the tools the step ran (it says which
    nowhere; the calls are read from the model's requests), ``model_request <model>``
    beside the model call, ``user_prompt_processing <model>``. Plumbing, not a step."""
    attributes = span.attributes
    if attributes.get(TOOL_NAME) is not None or _answered(attributes):
        return False
    _, _, named = span.name.partition(" ")
    return bool(named) and named == attributes.get(REQUEST_MODEL)


def _answered(attributes: Mapping[str, AttrValue]) -> bool:
    """Whether a span records a model's answer (its response model, token counts): a
    call of the model (an ``embeddings <model>`` span, named so by the conventions)."""
    if RESPONSE_MODEL in attributes:
        return True
    return any(key in attributes for key in _TOKEN_KEYS)


def classify(span: Span) -> Role | None:
    operation = span.attributes.get(OPERATION)
    if not isinstance(operation, str):
        return None
    if operation in _LLM_OPERATIONS:
        return Role.AGENT if _agents_own(span.attributes) else Role.LLM
    role = _ROLES.get(operation)
    if role is Role.AGENT and DB_OPERATION in span.attributes:
        # Rule 102: an agent's run that records a database operation (the OTel database
        # conventions' ``db.operation.name``) is that operation: OpenLIT types Dynamiq's
        # memory reads and writes ``invoke_agent`` beside ``db.operation.name: GET``.
        return Role.OTHER
    if role is not None:
        return role
    if operation not in _OTHER_OPERATIONS and _generated(span.attributes):
        return Role.LLM
    return Role.CHAIN if _names_its_model(span) else Role.OTHER


def _agents_own(attributes: Mapping[str, AttrValue]) -> bool:
    """Whether a span of a model-call operation is an agent's step of a conversation, not
    a call of a model (rule 83): it names the agent (``gen_ai.agent.name``) and no model
    (the model it requested absent, or a placeholder: OpenLIT writes ``chat`` with model
    ``unknown`` on each send, receive and reply of an AG2 agent, the model calls below
    them). A model call names its model, content capture on or off."""
    if AGENT_NAME not in attributes:
        return False
    model = attributes.get(REQUEST_MODEL)
    return model is None or (isinstance(model, str) and model in _NO_MODEL)


def named_model_operation(operation: object) -> bool:
    """Whether ``operation`` is one the conventions name a model call by (not rule 81's)."""
    return isinstance(operation, str) and operation in _LLM_OPERATIONS


def _generated(attributes: Mapping[str, AttrValue]) -> bool:
    """Whether a span of an operation the conventions do not name called a model that
    generated an answer (rule 81): it names the model it requested, records its reply
    and counts the tokens the model wrote (more than none), and names no tool.
    any-agent's ``call_llm`` spans; an embedding or a retrieval writes no tokens (and
    the names other instrumentations give those, a rerank, a memory read, a guardrail,
    are never read so). A span with a model call, a tool or an agent below it is not
    (``detect.settle_evident_calls``): a wrapper of the calls (AG2's ``conversation``)
    records their model and their tokens' sum."""
    if REQUEST_MODEL not in attributes or attributes.get(TOOL_NAME) is not None:
        return False
    if OUTPUT not in attributes and OUTPUT_MESSAGES not in attributes:
        return False  # (no reply recorded: nothing says the model generated one)
    written = next((attributes[key] for key in OUTPUT_TOKENS if key in attributes), None)
    return isinstance(written, (int, float)) and not isinstance(written, bool) and written > 0


def evident_model_call(span: Span) -> bool:
    """Whether a span that names no GenAI operation records a model call all the same
    (ADR 0017, rule 65): the conventions' own request and reply keys, the request a
    message list, the reply holding an assistant message, and the model named or its
    answer counted (a request or response model, token counts). Laminar writes its model
    spans so (its own ``lmnr.span.type`` beside them). Costs two lookups on a span
    without both keys; the messages are parsed only when both are there."""
    attributes = span.attributes
    request = attributes.get(INPUT_MESSAGES)
    if request is None:
        return False
    reply = attributes.get(OUTPUT_MESSAGES)
    if reply is None or (REQUEST_MODEL not in attributes and not _answered(attributes)):
        return False
    return has_role(structured(request), None) and has_role(structured(reply), ASSISTANT_ROLES)


def _messages(span: Span, key: str) -> AttrValue:
    value = span.attributes.get(key)
    return value if value is not None else event_attribute(span, DETAILS_EVENT, key)


def requested_calls(span: Span) -> list[RequestedCall] | None:
    value = _messages(span, OUTPUT_MESSAGES)
    if value is None:
        if named_model_operation(span.attributes.get(OPERATION)):
            return None  # (rule 81's generic output: only an operation no convention names)
        return _listed_calls(span.attributes.get(OUTPUT))
    if isinstance(value, str) and _CALL_MARK not in value:
        return []  # a text-only reply (the final answer): nothing to parse
    parsed = structured(value)
    return [] if parsed is INVALID else list(genai_tool_calls(parsed))


def llm_input(span: Span) -> str | None:
    return _last(span, INPUT_MESSAGES, USER_ROLES)


def llm_output(span: Span) -> str | None:
    found = _last(span, OUTPUT_MESSAGES, ASSISTANT_ROLES)
    if found is not None or OUTPUT not in span.attributes:
        return found
    output = span.attributes.get(OUTPUT)  # (rule 81: the reply, unless it lists calls)
    return output if isinstance(output, str) and output and _listed_calls(output) is None else None


def _listed_calls(value: AttrValue | None) -> list[RequestedCall] | None:
    """The calls a generic output lists (rule 81): a JSON list of objects, each naming a
    tool (``tool.name``, ``name``) beside its arguments (``tool.args``, ``arguments``,
    ``args``: a structured reply listing people by ``name`` lists no call); None when
    ``value`` is no such list."""
    if not isinstance(value, str) or value[:1] != "[":
        return None
    parsed = structured(value)
    if not isinstance(parsed, list) or not parsed:
        return None
    found: list[RequestedCall] = []
    for item in parsed:
        if not isinstance(item, dict):
            return None
        name = next((item[key] for key in _CALL_NAMES if isinstance(item.get(key), str)), None)
        keys = [key for key in _CALL_ARGUMENTS if key in item]
        if not keys:
            return None
        call = requested(None, name, item[keys[0]])
        if call is None:
            return None
        found.append(call)
    return found


def run_input(span: Span) -> str | None:
    return _last(span, INPUT_MESSAGES, USER_ROLES)


def run_output(span: Span) -> str | None:
    final = scalar_text(span.attributes.get(FINAL_RESULT))
    return final if final is not None else _last(span, OUTPUT_MESSAGES, ASSISTANT_ROLES)


def _last(span: Span, key: str, roles: frozenset[str]) -> str | None:
    value = _messages(span, key)
    if value is None:
        return None
    parsed = structured(value)
    return None if parsed is INVALID else last_text(parsed, roles)
