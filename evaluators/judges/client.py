"""One HTTP attempt against an OpenAI-compatible ``/chat/completions`` endpoint.

``aiohttp`` rather than the ``openai`` package: it is already evald's HTTP stack
(receivers, admin), it speaks to any compatible server (vLLM, Ollama, LiteLLM)
without a vendor SDK's own retry loop, timeouts and rate-limit handling fighting
ours, and the protocol subset a judge needs is one POST (``protocol``).

The key is sent only in the ``Authorization`` header and every error message
passes through ``redact``, so a server that echoes the header back cannot leak
it into logs, results or exceptions.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from pydantic import SecretStr

from evaluators.judges.protocol import (
    ChatReply,
    JudgeError,
    RetryableError,
    parse_reply,
    status_error,
)
from evaluators.judges.settings import JudgeSettings

REDACTED = "***"


class ChatClient:
    """Posts chat-completions requests for one judge; owns one ``aiohttp`` session.

    Use from one event loop only (the judge worker's); the session is created on
    first use, inside that loop. ``close()`` is safe to call twice.
    """

    def __init__(self, settings: JudgeSettings, api_key: SecretStr | None) -> None:
        self._settings = settings
        self._key = api_key
        self._session: aiohttp.ClientSession | None = None

    async def post(self, body: dict[str, Any]) -> ChatReply:
        """One attempt. Raises ``RetryableError`` or ``JudgeError`` (key redacted)."""
        try:
            return await self._post(body)
        except JudgeError as exc:
            error = _with_message(exc, self.redact(str(exc)))
        raise error  # outside the handler: no __context__ holding the unredacted text

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the API key replaced."""
        key = self._key.get_secret_value() if self._key is not None else ""
        return text.replace(key, REDACTED) if key else text

    async def _post(self, body: dict[str, Any]) -> ChatReply:
        timeout = self._settings.timeout
        data = json.dumps(body, ensure_ascii=False).encode()
        try:
            async with self._client().post(
                self._settings.url,
                data=data,
                headers=self._headers(),
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                raw = await response.read()
                if not 200 <= response.status < 300:
                    raise status_error(response.status, raw, response.headers.get("Retry-After"))
                return parse_reply(raw, self._settings.model)
        except TimeoutError:
            raise RetryableError(f"no answer within {timeout:g}s", "timeout") from None
        except aiohttp.ClientError as exc:
            message = f"request failed: {type(exc).__name__}: {exc}"
            raise RetryableError(message, "transport") from None

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            **self._settings.headers,
        }
        if self._key is not None:
            name, key = self._settings.api_key_header, self._key.get_secret_value()
            headers[name] = f"Bearer {key}" if name.lower() == "authorization" else key
        return headers

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session


def _with_message(exc: JudgeError, message: str) -> JudgeError:
    if isinstance(exc, RetryableError):
        return RetryableError(message, exc.kind, exc.retry_after)
    return JudgeError(message, exc.kind)
