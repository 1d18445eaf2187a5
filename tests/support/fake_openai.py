"""A real HTTP server speaking the OpenAI chat-completions protocol, scripted by tests.

It runs in the ``loop_thread`` fixture's event loop on a loopback port from the OS
and answers ``POST /v1/chat/completions`` from a script of ``Reply`` items (then a
default): a verdict (checked against the request's ``response_format`` JSON schema
when there is one), free text, an error status with ``Retry-After``, a malformed
body, or a reply held until the test calls ``release()`` (a slow judge). Every
request is recorded; ``arrived`` counts arrivals so tests wait on it, not on time.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from support.loop import LoopThread

PATH = "/v1/chat/completions"


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    content: str | None = None  # the assistant message text (200)
    body: bytes | None = None  # a raw body instead (malformed answers, error bodies)
    headers: dict[str, str] = field(default_factory=dict)
    hold: bool = False  # wait until release() before answering
    echo_auth: bool = False  # put the Authorization header into the error body
    usage: tuple[int, int] = (120, 30)


def verdict(**fields: Any) -> Reply:
    return Reply(content=json.dumps(fields))


def text(content: str) -> Reply:
    return Reply(content=content)


def error(status: int, retry_after: str | None = None, message: str = "try later") -> Reply:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    body = json.dumps({"error": {"message": message, "type": "server_error"}}).encode()
    return Reply(status=status, body=body, headers=headers)


@dataclass
class Seen:
    """One recorded request."""

    headers: dict[str, str]
    body: dict[str, Any]
    query: dict[str, str] = field(default_factory=dict)

    @property
    def system(self) -> str:
        return str(self.body["messages"][0]["content"])

    @property
    def user(self) -> str:
        return str(self.body["messages"][1]["content"])


class FakeChatServer:
    """Start with ``loop.run(server.start())``; ``url`` is the API root (``…/v1``)."""

    def __init__(self, loop: LoopThread) -> None:
        self._loop = loop
        self.script: deque[Reply] = deque()
        self.default: Reply | Callable[[Seen], Reply] = verdict(reasoning="ok", is_correct=True)
        self.requests: list[Seen] = []
        self.schema_problems: list[str] = []
        self.arrived = threading.Semaphore(0)
        self._gate: asyncio.Event | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def start(self) -> None:
        self._gate = asyncio.Event()
        app = web.Application()
        app.router.add_post(PATH, self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def shutdown(self, grace: float = 1.0) -> None:
        if self._gate is not None:
            self._gate.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def release(self) -> None:
        """Let every held reply (now and later) go."""
        assert self._gate is not None
        self._loop.loop.call_soon_threadsafe(self._gate.set)

    def wait_arrivals(self, count: int, timeout: float = 10.0) -> None:
        for _ in range(count):
            assert self.arrived.acquire(timeout=timeout), "a judge request never arrived"

    async def _handle(self, request: web.Request) -> web.Response:
        seen = Seen(dict(request.headers), await request.json(), dict(request.query))
        self.requests.append(seen)
        self.arrived.release()
        reply = self._next(seen)
        if reply.hold:
            assert self._gate is not None
            await self._gate.wait()
        if reply.echo_auth:
            echoed = f"invalid key: {seen.headers.get('Authorization', '')}"
            return web.json_response({"error": {"message": echoed}}, status=401)
        if reply.body is not None:
            return web.Response(status=reply.status, body=reply.body, headers=reply.headers)
        self._check_schema(seen, reply.content or "")
        return web.json_response(_completion(seen, reply), headers=reply.headers)

    def _next(self, seen: Seen) -> Reply:
        if self.script:
            return self.script.popleft()
        return self.default(seen) if callable(self.default) else self.default

    def _check_schema(self, seen: Seen, content: str) -> None:
        """With ``response_format: json_schema`` the answer must fit the schema's keys."""
        fmt = seen.body.get("response_format")
        if not fmt or fmt.get("type") != "json_schema":
            return
        schema = fmt["json_schema"]["schema"]
        try:
            answer = json.loads(content)
        except ValueError:
            return  # scripted non-JSON text: the test is about the fallback parser
        missing = set(schema.get("required", ())) - set(answer)
        extra = set(answer) - set(schema.get("properties", {}))
        if missing or extra or schema.get("additionalProperties") is not False:
            self.schema_problems.append(f"missing={missing} extra={extra}")


def _completion(seen: Seen, reply: Reply) -> dict[str, Any]:
    prompt, completion = reply.usage
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": seen.body.get("model", "?"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }
