"""What a model call's input history says about earlier tool calls: which ran, and what
they returned.

When only the model client is instrumented (tools run in plain code) or a framework
records its loop as a transcript, no span executes the tools. The evidence is in the
next model call's input: the assistant message that requested the calls, then the
tool results sent back. This module reads that evidence, convention-blind, from the
message shapes instrumentations record:

* GenAI semconv parts: ``tool_call`` (``id``, ``name``, ``arguments``) and
  ``tool_call_response`` (``id``, ``response``);
* OpenAI chat: assistant ``tool_calls`` (``id``, ``function.name|arguments``), then
  ``role: tool`` messages with ``tool_call_id`` and ``content``;
* Anthropic: ``tool_use`` blocks (``id``, ``name``, ``input``), then ``tool_result``
  blocks (``tool_use_id``, ``content``, ``is_error``);
* Gemini: ``functionCall`` / ``functionResponse`` parts;
* LangChain dumps: AI messages' ``tool_calls`` (``name``, ``args``, ``id``), tool messages;
* the GenAI per-message events (``conventions.genai_events``);
* object reprs (``reprs``): ``ToolCall(tool_name=…, arguments=…, id=…)`` and
  ``ToolCallResult(result=…, origin=ToolCall(…), error=…)`` items of a message's content;
* LlamaIndex's ``ChatMessage`` dumps: ``blocks`` (``block_type`` ``text`` or
  ``tool_call``: ``tool_call_id``, ``tool_name``, ``tool_kwargs``), the provider's own
  fields under ``additional_kwargs`` (``tool_calls``, a tool message's ``tool_call_id``);
  messages a model call's events record (``conventions.chat_events``).
"""

from __future__ import annotations

import re
from typing import Any, Final, NamedTuple

from collector.core.records import Span
from collector.normalize.conventions import chat_events, genai_events, mlflow, traceloop
from collector.normalize.messages import (
    ASSISTANT_ROLES,
    CALL_PART_KINDS,
    RequestedCall,
    content_tool_calls,
    message_list,
    openai_tool_calls,
    part_call,
    part_kind,
    requested,
    role_of,
    text_of,
    text_of_content,
)
from collector.normalize.react import transcript_steps
from collector.normalize.results import ToolResult, parse_result, result_of
from collector.normalize.values import INVALID, event_attribute, parse_json, structured

INPUT_MESSAGES: Final = "gen_ai.input.messages"
DETAILS_EVENT: Final = "gen_ai.client.inference.operation.details"
INPUT_VALUE: Final = "input.value"
_MAX_MESSAGES: Final = 4096  # bounds the walk over one history on hostile data


class Answer(NamedTuple):
    """One tool result found in a history."""

    call_id: str | None
    result: ToolResult


class Message(NamedTuple):
    """One history message, reduced to what tool calls need."""

    role: str | None
    calls: list[RequestedCall]
    answers: list[Answer]


def history(span: Span) -> list[Message]:
    """The input history of a model call span, with its tool calls and answers; a ReAct
    transcript in its messages' text when no structured answer is found."""
    sources = _sources(span)
    for raw in sources:
        messages = _messages(raw)
        if messages and any(message.answers for message in messages):
            return messages
    for raw in sources:
        transcript = _transcript(raw)
        if transcript:
            return transcript
    return []


def input_messages(span: Span) -> list[Message]:
    """The structured input messages of a model call span, answers or none (the first
    source that records a message list)."""
    for raw in _sources(span):
        messages = _messages(raw)
        if messages:
            return messages
    return []


def _transcript(value: Any) -> list[Message]:
    """The ``Action`` / ``Observation`` rounds written in the messages' text (``react``)."""
    texts = [text_of(item) for item in message_list(value) or () if isinstance(item, dict)]
    found: list[Message] = []
    for calls, observations in transcript_steps("\n".join(t for t in texts if t)):
        found.append(Message("assistant", calls, []))
        answers = [Answer(None, _result(text)) for text in observations]
        found.append(Message("tool", [], answers))
    return found


def input_message_items(span: Span) -> list[dict[str, Any]]:
    """The message dicts of a model call's recorded request, as ``input_messages`` reads
    them (the first source that records a message list), unreduced."""
    for raw in _sources(span):
        items = [
            item for item in (message_list(raw) or ())[:_MAX_MESSAGES] if isinstance(item, dict)
        ]
        if items:
            return items
    return []


def reply_authors(span: Span) -> set[str]:
    """Who the assistant messages of a model call's recorded request say wrote them
    (``source``: AutoGen's dumps; a chat message's ``name`` is a persona, not read), from
    the first source that records a message list."""
    authors = set()
    for item in input_message_items(span):
        author = item.get("source") if role_of(item) in ASSISTANT_ROLES else None
        if isinstance(author, str) and author:
            authors.add(author)
    return authors


def _sources(span: Span) -> list[Any]:
    found: list[Any] = []
    attributes = span.attributes
    value = attributes.get(INPUT_MESSAGES)
    if value is None:
        value = event_attribute(span, DETAILS_EVENT, INPUT_MESSAGES)
    if value is not None:
        found.append(structured(value))
    raw = attributes.get(INPUT_VALUE)
    if isinstance(raw, str) and raw[:1] in ("{", "["):
        found.append(parse_json(raw))
    events = genai_events.input_messages(span)
    if events:
        found.append(events)
    recorded = chat_events.input_messages(span)
    if recorded:
        found.append(recorded)
    flattened = traceloop.legacy_messages(span)
    if flattened:
        found.append(flattened)
    inputs = mlflow.model_inputs(span)  # (MLflow's autologs: the request as the model got it)
    if inputs is not None:
        found.append(inputs)
    return [item for item in found if item is not INVALID]


def _messages(value: Any) -> list[Message]:
    items = message_list(value)  # object reprs already read as message dicts
    if not items:
        return []
    out = []
    for item in items[:_MAX_MESSAGES]:
        if isinstance(item, dict):
            out.append(message_of(item))
    return out


def message_of(item: dict[str, Any]) -> Message:
    """One message dict, reduced to its role, requested calls and answers."""
    kind = item.get("type")
    if kind == "function_call":  # a Responses-API input item: one requested call
        # (``call_id`` is what the output item names; ``id`` is the item's own, ``fc_…``)
        made = requested(item.get("call_id"), item.get("name"), item.get("arguments"))
        return Message("assistant", [made] if made is not None else [], [])
    if kind == "function_call_output":  # its answer, by ``call_id``
        return Message("tool", [], [Answer(_id(item.get("call_id")), _result(item.get("output")))])
    fields: dict[str, Any] = item
    data, kwargs = item.get("data"), item.get("kwargs")
    if isinstance(data, dict):
        fields = data
    elif item.get("lc") is not None and isinstance(kwargs, dict):
        fields = kwargs
    role = role_of(item)
    calls: list[RequestedCall] = []
    answers: list[Answer] = []
    calls.extend(openai_tool_calls(fields.get("tool_calls")))
    if not calls and role in ASSISTANT_ROLES:
        calls.extend(content_tool_calls(fields.get("content")))
    for part in _parts(fields):
        _part(part, calls, answers, role)
    fields = _with_provider_fields(fields, calls)
    if not answers and (role == "tool" or fields.get("tool_call_id") is not None):
        answers.append(_tool_message(fields))  # the message itself is the one result
    return Message(role, calls, answers)


def _with_provider_fields(fields: dict[str, Any], calls: list[RequestedCall]) -> dict[str, Any]:
    """``fields`` with what the provider's fields kept aside (``additional_kwargs``:
    LlamaIndex) say: the calls, unless the blocks already named them or the message
    records calls its framework refused (appended to ``calls``), and a tool message's
    ``tool_call_id``."""
    extra = fields.get("additional_kwargs")
    if not isinstance(extra, dict):
        return fields
    if not calls and not fields.get("invalid_tool_calls"):  # (LangChain: calls it refused)
        calls.extend(openai_tool_calls(extra.get("tool_calls")))
    own_id = "tool_call_id" in fields
    if not own_id and role_of(fields) == "tool" and isinstance(extra.get("tool_call_id"), str):
        return {**fields, "tool_call_id": extra["tool_call_id"]}
    return fields


def _parts(fields: dict[str, Any]) -> list[Any]:
    for key in ("parts", "content", "blocks"):
        value = fields.get(key)
        if isinstance(value, list):
            return value
    return []


def _tool_message(fields: dict[str, Any]) -> Answer:
    call_id = fields.get("tool_call_id") or fields.get("id")
    content = fields.get("content")
    for key in ("parts", "blocks"):  # (semconv text parts, LlamaIndex's text blocks)
        if content is None and isinstance(fields.get(key), list):
            content = text_of_content(fields[key])
    result = _failed_if(_result(content), fields.get("status") == "error")
    return Answer(call_id if isinstance(call_id, str) else None, result)


def _part(part: Any, calls: list[RequestedCall], answers: list[Answer], role: str | None) -> None:
    if not isinstance(part, dict):
        return
    kind = part_kind(part)
    if kind in CALL_PART_KINDS:
        made = part_call(part)
        if made is not None:
            calls.append(made)
    elif kind == "tool_call_response":  # (a JSON-text envelope: Gemini's, in a user turn)
        response = _function_response(part.get("response"), role != "tool")
        answers.append(Answer(_id(part.get("id")), response))
    elif kind in _ANSWER_PARTS and "tool_call_id" in part:
        answers.append(_part_answer(part))
    elif kind == "tool_result":  # (Anthropic's block)
        answers.append(_flagged_answer(part, "tool_use_id"))
    elif kind == "ToolCallResult":
        answers.append(_repr_answer(part))
    elif kind is None and "call_id" in part and "content" in part and _answers_calls(role):
        answers.append(_flagged_answer(part, "call_id"))  # (AutoGen's results)
    else:  # Gemini's parts, in the REST spelling or the Python SDK's dump (snake_case)
        _gemini_part(part, calls, answers)


def _gemini_part(part: dict[str, Any], calls: list[RequestedCall], answers: list[Answer]) -> None:
    call = part.get("functionCall")
    if not isinstance(call, dict):
        call = part.get("function_call")
    if isinstance(call, dict):
        made = requested(call.get("id"), call.get("name"), call.get("args"))
        if made is not None:
            calls.append(made)
        return
    response = part.get("functionResponse")
    if not isinstance(response, dict):
        response = part.get("function_response")
    if isinstance(response, dict):
        answers.append(
            Answer(_id(response.get("id")), _function_response(response.get("response")))
        )


# Answer parts naming their call by ``tool_call_id``: BeeAI's message dump (``tool-result``,
# the value under ``result``) and pydantic-ai's messages (``tool-return``, under
# ``content``, with an ``outcome``).
_ANSWER_PARTS: Final = frozenset({"tool-result", "tool-return"})
_FAILED_OUTCOMES: Final = frozenset({"failed", "error", "failure"})


def _part_answer(part: dict[str, Any]) -> Answer:
    result = _result(part.get("result") if "result" in part else part.get("content"))
    outcome = part.get("outcome")
    failed = isinstance(outcome, str) and outcome in _FAILED_OUTCOMES
    return Answer(_id(part.get("tool_call_id")), _failed_if(result, failed))


def _answers_calls(role: str | None) -> bool:
    """Whether a message of ``role`` carries tool results: a tool message, or one typed
    as results (AutoGen's ``FunctionExecutionResultMessage``)."""
    return role == "tool" or (role is not None and role.endswith("resultmessage"))


def _flagged_answer(part: dict[str, Any], id_key: str) -> Answer:
    """An item naming its call (under ``id_key``) beside the content the tool returned,
    an error flag ``is_error`` raised when it failed (Anthropic's ``tool_result`` block,
    ``tool_use_id``; AutoGen's ``FunctionExecutionResult``, ``call_id``)."""
    result = _failed_if(_result(part.get("content")), part.get("is_error") is True)
    return Answer(_id(part.get(id_key)), result)


def _failed_if(result: ToolResult, failed: bool) -> ToolResult:
    """``result``, failed when ``failed`` says so and it reports no error of its own:
    its text is the error (``error`` when it has none)."""
    if not failed or result.error is not None:
        return result
    return result._replace(error=_text(result.value) or "error")


def _repr_answer(part: dict[str, Any]) -> Answer:
    origin = part.get("origin")
    call_id = origin.get("id") if isinstance(origin, dict) else None
    return Answer(_id(call_id), _failed_if(_result(part.get("result")), part.get("error") is True))


def _function_response(response: Any, text_envelope: bool = True) -> ToolResult:
    """A function response, out of the ``{"result": …}`` / ``{"error": …}`` envelope
    SDKs wrap a Python function's return in; with ``text_envelope``, the same envelope
    recorded as JSON text (OpenLLMetry serialises the Gemini SDK's response object into a
    GenAI part of the user's turn) is read the same. A ``tool`` message's text is the
    tool's own result: a tool may return ``{"result": …}`` itself."""
    if text_envelope and isinstance(response, str) and _TEXT_ENVELOPE.match(response):
        decoded = parse_json(response)
        if isinstance(decoded, dict):
            response = decoded
    if isinstance(response, dict) and len(response) == 1 and "result" in response:
        return _result(response["result"])
    return _result(response)


_TEXT_ENVELOPE: Final = re.compile(r'\s*\{\s*"result"\s*:')


def _result(value: Any) -> ToolResult:
    if isinstance(value, str):  # read like a tool span's result: JSON, else a Python repr
        return parse_result(value)
    return result_of(value)


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value or None
    return None
