"""Capture a Google ADK for TypeScript agent through ADK-JS's own OpenTelemetry tracing.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-adk-js && npm ci --ignore-scripts --legacy-peer-deps && cd -
    # (how it was made: npm init -y; npm pkg set type=commonjs; then
    #  npm install --ignore-scripts --legacy-peer-deps @google/adk@2.0.0 zod@4 \
    #      @opentelemetry/exporter-trace-otlp-proto@^0.205.0 @opentelemetry/api@1.9.0 \
    #      @opentelemetry/sdk-trace-base@^2.1.0 @opentelemetry/resources@^2.1.0
    #  (--legacy-peer-deps: @google/adk's optional peers, GCP exporters, MikroORM drivers,
    #  express, MCP, are not wanted). node_modules/ is git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-adk-js-otel
    /tmp/cap-adk-js-otel/bin/pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-adk-js-otel/bin/python tests/golden/capture/adk_js_otel.py [scenario ...]'

(As installed on 2026-11-28: @google/adk 2.0.0, @google/genai 2.32.0, zod 4.6.7,
@opentelemetry/api 1.9.0, sdk-trace-base / sdk-trace-node / resources 2.12.1,
exporter-trace-otlp-proto / otlp-transformer 0.205.0; Node v20.20.2, npm 11.19.1;
opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2, protobuf 7.36.2; the Node package
versions are written into each ``.expected.json``.) The agent is
``tests/golden/capture/node-adk-js/agent.mjs``: an ADK ``LlmAgent`` (name
``music_store_support``, a description, the store's system prompt as ``instruction``) with
the five store tools as ``FunctionTool``s (zod schemas, common's descriptions), run by
``InMemoryRunner`` (its in-memory session service: ``createSession`` then ``runAsync`` once
per user turn). The model is ADK's own ``Gemini`` model (``new Gemini({model, apiKey})``),
whose ``@google/genai`` client is pointed at this script's loopback server by the SDK's
``GOOGLE_GEMINI_BASE_URL`` (``scripted_model.GeminiGenerateContent``: non-streamed
``generateContent``, function calls without ids, as the Developer API sends them; ADK gives
each call an ``adk-<uuid>`` id). A refused refund is returned the ADK way (as ``adk.py``
does), ``{"status": "error", "error_message": "RefundWindowExpired: ..."}``. The one-shot
scenarios run in a fresh session with the id ADK generates (labelled null); ``multi_turn``
creates the session with the scenario's id (``sess-music-0001``).

Instrumentation: ADK-JS's tracing is built in (tracer ``gcp.vertex.agent``, spans
``invocation`` → ``invoke_agent <agent>`` → ``call_llm`` → ``execute_tool <tool>``); its
providers are set by ADK's own ``maybeSetOtelProviders`` (``telemetry/setup``), given one
extra hook, ``{spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({url}))]}`` with
``@opentelemetry/exporter-trace-otlp-proto`` (ADK's built-in exporter, switched on by
``OTEL_EXPORTER_OTLP_*_ENDPOINT``, speaks OTLP/HTTP JSON; the receiver here takes protobuf),
and a resource with ``service.name``. Content capture: ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS
=true`` (its default, set explicitly). The tracer provider is flushed once per user turn.

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``): ``POST
/v1beta/models/<model>:generateContent`` (the scripted model), ``POST /v1/traces`` (OTLP/HTTP
protobuf receiver, each request kept as it came), ``POST /store/<tool>``
(``scripted_model.StoreEndpoint``), and ``/turn_start`` / ``/turn_end``.

Files: ``.jsonl`` = each received request, ``MessageToDict(use_integers_for_enums=True)``
with hex ids; ``.pb`` = one request holding every span; ``.tree.txt`` = common's tree format.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import received_otlp
import scripted_model
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

NODE_DIR = Path(__file__).resolve().parent / "node-adk-js"
FOLDER = common.TRACES / "adk-js-otel"
SERVICE_NAME = "music-store-support-adk-js"
NODE_PACKAGES = (
    "@google/adk",
    "@google/genai",
    "zod",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/resources",
    "@opentelemetry/exporter-trace-otlp-proto",
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


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    State.requests.append(request)
    State.content_types.add(content_type)


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


MODEL_ENDPOINT = scripted_model.GeminiGenerateContent()
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.GeminiGenerateContent.PATH: MODEL_ENDPOINT,
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
    "Google ADK for TypeScript (@google/adk) LlmAgent with five FunctionTools (zod schemas), "
    "run by InMemoryRunner (in-memory session service), its Gemini model's @google/genai "
    "client pointed at a scripted Gemini Developer API loopback server "
    "(GOOGLE_GEMINI_BASE_URL); ADK's own OpenTelemetry tracing (tracer gcp.vertex.agent), "
    "providers set by ADK's maybeSetOtelProviders with a BatchSpanProcessor over "
    "@opentelemetry/exporter-trace-otlp-proto's OTLPTraceExporter to a loopback receiver "
    "(the .jsonl holds each received request); ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true; "
    "the refused refund is returned the ADK way, {status: error, error_message}; one-shot "
    "scenarios run in a fresh ADK session with a generated id (labelled null), multi_turn "
    "in the session whose id is the scenario's; see NOTES.md"
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
        "otlp_endpoint": ROOT_URL,
        "control_url": ROOT_URL,
    }
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        "CAPTURE_CONFIG": json.dumps(config),
        # the @google/genai client of ADK's Gemini model talks to the scripted server
        "GOOGLE_GEMINI_BASE_URL": ROOT_URL,
        # ADK's content-capture switch (its default is "true"; set as its docs show)
        "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "true",
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
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(State.content_types))
            + ") from @opentelemetry/exporter-trace-otlp-proto, a span processor passed to "
            "ADK's maybeSetOtelProviders",
            "telemetry_env": {"ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "true"},
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
