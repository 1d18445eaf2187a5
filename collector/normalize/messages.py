"""Chat messages in the shapes instrumentations record them, read convention-blind.

One message list reader serves every convention, because the shapes overlap:

* GenAI semconv / ADK: ``{"role": "user", "parts": [{"type": "text", "content": …}]}``
* OpenAI-style / Vercel: ``{"role": "user", "content": "…" | [{"type": "text", "text": …}]}``
* LangChain dumps: ``{"type": "human", "data": {"content": …}}`` and
  ``{"lc": 1, "id": [… "HumanMessage"], "kwargs": {"content": …}}``
* Gemini / Strands content blocks: ``{"role": "model", "parts": [{"text": …}]}``, ``[{"text": …}]``
* Content parts keyed by their kind (Haystack's ``ChatMessage``): ``{"role": "assistant",
  "content": [{"text": …} | {"tool_call": {"tool_name", "arguments", "id"}}
  | {"tool_call_result": …}]}``; a model's reply list under ``replies``
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final, NamedTuple

from collector.normalize.reprs import looks_like_object_repr, object_repr
from collector.normalize.values import INVALID, as_list, json_ready, parse_json

USER_ROLES: Final = frozenset({"user", "human"})
ASSISTANT_ROLES: Final = frozenset({"assistant", "ai", "model"})
_LC_CLASS_ROLES: Final = {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool"}
_MAX_DEPTH: Final = 8  # wrappers nest a few levels at most; deeper data is not a message list


class RequestedCall(NamedTuple):
    """A tool call an LLM asked for (it may or may not have been executed)."""

    call_id: str | None
    name: str
    args: Any  # parsed arguments (dict when the model produced an object)
    raw_args: str | None  # the JSON text when the instrumentation recorded a string


_tuple_new: Any = tuple.__new__
CALL_PART_KINDS: Final = frozenset({"tool_call", "tool_use", "ToolCall", "tool-call"})


def _lc_fields(message: dict[str, Any]) -> dict[str, Any]:
    """The field dict of a LangChain dump (``data`` or constructor ``kwargs``), or the message."""
    inner = message.get("data") if "data" in message else message.get("kwargs")
    return inner if isinstance(inner, dict) else message


def role_of(message: Any) -> str | None:
    """The message's role in lower case (``user``/``human``/``assistant``/``ai``/``model`` …)."""
    if not isinstance(message, dict):
        return None
    role = message.get("role")
    if isinstance(role, str):
        return role.lower()
    ident = message.get("id")
    if message.get("lc") is not None and isinstance(ident, list) and ident:
        return _LC_CLASS_ROLES.get(str(ident[-1]))
    kind = message.get("type")
    if isinstance(kind, str):
        kind = kind.lower()
        # (a message typed ``<Role>Message``, AutoGen's: ``UserMessage``, ``AssistantMessage``)
        stem = kind[: -len(_MESSAGE_TYPE)] if kind.endswith(_MESSAGE_TYPE) else ""
        return stem if stem in _TYPED_ROLES else kind
    return _side_of(message) if "kind" in message else None


_MESSAGE_TYPE: Final = "message"
_TYPED_ROLES: Final = frozenset({"system", "user", "human", "assistant", "ai", "tool"})


def _side_of(message: dict[str, Any]) -> str | None:
    """The role of a message recorded without one, as pydantic-ai's own messages are
    (``{"kind": "request" | "response", "parts": [{"part_kind": …}]}``): a response is
    the assistant's; a request is the user's when it holds the user's prompt, a tool
    message when it holds only tool returns (or retry prompts), a system message when
    only system prompts."""
    kind = message.get("kind")
    if kind == "response":
        return "assistant"
    parts = message.get("parts")
    if kind != "request" or not isinstance(parts, list) or not parts:
        return None
    kinds: set[str] = set()
    for part in parts:
        kind = part.get("part_kind") if isinstance(part, dict) else None
        if isinstance(kind, str):
            kinds.add(kind)
    if "user-prompt" in kinds:
        return "user"
    if kinds and kinds <= _TOOL_RETURN_PARTS:
        return "tool"
    return "system" if kinds == {"system-prompt"} else None


_TOOL_RETURN_PARTS: Final = frozenset({"tool-return", "retry-prompt"})


def text_of_content(content: Any) -> str | None:
    """Text of a content value: a string, or the text parts of a part/block list joined."""
    if isinstance(content, str):
        return content or None
    if not isinstance(content, list | tuple):
        return None
    texts = [t for t in map(_part_text, content) if t]
    return "\n".join(texts) if texts else None


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind is None:
        kind = part.get("block_type")  # (LlamaIndex's blocks)
        if kind is None:
            kind = part.get("part_kind")  # (pydantic-ai's parts)
    if kind not in (None, "text", "output_text", "input_text", "user-prompt"):
        return None  # tool_call, reasoning, images … are not the text of the message
    value = part.get("content") if "content" in part else part.get("text")
    return value if isinstance(value, str) else None


def text_of(message: Any) -> str | None:
    """The text of one message in any of the module's shapes."""
    if not isinstance(message, dict):
        return None
    fields = _lc_fields(message)
    if "parts" in fields:
        return text_of_content(fields.get("parts"))
    if fields.get("content") is None and "blocks" in fields:  # LlamaIndex's ``ChatMessage``
        return text_of_content(fields.get("blocks"))
    return text_of_content(fields.get("content"))


def has_role(value: Any, roles: frozenset[str] | None) -> bool:
    """Whether ``value`` holds a message list with a message of one of ``roles`` (of any
    role when None)."""
    found = message_list(value)
    if not found:
        return False
    return any(
        role_of(item) is not None if roles is None else role_of(item) in roles for item in found
    )


def message_list(value: Any, depth: int = 0) -> list[Any] | None:
    """The message list inside ``value``: a list, or under ``messages``/``inputs``/``contents``
    (/``input``/``replies``/``output``: the OpenAI Responses API's request and response
    items, as LangSmith records them).

    LangChain LLM inputs are batches (a list of message lists): the first is used.
    A bare ``prompt`` string (Vercel ``ai.prompt``) becomes one user message.
    """
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            return message_list(value[0], depth + 1)
        if value and isinstance(value[0], str) and looks_like_object_repr(value[0]):
            return messages_from_reprs(value) or value
        if value and isinstance(value[0], dict) and "role" not in value[0]:
            return _choice_messages(value)
        return value
    if not isinstance(value, dict):
        return None
    for key in ("messages", "inputs", "contents", "input", "replies", "output"):
        if key in value:
            return message_list(value[key], depth + 1)
    prompt = value.get("prompt")
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return None


def first_choice(response: Any) -> Any:
    """The first choice's message of a Chat Completions response (``choices[0].message``;
    the choice itself when it holds none), or None when ``response`` is no such response."""
    choices = response.get("choices") if isinstance(response, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0].get("message", choices[0])
    return None


def _choice_messages(items: list[Any]) -> list[Any]:
    """A Chat Completions response's ``choices`` (``{index, finish_reason, message}``,
    written where the reply's messages go: Laminar's OpenAI instrumentation) as the
    first choice's message (a program reads ``choices[0]``; ``n > 1`` asks for
    alternatives); other lists as they are."""
    first = items[0].get("message")
    return [first] if isinstance(first, dict) else items


def messages_from_reprs(items: list[Any]) -> list[Any] | None:
    """Message object reprs (``ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[…])``)
    as message dicts (``role``, ``content``: leading underscores dropped); None unless
    every item is one."""
    out: list[Any] = []
    for item in items:
        if not isinstance(item, str) or not looks_like_object_repr(item):
            return None
        parsed = object_repr(item)
        if not isinstance(parsed, dict):
            return None
        out.append({key.lstrip("_"): value for key, value in parsed.items()})
    return out


def last_text(messages: Any, roles: frozenset[str]) -> str | None:
    """Text of the last message in ``messages`` whose role is in ``roles`` and has text."""
    found = message_list(messages)
    if not found:
        return None
    for message in found[::-1]:
        if role_of(message) in roles:
            value = text_of(message)
            if value:
                return value
    return None


def genai_tool_calls(messages: Any) -> Iterator[RequestedCall]:
    """``tool_call`` parts of GenAI semconv output messages (``gen_ai.output.messages``),
    and what Laminar writes there in their place: the OpenAI Responses API's
    ``function_call`` items (the id the answers name under ``call_id``), a Chat
    Completions message's ``tool_calls``."""
    for message in message_list(messages) or ():
        if isinstance(message, dict) and message.get("type") == "function_call":
            call_id = message.get("call_id", message.get("id"))
            call = requested(call_id, message.get("name"), message.get("arguments"))
            if call is not None:
                yield call
            continue
        if isinstance(message, dict) and isinstance(message.get("tool_calls"), list):
            yield from openai_tool_calls(message["tool_calls"])  # (a Chat Completions message)
            continue
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict) and part.get("type") == "tool_call":
                call = requested(part.get("id"), part.get("name"), part.get("arguments"))
                if call is not None:
                    yield call


def content_part_calls(messages: Any) -> list[RequestedCall]:
    """Tool calls an assistant message records as content parts: a part whose ``type`` is
    ``tool_call`` (the call's fields beside it), or a part holding the call under a
    ``tool_call`` key; the name under ``name`` or ``tool_name``, the arguments under
    ``arguments`` (an object or its JSON text)."""
    calls: list[RequestedCall] = []
    for message in message_list(messages) or ():
        if role_of(message) not in ASSISTANT_ROLES:
            continue
        content = _lc_fields(message).get("content")
        if not isinstance(content, list):
            content = message.get("parts")
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                continue
            call = part if part.get("type") == "tool_call" else part.get("tool_call")
            if not isinstance(call, dict):
                continue
            name = call.get("name", call.get("tool_name"))
            made = requested(call.get("id"), name, call.get("arguments"))
            if made is not None:
                calls.append(made)
    return calls


def requested(call_id: Any, name: Any, arguments: Any) -> RequestedCall | None:
    """A ``RequestedCall`` from loosely typed pieces; ``None`` without a usable name.

    String arguments are parsed as JSON (the model's text is kept as ``raw_args``).
    """
    if not isinstance(name, str) or not name:
        return None
    raw = arguments if isinstance(arguments, str) else None
    args = arguments  # callers pass JSON values or attribute text
    if raw is not None:
        parsed = parse_json(raw)
        args = raw if parsed is INVALID else parsed
    known_id = call_id if isinstance(call_id, str) and call_id else None
    # By position (a NamedTuple's constructor is a Python function: see step_records).
    call: RequestedCall = _tuple_new(RequestedCall, (known_id, name, args, raw))
    return call


def flattened_calls(
    attributes: Mapping[str, Any],
    prefix: str,
    inner: str,
    name_key: str,
    arguments_key: str,
    *,
    limit: int,
) -> list[RequestedCall]:
    """The calls flattened into attributes as ``{prefix}{j}.{inner}{key}`` (j = 0, 1, …),
    in index order, up to the first index without a name (at most ``limit``)."""
    calls: list[RequestedCall] = []
    for j in range(limit):
        call = f"{prefix}{j}.{inner}"
        name = attributes.get(call + name_key)
        if name is None:
            break
        arguments = json_ready(attributes.get(call + arguments_key))
        made = requested(attributes.get(call + "id"), name, arguments)
        if made is not None:
            calls.append(made)
    return calls


def openai_tool_calls(items: Any) -> list[RequestedCall]:
    """The calls of an OpenAI-style ``tool_calls`` list (``openai_tool_call`` each); none
    when ``items`` is no list."""
    calls: list[RequestedCall] = []
    for item in as_list(items) or ():
        made = openai_tool_call(item)
        if made is not None:
            calls.append(made)
    return calls


def content_tool_calls(content: Any) -> list[RequestedCall]:
    """Calls written where a reply's text goes: a ``content`` list whose every item is a
    Chat Completions ``tool_calls`` item (``{"id", "type": "function", "function":
    {"name", "arguments"}}``: an instrumentation that copied the reply's calls into its
    content, Langtrace's) or a call written flat, an id, a name and the arguments only
    (AutoGen's ``FunctionCall``). One item that is neither (a text part) and none is
    read: a reply with text is never taken for calls."""
    calls: list[RequestedCall] = []
    for item in content if isinstance(content, list) else ():
        if not isinstance(item, dict):
            return []
        if isinstance(item.get("function"), dict):
            made = openai_tool_call(item)
        else:
            made = (
                requested(item["id"], item["name"], item["arguments"]) if _flat_call(item) else None
            )
        if made is None:
            return []
        calls.append(made)
    return calls


def _flat_call(item: dict[str, Any]) -> bool:
    """A call written flat (AutoGen's ``FunctionCall``): id, name, arguments, no other kind."""
    return (
        item.keys() <= _FLAT_CALL_KEYS
        and isinstance(item.get("id"), str)
        and isinstance(item.get("name"), str)
        and "arguments" in item
        and item.get("type", "function") in _FLAT_CALL_TYPES
    )


_FLAT_CALL_KEYS: Final = frozenset({"id", "name", "arguments", "type"})
_FLAT_CALL_TYPES: Final = frozenset({"function", "FunctionCall", "function_call"})


def block_calls(blocks: Any) -> list[RequestedCall]:
    """The calls a message's content blocks record (a block of a kind in
    ``CALL_PART_KINDS``, ``part_call``); none when ``blocks`` is no list."""
    calls: list[RequestedCall] = []
    for block in blocks if isinstance(blocks, list) else ():
        if isinstance(block, dict) and part_kind(block) in CALL_PART_KINDS:
            made = part_call(block)
            if made is not None:
                calls.append(made)
    return calls


def part_kind(part: dict[str, Any]) -> Any:
    """A content part's or block's kind: ``type``, ``__class__`` (a dumped object),
    ``block_type`` (LlamaIndex's blocks) or ``part_kind`` (pydantic-ai's parts)."""
    return (
        part.get("type") or part.get("__class__") or part.get("block_type") or part.get("part_kind")
    )


def part_call(part: dict[str, Any]) -> RequestedCall | None:
    """The tool call a part of kind ``CALL_PART_KINDS`` records: the name under ``name``
    or ``tool_name``, the arguments under ``arguments``, ``input``, ``args`` or
    ``tool_kwargs`` (LlamaIndex), the id under ``id`` or ``tool_call_id``."""
    name = part.get("name") or part.get("tool_name")
    arguments = part.get("arguments", part.get("input", part.get("args")))
    if arguments is None:
        arguments = part.get("tool_kwargs")
    return requested(part.get("id") or part.get("tool_call_id"), name, arguments)


def openai_tool_call(call: Any) -> RequestedCall | None:
    """One OpenAI-style ``tool_calls`` item (``{"id", "function": {"name", "arguments"}}``)
    or a LangChain one (``{"id", "name", "args"}``)."""
    if not isinstance(call, dict):
        return None
    function = call.get("function")
    if isinstance(function, dict):
        return requested(call.get("id"), function.get("name"), function.get("arguments"))
    return requested(call.get("id"), call.get("name"), call.get("args"))
