"""Capture an OpenAI Agents SDK (TypeScript) agent through OpenInference's JS instrumentation.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-openai-agents-openinference && npm ci --ignore-scripts && cd -
    # (how it was made: npm init -y; npm pkg set type=commonjs; then
    #  npm install --ignore-scripts @openai/agents@0.20.0 \
    #      @arizeai/openinference-instrumentation-openai-agents@0.2.15 zod@4.6.7
    #  npm install --ignore-scripts @opentelemetry/api@1.9.1 \
    #      @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/sdk-trace-base@2.12.1 \
    #      @opentelemetry/resources@2.12.1 @opentelemetry/exporter-trace-otlp-proto@0.223.1 \
    #      @arizeai/openinference-semantic-conventions@2.12.0
    #  npm install --ignore-scripts openai@7.59.0 @arizeai/openinference-core@2.7.1
    #  (the OTel JS 2.x line, as node-vercel-agent: the newest exporter, 0.301.x, wants
    #  api >=1.10; openai and openinference-core are the versions @openai/agents and the
    #  instrumentation pull in, named because agent.mjs imports them). node_modules/ is
    #  git-ignored. @openai/agents declares engines node >=22; it runs on Node 20 with a
    #  warning.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-openai-agents-js-openinference
    /tmp/cap-openai-agents-js-openinference/bin/pip install opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-openai-agents-js-openinference/bin/python \
        tests/golden/capture/openai_agents_js_openinference.py [scenario ...]'

(As installed on 2026-11-28: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2,
protobuf 7.36.2; Node v20.20.2, npm 11.19.1; the Node package versions are written into
each ``.expected.json``.) ``unshare -rn`` with only loopback up: nothing can leave the
machine (the SDK's default exporter to OpenAI's tracing backend is replaced anyway).

The agent itself is ``tests/golden/capture/node-openai-agents-openinference/agent.mjs``:
``new Agent({name: "music_store_support", instructions, model: new
OpenAIChatCompletionsModel(new OpenAI({baseURL}), "scripted-support-model"), tools})`` of
``@openai/agents`` 0.20 with five ``tool({name, description, parameters: zod, execute})``;
one ``run(agent, text, {workflowName})`` per user turn. Instrumentation as its README shows
for ESM: ``new OpenAIAgentsInstrumentation({tracerProvider}).manuallyInstrument(agents)``
(exclusive mode: the OpenInference ``TracingProcessor`` replaces the SDK's processors) on a
``NodeTracerProvider`` (registered globally; default resource merged with ours) whose
``BatchSpanProcessor`` feeds the real ``OTLPTraceExporter`` of
``@opentelemetry/exporter-trace-otlp-proto``; after each turn the SDK's trace provider and
then the OTel provider are flushed. Content is on by both switches' defaults (the SDK's
``traceIncludeSensitiveData``, OpenInference's ``traceConfig``). The refused refund throws
inside the tool; the SDK's default tool error function answers the model "An error
occurred while running the tool. Please try again." and marks the function span "Error
running tool (non-fatal)" with the details redacted. multi_turn: the SDK's
``MemorySession`` (conversation memory) with ``groupId`` = the session id, and
OpenInference's ``setSession(context.active(), {sessionId})`` around each turn (the JS twin
of Python's ``using_session``).

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``) that is
everything the agent talks to: ``POST /v1/chat/completions`` (the scripted model,
``scripted_model.ChatCompletions``), ``POST /v1/traces`` (an OTLP/HTTP protobuf receiver:
each request body is kept as it came, one ``ExportTraceServiceRequest`` per SDK export),
``POST /store/<tool>`` (the store backend of ``common``, ``scripted_model.StoreEndpoint``:
the JS tools call it, so the trajectory is recorded by the tools as they run; a
``StoreError`` comes back as ``{"error": …}`` and the JS tool throws a ``StoreError`` with
that message), and ``/turn_start`` / ``/turn_end``.

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
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import received_otlp
import scripted_model
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

NODE_DIR = Path(__file__).resolve().parent / "node-openai-agents-openinference"
FOLDER = common.TRACES / "openai-agents-js-openinference"
SERVICE_NAME = "music-store-support-openai-agents-js"
WORKFLOW = "music store support turn"
NODE_PACKAGES = (
    "@openai/agents",
    "@openai/agents-core",
    "@openai/agents-openai",
    "openai",
    "@arizeai/openinference-instrumentation-openai-agents",
    "@arizeai/openinference-core",
    "@arizeai/openinference-semantic-conventions",
    "zod",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/sdk-trace-base",
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


SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
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
    "OpenAI Agents SDK for TypeScript (@openai/agents) Agent with five tool() tools (zod "
    "schemas) and OpenAIChatCompletionsModel over a scripted loopback Chat Completions server; "
    "spans by @arizeai/openinference-instrumentation-openai-agents (its TracingProcessor, "
    "exclusive, manuallyInstrument(agents)) on a NodeTracerProvider, exported by the OTel JS "
    "SDK's OTLP/HTTP protobuf exporter to a loopback receiver (the .jsonl holds each received "
    "request); one run() per user turn with workflowName; the refused refund throws inside the "
    "tool: the SDK's default tool error function answers the model with a generic message and "
    "the function span says only 'Error running tool (non-fatal)' (details redacted); "
    "multi_turn: MemorySession + groupId = session id, session.id only through OpenInference's "
    "setSession() context around each turn; see NOTES.md"
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
        "otlp_url": f"{ROOT_URL}{received_otlp.TRACES_PATH}",
        "control_url": ROOT_URL,
        "workflow_name": WORKFLOW,
    }
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        "CAPTURE_CONFIG": json.dumps(config),
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
        # The SDK redacts the exception on the span (and the model gets a generic
        # "An error occurred while running the tool. Please try again.").
        tool_error_contains="Error running tool (non-fatal)",
        extra={
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(State.content_types))
            + ") from @opentelemetry/exporter-trace-otlp-proto (NodeTracerProvider)"
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
