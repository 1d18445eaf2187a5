"""Capture a LangGraph.js ReAct agent through Langfuse JS v4 (@langfuse/langchain + @langfuse/otel).

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-langgraphjs-langfuse && npm ci --ignore-scripts && cd -
    # (how it was made: npm init -y; npm pkg set type=commonjs; then
    #  npm install --ignore-scripts @langchain/langgraph@1.7.3 @langchain/openai@1.6.0 \
    #      @langchain/core@1.4.0 zod@4.6.7 @langfuse/langchain@4.6.1 @langfuse/otel@4.6.1 \
    #      @langfuse/tracing@4.6.1 @opentelemetry/api@1.9.1 @opentelemetry/sdk-node \
    #      @opentelemetry/sdk-trace-node @opentelemetry/exporter-trace-otlp-http \
    #      @opentelemetry/sdk-trace-base @opentelemetry/core @opentelemetry/resources
    #  (sdk-node 0.223.0, the others 2.12.1 / 0.223.1 as resolved on 2026-11-27). Langfuse JS
    #  5.x exists too; the 4.x line (4.6.1, its last) was asked for. @langchain/openai 1.6.0 and
    #  openai 7 declare engines node >=22; they run on Node 20 with a warning.
    #  node_modules/ is git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-lgjs-lf
    /tmp/cap-lgjs-lf/bin/pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; \
        /tmp/cap-lgjs-lf/bin/python tests/golden/capture/langgraphjs_langfuse.py [scenario ...]'

(As installed on 2026-11-27: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2,
protobuf 7.36.2; Node v20.20.2, npm 11.19.1; the Node package versions are written into
each ``.expected.json``.) The agent itself is
``tests/golden/capture/node-langgraphjs-langfuse/agent.cjs``: LangGraph.js ``createReactAgent``
(``@langchain/langgraph/prebuilt``) named ``music_store_support``, ``ChatOpenAI`` from
``@langchain/openai`` with its real ``openai`` client, five ``tool()``s from
``@langchain/core/tools`` with zod schemas, a ``MemorySaver`` checkpointer and
``configurable.thread_id`` (the session id, else ``thread-<scenario>``). Tracing is Langfuse's
documented setup: ``new NodeSDK({spanProcessors: [new LangfuseSpanProcessor({publicKey:
"pk-lf-offline", secretKey: "sk-lf-offline", baseUrl: <loopback>, flushAt: 4096,
flushInterval: 60})]})`` and one ``new CallbackHandler({sessionId})`` of ``@langfuse/langchain``
per ``invoke`` (``sessionId`` only in multi_turn, Langfuse's documented session mechanism).
The processor's own exporter (``@opentelemetry/exporter-trace-otlp-http``, OTLP/HTTP **JSON**)
posts to ``<baseUrl>/api/public/otel/v1/traces``; the agent awaits LangChain's background
callbacks, then ``forceFlush()``es the processor once per user turn.

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``) that is
everything the agent talks to: ``POST /v1/chat/completions`` (the scripted model,
``scripted_model.ChatCompletions``), ``POST /api/public/otel/v1/traces`` (an OTLP/HTTP JSON
receiver, below: each request body is parsed into an ``ExportTraceServiceRequest``, its hex ids
turned into bytes), ``POST /store/<tool>`` (``scripted_model.StoreEndpoint``: the JS tools call
it, so the trajectory is recorded by the tools as they run; a ``StoreError`` comes back as
``{"error": …}`` and the JS tool throws a ``StoreError`` with that message), and
``/turn_start`` / ``/turn_end``. Node runs with a minimal environment (no ``OTEL_*``,
``LANGFUSE_*``, ``LANGSMITH_*``/``LANGCHAIN_*`` variables).

Files: ``.jsonl`` = each received request, ``MessageToDict(use_integers_for_enums=True)``
with hex ids (common's convention); ``.pb`` = one request holding every span (the received
``resourceSpans`` merged by identical resource and scope); ``.tree.txt`` = common's tree
format, built from the received protobuf spans.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import received_otlp
import scripted_model
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

NODE_DIR = Path(__file__).resolve().parent / "node-langgraphjs-langfuse"
FOLDER = common.TRACES / "langgraphjs-langfuse"
SERVICE_NAME = "music-store-support-langgraphjs-langfuse"
LANGFUSE_OTLP_PATH = "/api/public/otel/v1/traces"
NODE_PACKAGES = (
    "@langchain/langgraph",
    "@langchain/core",
    "@langchain/openai",
    "openai",
    "zod",
    "@langfuse/langchain",
    "@langfuse/otel",
    "@langfuse/tracing",
    "@langfuse/core",
    "@opentelemetry/api",
    "@opentelemetry/sdk-node",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/resources",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/otlp-transformer",
)


class State:
    """What the loopback server received for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    turn_marks: ClassVar[list[int]] = []  # index into requests at each turn start
    turn_traces: ClassVar[list[str]] = []
    finals: ClassVar[list[str | None]] = []
    run_errors: ClassVar[list[str]] = []
    content_types: ClassVar[set[str]] = set()
    auth_headers: ClassVar[set[str]] = set()


_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _ids_to_base64(node: Any) -> None:
    """OTLP/JSON carries hex ids; protobuf's JSON parser wants base64 for bytes fields."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_KEYS and isinstance(value, str):
                node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            else:
                _ids_to_base64(value)
    elif isinstance(node, list):
        for item in node:
            _ids_to_base64(item)


def _otlp_json_route(request: scripted_model.Request) -> scripted_model.Reply:
    raw = request.body
    if request.headers.get("Content-Encoding") == "gzip":
        raw = gzip.decompress(raw)
    content_type = request.headers.get("Content-Type") or ""
    if not content_type.startswith("application/json"):
        raise ValueError(f"not an OTLP/HTTP JSON export: {content_type}")
    body = json.loads(raw)
    _ids_to_base64(body)
    export = ExportTraceServiceRequest()
    json_format.ParseDict(body, export)
    State.requests.append(export)
    State.content_types.add(content_type)
    State.auth_headers.add((request.headers.get("Authorization") or "").split(" ")[0])
    answer = json_format.MessageToJson(ExportTraceServiceResponse())
    return scripted_model.Reply(answer.encode(), content_type="application/json")


def _turn_start(request: scripted_model.Request) -> scripted_model.Reply:
    common.active_script().start_turn(request.json()["turn"])
    State.turn_marks.append(len(State.requests))
    return scripted_model.Reply.json({})


def _turn_end(request: scripted_model.Request) -> scripted_model.Reply:
    body = request.json()
    State.finals.append(body.get("final"))
    if body.get("error"):
        State.run_errors.append(body["error"])
    State.turn_traces.extend(received_otlp.ids_of(State.requests[State.turn_marks[-1] :]))
    return scripted_model.Reply.json({})


SERVER = scripted_model.LoopbackServer(
    {
        LANGFUSE_OTLP_PATH: _otlp_json_route,
        scripted_model.ChatCompletions.PATH: scripted_model.ChatCompletions(),
        scripted_model.StoreEndpoint.PATH: scripted_model.StoreEndpoint(),
        "/turn_start": _turn_start,
        "/turn_end": _turn_end,
    }
)
ROOT_URL = SERVER.url


def node_versions() -> dict[str, str]:
    found: dict[str, str] = {
        "node": subprocess.check_output(["node", "--version"], text=True).strip()
    }
    for package in NODE_PACKAGES:
        candidates = [NODE_DIR / "node_modules" / package / "package.json"]
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
    "LangGraph.js createReactAgent with ChatOpenAI over a scripted loopback Chat Completions "
    "server; Langfuse JS v4: @langfuse/langchain CallbackHandler (sessionId in multi_turn) "
    "creating spans via @langfuse/tracing, @langfuse/otel LangfuseSpanProcessor on a NodeSDK "
    "exporting with its own OTLP/HTTP JSON exporter to a loopback receiver (the .jsonl holds "
    "each received request, parsed); the refused refund throws inside the tool and the "
    "prebuilt ToolNode turns it into a ToolMessage (status 'error'); every scenario runs on a "
    "MemorySaver thread (configurable.thread_id = session id, else 'thread-<scenario>'); "
    "see NOTES.md"
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
        "langfuse_base_url": ROOT_URL,
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
            "otlp_transport": "OTLP/HTTP JSON ("
            + ", ".join(sorted(State.content_types))
            + ") from @opentelemetry/exporter-trace-otlp-http via @langfuse/otel "
            + "LangfuseSpanProcessor, auth "
            + ", ".join(sorted(State.auth_headers))
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
