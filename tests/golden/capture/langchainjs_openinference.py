"""Capture a LangChain.js agent through @arizeai/openinference-instrumentation-langchain.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    mkdir -p tests/golden/capture/node-langchainjs && cd tests/golden/capture/node-langchainjs
    npm init -y
    npm install langchain@1.5.14 @langchain/core@1.4.0 @langchain/langgraph@1.7.3 \
        @langchain/openai@1.5.8 zod@4.6.7 \
        @arizeai/openinference-instrumentation-langchain@4.1.1 \
        @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.0 \
        @opentelemetry/sdk-trace-base@2.12.1 @opentelemetry/resources@2.12.1 \
        @opentelemetry/exporter-trace-otlp-proto@0.223.1
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-lcjs
    /tmp/cap-lcjs/bin/pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-lcjs/bin/python tests/golden/capture/langchainjs_openinference.py [scenario ...]

(As installed on 2026-11-24: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2,
protobuf 7.36.2; Node v20.20.2, npm 11.19.1.) The agent itself is
``tests/golden/capture/node-langchainjs/agent.cjs``: LangChain.js ``createAgent`` (the LangGraph
agent of ``langchain`` v1) named ``music_store_support``, ``ChatOpenAI`` from
``@langchain/openai`` with its real ``openai`` client, five ``tool()``s from
``@langchain/core/tools`` with zod schemas, a ``MemorySaver`` checkpointer and
``configurable.thread_id`` (the session id, else ``thread-<scenario>``, as the Python
``langchain-openinference`` golden). ``LangChainInstrumentation.manuallyInstrument(
@langchain/core/callbacks/manager)`` on a ``NodeTracerProvider`` (default resource merged
with ours, as NodeSDK does) whose ``BatchSpanProcessor`` feeds the real
``OTLPTraceExporter`` of ``@opentelemetry/exporter-trace-otlp-proto``; the agent awaits
LangChain's background callbacks, then ``forceFlush()``es once per user turn.

This script runs one loopback HTTP server (127.0.0.1, port 0) that is everything the
agent talks to: ``POST /v1/chat/completions`` (the scripted model, as CrewAI's capture),
``POST /v1/traces`` (an OTLP/HTTP protobuf receiver: each request body is kept as it
came, one ``ExportTraceServiceRequest`` per SDK export), ``POST /store/<tool>`` (the store
backend of ``common``: the JS tools call it, so the trajectory is recorded by the tools
as they run; a ``StoreError`` comes back as ``{"error": …}`` and the JS tool throws a
``StoreError`` with that message), and ``/turn_start`` / ``/turn_end``.

Files: ``.jsonl`` = each received request, ``MessageToDict(use_integers_for_enums=True)``
with hex ids (common's convention); ``.pb`` = one request holding every span (the received
``resourceSpans`` merged by identical resource and scope); ``.tree.txt`` = common's tree
format, built from the received protobuf spans.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import received_otlp
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

NODE_DIR = Path(__file__).resolve().parent / "node-langchainjs"
FOLDER = common.TRACES / "langchainjs-openinference"
SERVICE_NAME = "music-store-support-langchainjs"
NODE_PACKAGES = (
    "langchain",
    "@langchain/core",
    "@langchain/langgraph",
    "@langchain/openai",
    "openai",
    "zod",
    "@arizeai/openinference-instrumentation-langchain",
    "@arizeai/openinference-core",
    "@arizeai/openinference-semantic-conventions",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/sdk-trace",
    "@opentelemetry/resources",
    "@opentelemetry/exporter-trace-otlp-proto",
    "@opentelemetry/otlp-transformer",
)


class State:
    lock = threading.Lock()
    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    turn_marks: ClassVar[list[int]] = []  # index into requests at each turn start
    turn_traces: ClassVar[list[str]] = []
    finals: ClassVar[list[str | None]] = []
    run_errors: ClassVar[list[str]] = []
    content_types: ClassVar[set[str]] = set()


_script = common.active_script


def _chat_completion(body: dict[str, Any]) -> dict[str, Any]:
    """The Chat Completions answer of the scripted model (as in crewai_crew.py)."""
    calls, final = _script().next_response()
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
    prompt_tokens = 50 + 10 * len(body.get("messages") or [])
    return {
        "id": f"chatcmpl_{_script().scenario.name}_{_script().turn}{_script().step}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": common.MODEL_NAME,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "stop" if final is not None else "tool_calls",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 12,
            "total_tokens": prompt_tokens + 12,
        },
    }


class Handler(BaseHTTPRequestHandler):
    def _json(self, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        raw = received_otlp.read_body(self)
        if os.environ.get("CAPTURE_DEBUG"):
            print("HTTP", self.path, dict(self.headers), len(raw), file=sys.stderr)
        if self.path == "/v1/traces":
            request = received_otlp.parse_export(self, raw)
            with State.lock:
                State.requests.append(request)
                State.content_types.add(self.headers.get("Content-Type") or "")
            received_otlp.answer_export(self)
            return
        body = json.loads(raw or b"{}")
        if self.path.endswith("/chat/completions"):
            if body.get("stream"):
                self.send_error(400, "streaming not scripted")
                return
            with State.lock:
                answer = _chat_completion(body)
            self._json(answer)
        elif self.path.startswith("/store/"):
            tool = self.path.removeprefix("/store/")
            try:
                with State.lock:
                    result = _script().call(tool, **body)
            except common.StoreError as exc:
                self._json({"error": str(exc)})
                return
            self._json({"result": result})
        elif self.path == "/turn_start":
            with State.lock:
                _script().start_turn(body["turn"])
                State.turn_marks.append(len(State.requests))
            self._json({})
        elif self.path == "/turn_end":
            with State.lock:
                State.finals.append(body.get("final"))
                if body.get("error"):
                    State.run_errors.append(body["error"])
                State.turn_traces.extend(
                    received_otlp.ids_of(State.requests[State.turn_marks[-1] :])
                )
            self._json({})
        else:
            self.send_error(404, f"not scripted: {self.path}")

    def log_message(self, format: str, *args: Any) -> None:
        pass


SERVER = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=SERVER.serve_forever, daemon=True).start()
ROOT_URL = f"http://127.0.0.1:{SERVER.server_address[1]}"


def node_versions() -> dict[str, str]:
    found: dict[str, str] = {
        "node": subprocess.check_output(["node", "--version"], text=True).strip()
    }
    for package in NODE_PACKAGES:
        candidates = [NODE_DIR / "node_modules" / package / "package.json"]
        if package in ("@opentelemetry/sdk-trace-base", "@opentelemetry/sdk-trace"):
            # the copies NodeTracerProvider really runs on (npm nests 2.12.0 under it)
            nested = NODE_DIR / "node_modules/@opentelemetry/sdk-trace-node/node_modules"
            candidates.insert(0, nested / package / "package.json")
        if package == "openai":
            nested = NODE_DIR / "node_modules/@langchain/openai/node_modules"
            candidates.insert(0, nested / package / "package.json")
        for candidate in candidates:
            if candidate.exists():
                found[package] = json.loads(candidate.read_text())["version"]
                break
    found.update(common.versions("opentelemetry-proto", "protobuf"))
    return found


NOTES = (
    "LangChain.js createAgent (langchain v1, LangGraph) with ChatOpenAI over a scripted "
    "loopback Chat Completions server; @arizeai/openinference-instrumentation-langchain "
    "(manuallyInstrument of @langchain/core/callbacks/manager) on a NodeTracerProvider, "
    "exported by the OTel JS SDK's OTLP/HTTP protobuf exporter to a loopback receiver (the "
    ".jsonl holds each received request); the refused refund throws inside the tool: the "
    "tool span gets status ERROR + an exception event, and createAgent's ToolNode turns the "
    "error into a ToolMessage (status 'error', content '<error>\\n Please fix your "
    "mistakes.'); every scenario runs on a MemorySaver thread (configurable.thread_id = "
    "session id, else 'thread-<scenario>'), which OpenInference maps to session.id"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    State.requests, State.turn_marks = [], []
    State.turn_traces, State.finals, State.run_errors = [], [], []
    config = {
        "scenario": name,
        "user_inputs": scenario.user_inputs,
        "session_id": scenario.session_id,
        "system_prompt": common.SYSTEM_PROMPT,
        "agent_name": common.AGENT_NAME,
        "model": common.MODEL_NAME,
        "tool_descriptions": common.TOOL_DESCRIPTIONS,
        "service_name": SERVICE_NAME,
        "base_url": f"{ROOT_URL}/v1",
        "otlp_url": f"{ROOT_URL}/v1/traces",
        "control_url": ROOT_URL,
    }
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        "CAPTURE_CONFIG": json.dumps(config),
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "NO_PROXY": "127.0.0.1,localhost",
        **({"CAPTURE_DEBUG": "1"} if os.environ.get("CAPTURE_DEBUG") else {}),
    }
    proc = subprocess.run(["node", "agent.cjs"], check=False, cwd=NODE_DIR, env=env, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: node exited {proc.returncode}")
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=State.turn_traces,
        final_responses=State.finals,
        framework_versions=node_versions(),
        notes=NOTES,
        session_id=scenario.session_id,
        run_errors=State.run_errors,
        extra={
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(State.content_types))
            + ") from @opentelemetry/exporter-trace-otlp-proto"
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, State.requests)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    SERVER.shutdown()


if __name__ == "__main__":
    main()
