"""The scripted model behind a loopback HTTP port (not run in CI; see README.md).

For captures whose framework talks to a model provider through its real client (openai,
anthropic, LiteLLM, the JS SDK …): the client is pointed at a ``LoopbackServer``
(127.0.0.1, a port from the OS) whose model endpoint answers from the script of the
scenario being captured (``common.active_script()``). One endpoint per wire protocol:

* ``ChatCompletions``: OpenAI Chat Completions (``POST …/chat/completions``); by default
  ``chat_completion`` answers (the script's next tool calls, else its final text); a
  framework whose model answers in text of its own format (DSPy's ChatAdapter) passes its
  own answer, built with ``completion``;
* ``AnthropicMessages``: the Anthropic Messages API (``POST …/v1/messages``);
* ``GeminiGenerateContent``: the Gemini Developer API
  (``POST /v1beta/models/{model}:generateContent``).

Only non-streaming answers are scripted: a request that asks for a stream is refused
(400), so a framework that streams fails loudly instead of capturing something else.
Captures whose other processes talk back (the store for a JS agent or an MCP server, their
OTLP exports) add routes of their own to the same server (``StoreEndpoint`` serves the
store). Requests are answered one at a time (one lock around every route), so the script
sees them in order even from a threaded client.

This file must stay importable from each framework's own venv: no evald imports.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import common

Body = dict[str, Any]


class NotScripted(Exception):
    """A request the scripted server does not answer: sent back as an HTTP error."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Request:
    """One POST the server received."""

    path: str
    headers: Message
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


@dataclass(frozen=True)
class Reply:
    """What a route answers: status, body and headers (besides the content length)."""

    body: bytes
    content_type: str = "application/json"
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def json(
        cls,
        payload: Any,
        headers: tuple[tuple[str, str], ...] = (),
        content_type: str = "application/json",
    ) -> Reply:
        return cls(json.dumps(payload).encode(), content_type, headers=headers)


Route = Callable[[Request], Reply]


def read_body(handler: BaseHTTPRequestHandler) -> bytes:
    """A request body, chunked (Node's http does that for the OTLP exporter) or not."""
    if "chunked" in (handler.headers.get("Transfer-Encoding") or "").lower():
        parts: list[bytes] = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            parts.append(handler.rfile.read(size))
            handler.rfile.readline()  # CRLF after each chunk
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, routes: Mapping[str, Route]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes = [(re.compile(pattern), route) for pattern, route in routes.items()]
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        body = read_body(self)
        if os.environ.get("CAPTURE_DEBUG"):
            print("HTTP", self.path, dict(self.headers), len(body), file=sys.stderr)
        route = next((r for p, r in self.server.routes if p.fullmatch(self.path)), None)
        try:
            if route is None:
                raise NotScripted(404, f"not scripted: {self.path}")
            with self.server.lock:
                reply = route(Request(self.path, self.headers, body))
        except NotScripted as refused:
            self.send_error(refused.status, refused.message)
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class LoopbackServer:
    """An HTTP server on 127.0.0.1 (port from the OS) answering POSTs on a daemon thread.

    ``routes`` maps a regular expression, matched against the whole request path (in the
    mapping's order), to the route that answers it; any other path gets a 404.
    """

    def __init__(self, routes: Mapping[str, Route]) -> None:
        self._server = _Server(routes)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, without a trailing slash."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def shutdown(self) -> None:
        self._server.shutdown()


class ModelEndpoint:
    """A scripted model endpoint: refuses streams, keeps every request body in
    ``requests``, and answers the body with ``answer`` (a JSON response)."""

    PATH: ClassVar[str]
    CONTENT_TYPE: ClassVar[str] = "application/json"

    def __init__(self, answer: Callable[[Body], Body]) -> None:
        self.answer = answer
        self.requests: list[Body] = []

    def __call__(self, request: Request) -> Reply:
        body = request.json()
        if body.get("stream"):
            raise NotScripted(400, "streaming not scripted")
        self.requests.append(body)
        return Reply.json(self.answer(body), self.headers(), self.CONTENT_TYPE)

    def headers(self) -> tuple[tuple[str, str], ...]:
        """Response headers besides the content type and length (after ``answer``)."""
        return ()

    def serve(self) -> LoopbackServer:
        """A loopback server with this endpoint only."""
        return LoopbackServer({self.PATH: self})


# --------------------------------------------------------------------------- OpenAI


def completion(
    body: Body,
    message: dict[str, Any],
    *,
    response_id: str,
    finish_reason: str,
    completion_tokens: int = 12,
) -> Body:
    """A Chat Completions response of one choice holding ``message``."""
    prompt_tokens = 50 + 10 * len(body.get("messages") or [])
    return {
        "id": response_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": common.MODEL_NAME,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def chat_completion(body: Body) -> Body:
    """The script's next answer as a Chat Completions response: tool calls, else text."""
    script = common.active_script()
    calls, final = script.next_response()
    message: dict[str, Any] = {"role": "assistant", "content": final}
    if calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for call_id, name, args in calls
        ]
    return completion(
        body,
        message,
        response_id=f"chatcmpl_{script.scenario.name}_{script.turn}{script.step}",
        finish_reason="stop" if final is not None else "tool_calls",
    )


class ChatCompletions(ModelEndpoint):
    """The OpenAI Chat Completions endpoint (``POST …/chat/completions``)."""

    PATH = r".*/chat/completions"

    def __init__(self, answer: Callable[[Body], Body] = chat_completion) -> None:
        super().__init__(answer)


# --------------------------------------------------------------------------- Anthropic


def anthropic_message(body: Body) -> Body:
    """The script's next answer as a Messages API response: tool_use blocks, else text."""
    script = common.active_script()
    calls, final = script.next_response()
    content: list[dict[str, Any]] = []
    if final is not None:
        content.append({"type": "text", "text": final})
    for call_id, name, args in calls:
        content.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
    input_tokens = 50 + 10 * len(body.get("messages") or [])
    return {
        "id": f"msg_{script.scenario.name}_{script.turn}{script.step}",
        "type": "message",
        "role": "assistant",
        "model": common.MODEL_NAME,
        "content": content,
        "stop_reason": "end_turn" if final is not None else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 12},
    }


class AnthropicMessages(ModelEndpoint):
    """The Anthropic Messages endpoint (``POST …/v1/messages``), with the ``request-id``
    header the API sends (the SDK keeps it as the response's ``_request_id``)."""

    PATH = r".*/v1/messages/?"

    def __init__(self, answer: Callable[[Body], Body] = anthropic_message) -> None:
        super().__init__(answer)

    def headers(self) -> tuple[tuple[str, str], ...]:
        script = common.active_script()
        return (("request-id", f"req_{script.scenario.name}_{script.step}"),)


# --------------------------------------------------------------------------- Gemini


def gemini_content(body: Body) -> Body:
    """The script's next answer as a ``GenerateContentResponse`` (REST JSON, camelCase):
    ``functionCall`` parts (without ids, as the Developer API sends them), else text."""
    script = common.active_script()
    calls, final = script.next_response()
    if final is not None:
        parts: list[dict[str, Any]] = [{"text": final}]
    else:
        parts = [{"functionCall": {"name": name, "args": args}} for _, name, args in calls]
    prompt_tokens = 50 + 10 * len(body.get("contents") or [])
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": 12,
            "totalTokenCount": prompt_tokens + 12,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt_tokens}],
        },
        "modelVersion": common.MODEL_NAME,
        "responseId": f"resp_{script.scenario.name}_{script.turn}{script.step}",
    }


class GeminiGenerateContent(ModelEndpoint):
    """The Gemini Developer API's ``generateContent`` (not ``streamGenerateContent``)."""

    PATH = r"/v1beta/models/[^/:]+:generateContent(\?.*)?"
    CONTENT_TYPE = "application/json; charset=UTF-8"

    def __init__(self, answer: Callable[[Body], Body] = gemini_content) -> None:
        super().__init__(answer)


# --------------------------------------------------------------------------- the store


class StoreEndpoint:
    """``POST /store/<tool>`` with the arguments as JSON: ``common``'s store for another
    process's tools, recorded by the script; a ``StoreError`` comes back as ``{"error": …}``.
    """

    PATH = r"/store/.+"

    def __call__(self, request: Request) -> Reply:
        tool = request.path.removeprefix("/store/")
        try:
            result = common.active_script().call(tool, **request.json())
        except common.StoreError as exc:
            return Reply.json({"error": str(exc)})
        return Reply.json({"result": result})
