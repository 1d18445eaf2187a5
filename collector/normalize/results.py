"""Tool results, unwrapped from framework envelopes, with the errors hidden inside them.

LangChain reports a handled tool error (``handle_tool_error``) with span status OK
or UNSET: the only trace of it is ``"status": "error"`` inside the serialized
``ToolMessage`` (OpenInference ``output.value``, Traceloop/LangSmith ``{"output": …}``).
Google ADK tools return errors as dicts (``{"status": "error", "error_message": …}``)
with status UNSET, and Strands tool results carry ``status`` the same way. Strands
wraps every result in content blocks (``[{"text": "<JSON>"}]``): they are unwrapped.
CrewAI hands a tool's non-text return to the model as ``str(value)``, so its tool
spans record a Python ``repr`` (``{'track_id': 3158}``): containers are read back,
and so are object reprs (``ToolResult(status='error', …)``, ``reprs``).

A function response recorded whole (Gemini's ``FunctionResponse`` as Google ADK's
OpenInference instrumentation dumps it: ``{"id", "name", "response"}``, only fields of
that type) is unwrapped to ``response``, with ``id`` as the call id; inside it, the
``{"result": …}`` envelope a non-dict return gets is unwrapped as in a history.

A record of the whole call (LlamaIndex's ``ToolOutput``: ``tool_name``, ``raw_input``,
``raw_output``, ``is_error`` and the text ``blocks`` the model was shown) is unwrapped
to ``raw_output``, what the tool returned; a record of its execution written as the
record's ``repr`` (``status``, ``result``, ``error``: Agno's ``FunctionExecutionResult``)
to ``result``, or to its ``error`` when the status says it failed.

Errors are reported inside results in many textual forms besides ``"status":
"error"``: an object whose only field is ``error`` (OpenAI-style tool messages,
Gemini function responses); an error flag (``is_error`` / ``isError`` / ``error:
true``) beside the content (Anthropic ``tool_result`` blocks, MCP ``CallToolResult``,
Haystack); or plain text that opens with an error word (``Error executing tool …``,
``StoreError: …``) or says that an error occurred (``An error occurred while running
the tool``). Single text content blocks (``{"type": "text", "text": …}``,
MCP) are unwrapped like Strands' blocks.

The error is always needed (``Step.error``), the value only when someone reads it:
``can_defer`` tells, without parsing, when the text cannot report an error or a
call id, so that its value can be parsed on first read (``load_value``; ADR 0019).
"""

from __future__ import annotations

import re
from typing import Any, Final, NamedTuple

from collector.core.records import AttrValue
from collector.normalize.error_text import error_hint, error_text, raised_repr
from collector.normalize.messages import text_of_content
from collector.normalize.reprs import (
    fields_repr,
    looks_like_fields_repr,
    looks_like_object_repr,
    object_repr,
)
from collector.normalize.result_records import (
    TEXT_BLOCK_KEYS,
    is_content_record,
    is_function_message,
    is_text_block,
)
from collector.normalize.values import INVALID, json_ready, parse_json, python_literal

_OUTPUT_WRAPPER_KEYS: Final = frozenset({"output", "kwargs"})
# What the text of a result serialised twice opens with: an object's or a list's JSON,
# a dict's repr, or an object's repr (a class name: ``ToolResponse(``). A string a tool
# returned (``"42"``, JSON-encoded once by its tracer) is that string.
_STRUCTURE_OPENINGS: Final = frozenset("{[ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_CALL_KEYS: Final = ("tool_name", "raw_input")  # beside ``raw_output``: a record of the call
_CALL_ID_KEYS: Final = ("tool_call_id", "tool_id")  # beside a nested record
# The fields of a function response (``google.genai.types.FunctionResponse``): the call
# id, the tool's name, what it returned; the rest is scheduling and multimodal parts.
_FUNCTION_RESPONSE_KEYS: Final = frozenset(
    {"id", "name", "response", "will_continue", "scheduling", "parts"}
)
_ERROR_MESSAGE_KEYS: Final = ("error_message", "error", "message")
# An execution record's status (``_execution_record``).
_SUCCESS_WORDS: Final = frozenset({"success", "succeeded", "ok", "completed"})
_FAILURE_WORDS: Final = frozenset({"failure", "failed", "error"})
_ERROR_FLAGS: Final = ("is_error", "isError", "error")
_CONTENT_KEYS: Final = ("content", "result", "text", "output")
# Escapes that can spell a letter (JSON ``\u0065``; Python ``\x65``, ``\N{…}``, octal).
_LETTER_ESCAPE: Final = re.compile(r"\\[uUxN0-7]")


class ToolResult(NamedTuple):
    """What a tool returned, as far as the span tells."""

    value: Any  # parsed JSON where possible, else the text
    call_id: str | None = None  # ``tool_call_id`` of a LangChain ToolMessage
    error: str | None = None  # an error reported inside the result (status OK/UNSET)


NO_RESULT: Final = ToolResult(None)


def parse_result(value: AttrValue, tool: str | None = None, inner: bool = False) -> ToolResult:
    """Parse one result attribute; see the module docstring for what is unwrapped. A
    function response is unwrapped only for the ``tool`` it names (a tool's own result
    may have ``id``, ``name`` and ``response`` fields too). A result serialised twice
    (JSON text of the text a tool's result object printed as: AgentScope's) is read
    once more, one level (``inner``), when that text opens a structure
    (``_STRUCTURE_OPENINGS``)."""
    if value is None:
        return NO_RESULT
    if not isinstance(value, str):
        return result_of(json_ready(value))  # a kvlist/array/scalar attribute
    obj = parse_json(value)
    if isinstance(obj, str) and not inner and obj[:1] in _STRUCTURE_OPENINGS:
        return parse_result(obj, tool, inner=True)
    if obj is INVALID:
        obj = python_literal(value)
        raised = raised_repr(value) if obj is INVALID else None
        if raised is not None:  # an exception object kept as the output (rule 100)
            return ToolResult(value, None, raised)
    from_repr = False  # (an object's repr: a framework's record may be one, ``_execution_record``)
    if obj is INVALID and looks_like_object_repr(value):
        obj, from_repr = object_repr(value), True
    if obj is INVALID and looks_like_fields_repr(value):
        obj, from_repr = fields_repr(value), True
    if obj is INVALID:
        return ToolResult(value, None, error_text(value))
    if from_repr and isinstance(obj, dict) and "result" in obj and "status" in obj:
        record = _execution_record(obj)
        if record is not None:
            return record
    if tool is not None:
        answered = _function_response(obj, tool)
        if answered is not None:
            return answered
    return result_of(obj)


def can_defer(raw: str, call_id_known: bool) -> bool:
    """True when ``parse_result(raw)`` reports no error whatever the text holds
    (``error_text.error_hint``), nor a call id unless the span records its own
    (``call_id_known``: then the result's is never asked), so that only its value is
    left to parse. Text with an escape that could spell a letter is never deferred."""
    if error_hint(raw) or (not call_id_known and _names_call_id(raw)) or "response" in raw:
        return False  # (a function response, JSON or repr, is unwrapped knowing its tool)
    return "\\" not in raw or _LETTER_ESCAPE.search(raw) is None


def _names_call_id(raw: str) -> bool:
    """Whether ``raw`` may carry a call id: a tool message's or call record's
    (``tool_call_id``, ``tool_id``)."""
    return "tool_" in raw and any(key in raw for key in _CALL_ID_KEYS)


def may_be_none(raw: str) -> bool:
    """False when the value of ``raw`` is surely not None: only ``null`` (or a Python
    ``None``) can make it None, at top level or inside an envelope."""
    return "null" in raw or "None" in raw


def load_value(raw: str) -> Any:
    """The value ``parse_result`` gives for ``raw`` (read when ``Step.result`` is)."""
    return parse_result(raw).value


def result_of(obj: Any) -> ToolResult:
    """A parsed result value, unwrapped, with the error it reports (module docstring)."""
    if isinstance(obj, dict) and "output" in obj and obj.keys() <= _OUTPUT_WRAPPER_KEYS:
        obj = obj["output"]  # Traceloop / LangSmith: {"output": <ToolMessage>, "kwargs": …}
        if isinstance(obj, str) and obj:
            # (the message as text inside the envelope, pydantic's ``str()`` of LangChain's
            # ToolMessage under traceAI: read as a top-level result text is)
            return parse_result(obj)
    if isinstance(obj, dict) and "raw_output" in obj and any(k in obj for k in _CALL_KEYS):
        return _recorded_call(obj)
    if isinstance(obj, dict) and "tool_name" in obj:
        nested = _nested_call_record(obj)
        if nested is not None:
            return nested
    fields = _tool_message_fields(obj)
    if fields is not None:
        return _from_tool_message(fields)
    if is_function_message(obj):  # (its content read as a result attribute is)
        content = obj["content"]
        return parse_result(content, inner=True) if isinstance(content, str) else result_of(content)
    if isinstance(obj, dict) and obj.keys() <= TEXT_BLOCK_KEYS and obj.get("type") == "text":
        obj = [obj]  # one content block (MCP)
    if isinstance(obj, dict) and is_content_record(obj):
        obj = obj["content"]
    if isinstance(obj, list):
        obj = _content_blocks(obj)
    flagged = _flagged_error(obj)
    if flagged is not None:
        return flagged
    error = _error_dict_message(obj) if isinstance(obj, dict) else None
    if error is None and isinstance(obj, str):
        error = error_text(obj)
    return ToolResult(obj, None, error)


def _recorded_call(obj: dict[str, Any]) -> ToolResult:
    """A record of the call around what the tool returned (the tool's name or input
    beside ``raw_output``, LlamaIndex's ``ToolOutput``): the tool's own return value,
    with the error it reports or, flagged ``is_error``, its text."""
    inner = result_of(obj["raw_output"])
    if obj.get("is_error") is True and inner.error is None:
        value = inner.value
        message = value if isinstance(value, str) else text_of_content(obj.get("blocks"))
        return ToolResult(value, inner.call_id, message or "error")
    return inner


def _nested_call_record(obj: dict[str, Any]) -> ToolResult | None:
    """An envelope that names the tool around exactly one record of the call
    (LlamaIndex's ``ToolCallResult``: ``tool_name``, ``tool_kwargs``, ``tool_id``, and
    the ``ToolOutput`` as ``tool_output``): that record, with the envelope's call id."""
    records = [
        value
        for value in obj.values()
        if isinstance(value, dict)
        and "raw_output" in value
        and any(key in value for key in _CALL_KEYS)
    ]
    if len(records) != 1:
        return None
    inner = _recorded_call(records[0])
    if inner.call_id is not None:
        return inner
    for key in _CALL_ID_KEYS:
        call_id = obj.get(key)
        if isinstance(call_id, str) and call_id:
            return ToolResult(inner.value, call_id, inner.error)
    return inner


def _execution_record(obj: dict[str, Any]) -> ToolResult | None:
    """A framework's record of the execution around the tool's return value, written as
    the record object's ``repr``/``str()`` (Agno's ``FunctionExecutionResult``:
    ``status='success' result={…} error=None …``): ``status``, ``result`` and ``error``
    fields, the status a word of success or failure. Success: what the tool returned,
    ``result``. Failure: the error's message, with whatever ``result`` holds. Only the
    repr form: a JSON object of these fields is the tool's own return value (a job's
    status), read as it is."""
    if "error" not in obj:
        return None
    status, error = obj["status"], obj["error"]
    if not isinstance(status, str):
        return None
    status = status.lower()
    if status in _SUCCESS_WORDS and error in (None, "", False):
        return result_of(obj["result"])  # (not an execution record again: repr forms only)
    if status in _FAILURE_WORDS:
        message = error if isinstance(error, str) and error else "error"
        return ToolResult(obj["result"], None, message)
    return None


def _flagged_error(obj: Any) -> ToolResult | None:
    """An object carrying an error flag beside its content: the content is the message."""
    if not isinstance(obj, dict):
        return None
    for flag in _ERROR_FLAGS:
        if obj.get(flag) is True:
            content: Any = None
            for key in _CONTENT_KEYS:
                if key in obj:
                    content = obj[key]
                    break
            if isinstance(content, list):
                content = _content_blocks(content)
            message = content if isinstance(content, str) else text_of_content(content)
            return ToolResult(content, None, message or "error")
    return None


def _content_blocks(blocks: list[Any]) -> Any:
    """The value inside Bedrock-style tool-result content blocks, else ``blocks`` unchanged.

    Strands records what a tool returned as ``[{"text": "<the return value as JSON
    text>"}]`` (observed in both its modes), or ``[{"json": value}]``: one block is
    its value (text parsed as JSON when it is JSON), several text blocks are one text.
    """
    if blocks and all(is_text_block(b) for b in blocks):
        blocks = [{"text": b["text"]} for b in blocks]  # MCP / Anthropic typed text blocks
    if not blocks or not all(isinstance(b, dict) and len(b) == 1 for b in blocks):
        return blocks
    if len(blocks) == 1:
        block = blocks[0]
        if "json" in block:
            return block["json"]
        inner = block.get("text")
        if not isinstance(inner, str):
            return blocks
        parsed = parse_json(inner)
        return inner if parsed is INVALID else parsed
    texts = [b.get("text") for b in blocks]
    if all(isinstance(t, str) for t in texts):
        return "\n".join(str(t) for t in texts)
    return blocks


def _tool_message_fields(obj: Any) -> dict[str, Any] | None:
    """The fields of a serialized tool message (LangChain's ``ToolMessage`` in any of its
    dump forms, an OpenAI-style ``role: tool`` message)."""
    if not isinstance(obj, dict):
        return None
    if obj.get("lc") is not None:  # {"lc": 1, "type": "constructor", "id": [...], "kwargs": {}}
        fields = obj.get("kwargs")
        ident = obj.get("id")
        named = isinstance(ident, list) and bool(ident) and ident[-1] == "ToolMessage"
        if isinstance(fields, dict) and (named or fields.get("type") == "tool"):
            return fields
        return None
    kind = obj.get("type")
    if kind == "tool":
        data = obj.get("data")  # {"type": "tool", "data": {...}} (OpenInference)
        if isinstance(data, dict):
            return data
    # By shape: the content with the id of the call it answers, and no other kind or
    # role (LangChain's str(ToolMessage) leaves defaults such as type='tool' out; an
    # OpenAI-style tool message has role 'tool').
    if kind not in (None, "tool") or obj.get("role", "tool") != "tool" or "content" not in obj:
        return None
    call_id = obj.get("tool_call_id")
    return obj if isinstance(call_id, str) and call_id else None


def _from_tool_message(fields: dict[str, Any]) -> ToolResult:
    content = fields.get("content")
    call_id = fields.get("tool_call_id")
    call_id = call_id if isinstance(call_id, str) and call_id else None
    error = None
    if fields.get("status") == "error":
        error = text_of_content(content) or "error"
    if isinstance(content, str):
        parsed = parse_json(content)
        content = content if parsed is INVALID else parsed
    return ToolResult(content, call_id, error)


def _function_response(obj: Any, tool: str) -> ToolResult | None:
    """A whole function response (module docstring) of ``tool``: its name and a
    ``response`` object, no key that a function response does not have. What it holds,
    unwrapped, with the error it reports and ``id`` as the call id."""
    if (
        not isinstance(obj, dict)
        or "response" not in obj
        or not obj.keys() <= _FUNCTION_RESPONSE_KEYS
    ):
        return None
    name, response = obj.get("name"), obj.get("response")
    if name != tool or not isinstance(response, dict):
        return None
    if len(response) == 1 and "result" in response:
        inner = response["result"]
        if isinstance(inner, str):
            parsed = parse_json(inner)
            inner = inner if parsed is INVALID else parsed
        found = result_of(inner)
    else:
        found = result_of(response)
    call_id = obj.get("id")
    if found.call_id is None and isinstance(call_id, str) and call_id:
        return found._replace(call_id=call_id)
    return found


def _error_dict_message(obj: dict[str, Any]) -> str | None:
    """The message of an ``{"status": "error", …}`` result (ADK idiom, Strands ToolResult),
    or of an object whose only field is ``error``."""
    if len(obj) == 1:
        only = obj.get("error")
        if isinstance(only, str) and only:
            return only
    if obj.get("status") != "error":
        return None
    for key in _ERROR_MESSAGE_KEYS:
        message = obj.get(key)
        if isinstance(message, str) and message:
            return message
    return text_of_content(obj.get("content")) or "error"
