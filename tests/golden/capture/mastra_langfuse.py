"""Capture a Mastra agent through Mastra's own observability and its Langfuse exporter.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-mastra-langfuse && npm ci --ignore-scripts && cd -
    # (how it was made: npm init -y; npm pkg set type=commonjs name=mastra-langfuse; then
    #  npm install --ignore-scripts @mastra/core@1.71.0 @mastra/observability@1.17.9 \
    #      @mastra/langfuse@1.5.8 @mastra/memory@1.31.0 @ai-sdk/openai@4.0.118 zod@4.6.7
    #  (@mastra/langfuse 1.5.8 brings @langfuse/otel / @langfuse/client 5.11.1 and, as
    #  npm 11 installs peers, @opentelemetry/exporter-trace-otlp-http 0.223.1 and
    #  sdk-trace-base 2.12.1). The packages declare engines node >=22(.13); they run on
    #  Node 20 with a warning. node_modules/ is git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mastra-lf
    /tmp/cap-mastra-lf/bin/pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; \
        /tmp/cap-mastra-lf/bin/python tests/golden/capture/mastra_langfuse.py [scenario ...]'

(As installed on 2026-11-27: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2,
protobuf 7.36.2; Node v20.20.2, npm 11.19.1; the Node package versions are written into
each ``.expected.json``.) The agent itself is
``tests/golden/capture/node-mastra-langfuse/agent.mjs``: the Mastra ``Agent`` of
``node-mastra/agent.mjs`` (id and name ``music_store_support``, five ``createTool`` tools,
``createOpenAI({baseURL}).chat("scripted-support-model")`` of ``@ai-sdk/openai``, ``Memory``
on ``InMemoryStore``), registered in a ``Mastra`` whose ``observability`` is ``new
Observability({configs: {langfuse: {serviceName, exporters: [new LangfuseExporter({publicKey:
"pk-lf-offline", secretKey: "sk-lf-offline", baseUrl: <loopback>, environment})]}}})`` (the
documented setup). The exporter converts each ended Mastra span (its ``SpanConverter``, GenAI
semconv 1.38 format, shared with @mastra/otel-exporter), maps Mastra attributes to
``langfuse.*`` / ``session.id``, and hands it to @langfuse/otel's ``LangfuseSpanProcessor``,
whose own ``OTLPTraceExporter`` (@opentelemetry/exporter-trace-otlp-http, OTLP/HTTP **JSON**)
posts to ``<baseUrl>/api/public/otel/v1/traces``. The session id goes where the exporter
takes it from: Mastra's memory thread (``memory: {thread: <session id>, resource}``, only in
multi_turn; the other scenarios run without a thread). The agent calls
``observability.flush()`` once per user turn. ``MASTRA_TELEMETRY_DISABLED=1`` keeps Mastra's
PostHog usage telemetry off.

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``) that is
everything the agent talks to: ``POST /v1/chat/completions`` (the scripted model,
``scripted_model.ChatCompletions``), ``POST /api/public/otel/v1/traces`` (an OTLP/HTTP JSON
receiver, below: each request body is parsed into an ``ExportTraceServiceRequest``, its hex ids
turned into bytes), ``POST /store/<tool>`` (``scripted_model.StoreEndpoint``: the JS tools call
it, so the trajectory is recorded by the tools as they run; a ``StoreError`` comes back as
``{"error": …}`` and the JS tool throws a ``StoreError`` with that message), and
``/turn_start`` / ``/turn_end``. Any other path (e.g. Langfuse's JSON ingestion API) gets a
404. Node runs with a minimal environment (no ``OTEL_*`` or ``LANGFUSE_*`` variables).

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

NODE_DIR = Path(__file__).resolve().parent / "node-mastra-langfuse"
FOLDER = common.TRACES / "mastra-langfuse"
SERVICE_NAME = "music-store-support-mastra-langfuse"
LANGFUSE_OTLP_PATH = "/api/public/otel/v1/traces"
NODE_PACKAGES = (
    "@mastra/core",
    "@mastra/observability",
    "@mastra/langfuse",
    "@mastra/otel-exporter",
    "@mastra/memory",
    "@ai-sdk/openai",
    "@ai-sdk/provider",
    "@ai-sdk/provider-utils",
    "zod",
    "@langfuse/otel",
    "@langfuse/client",
    "@langfuse/core",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/core",
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
        candidate = NODE_DIR / "node_modules" / package / "package.json"
        if candidate.exists():
            found[package] = json.loads(candidate.read_text())["version"]
    found.update(common.versions("opentelemetry-proto", "protobuf"))
    return found


NOTES = (
    "Mastra Agent (createTool tools, Memory on InMemoryStore) with @ai-sdk/openai's "
    "Chat Completions model over a scripted loopback server; Mastra's own tracing "
    "(@mastra/observability) exported by @mastra/langfuse's LangfuseExporter (dummy keys), "
    "i.e. @langfuse/otel's LangfuseSpanProcessor with its own OTLP/HTTP JSON exporter, to a "
    "loopback receiver at <baseUrl>/api/public/otel/v1/traces (the .jsonl holds each received "
    "request, parsed); the refused refund throws inside the tool; only multi_turn runs on a "
    "memory thread (thread = session id, which the exporter maps to session.id); see NOTES.md"
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
        "MASTRA_TELEMETRY_DISABLED": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        **({"CAPTURE_DEBUG": "1"} if os.environ.get("CAPTURE_DEBUG") else {}),
    }
    proc = subprocess.run(["node", "agent.mjs"], check=False, cwd=NODE_DIR, env=env, timeout=300)
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
            + ") from @opentelemetry/exporter-trace-otlp-http via @mastra/langfuse "
            + "LangfuseExporter (@langfuse/otel LangfuseSpanProcessor), auth "
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
