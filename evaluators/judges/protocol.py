"""The OpenAI chat-completions wire format, as far as a judge needs it.

``payload`` builds the request body (``model``, ``messages``, ``temperature``,
``max_tokens``, and ``response_format`` per the judge's setting); ``parse_reply``
reads ``choices[0].message.content`` and ``usage`` from a response body. Errors
are split the way the OTel exporters split them: ``RetryableError`` (429, 408,
5xx, timeouts, connection failures; may carry the server's ``Retry-After``) and
``JudgeError`` (permanent: other 4xx, a body that is not a chat completion).
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from evaluators.judges.settings import ResponseFormat

RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class JudgeError(Exception):
    """A judge call that failed for good. Messages never contain the API key.

    ``kind`` is the metric label of the failure: ``client_error`` (4xx),
    ``malformed`` (not a chat completion), ``rate_limited`` (429),
    ``server_error`` (5xx, 408, 409), ``timeout``, ``transport``, ``gave_up``.
    """

    def __init__(self, message: str, kind: str = "client_error") -> None:
        super().__init__(message)
        self.kind = kind


class RetryableError(JudgeError):
    """A failure worth retrying; ``retry_after`` is the server's requested delay, if any."""

    def __init__(self, message: str, kind: str, retry_after: float | None = None) -> None:
        super().__init__(message, kind)
        self.retry_after = retry_after


class Message(NamedTuple):
    role: str  # "system" | "user"
    content: str


class ChatRequest(NamedTuple):
    """What a judge evaluator asks: messages plus the JSON schema of the expected verdict."""

    messages: tuple[Message, ...]
    schema_name: str
    schema: Mapping[str, Any]


class ChatReply(NamedTuple):
    """The model's answer text and the tokens the server reports (0 when it does not)."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    model: str

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def payload(
    request: ChatRequest,
    model: str,
    temperature: float,
    max_tokens: int | None,
    response_format: ResponseFormat,
) -> dict[str, Any]:
    """The JSON body of one chat-completions request."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": temperature,
    }
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if response_format == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
        }
    elif response_format == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def parse_reply(raw: bytes, model: str) -> ChatReply:
    """Read a chat-completions response body; ``JudgeError`` if it is not one."""
    try:
        body = json.loads(raw)
        content = body["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        message = f"malformed chat-completions response: {_snippet(raw)!r}"
        raise JudgeError(message, "malformed") from None
    if not isinstance(content, str):
        message = "malformed chat-completions response: message content is not text"
        raise JudgeError(message, "malformed")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return ChatReply(
        content,
        _count(usage.get("prompt_tokens")),
        _count(usage.get("completion_tokens")),
        str(body.get("model") or model),
    )


def status_error(status: int, raw: bytes, retry_after: str | None) -> JudgeError:
    """The error for a non-2xx answer: retryable for 408/409/429/5xx, else permanent."""
    message = f"HTTP {status}: {error_message(raw)}"
    if status in RETRYABLE_STATUS:
        kind = "rate_limited" if status == 429 else "server_error"
        return RetryableError(message, kind, parse_retry_after(retry_after))
    return JudgeError(message, "client_error")


def error_message(raw: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else a short snippet of it."""
    try:
        message = json.loads(raw)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return _snippet(raw)
    return str(message)[:300]


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds or an HTTP date; None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _snippet(raw: bytes, limit: int = 200) -> str:
    return raw[:limit].decode("utf-8", "replace")


def canonical(messages: Sequence[Message], extra: Mapping[str, Any]) -> bytes:
    """A stable byte form of a request, for cache keys."""
    data = {"messages": [list(m) for m in messages], **extra}
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
