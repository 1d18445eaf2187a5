"""Capture Vercel AI SDK ``generateText`` (multi-step tool loop) through the AI SDK's
OpenTelemetry integration, converted to OpenInference by Arize's ``@arizeai/openinference-vercel``.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-vercel-openinference && npm ci --ignore-scripts && cd -
    # (the lock file pins every package)
    # (how it was made: npm init -y; npm pkg set type=commonjs; then
    #  npm install --ignore-scripts ai@7.0.173 @ai-sdk/openai@4.0.118 zod@4.6.7 \
    #      @ai-sdk/otel@1.0.173 @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@1.30.1 \
    #      @opentelemetry/sdk-trace-base@1.30.1 @opentelemetry/resources@1.30.1 \
    #      @opentelemetry/exporter-trace-otlp-proto@0.57.2 @arizeai/openinference-vercel@3.2.1
    #  (SDK 1.x: the processor finds the root by ``parentSpanId``, which SDK 2.x dropped)
    #  npm install --ignore-scripts @arizeai/openinference-core@2.7.1
    #  node_modules/ is git-ignored. `ai`, the @ai-sdk packages and openinference-vercel 3 declare
    #  engines node >=22; they run on Node 20 with a warning.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-vercel-oi
    /tmp/cap-vercel-oi/bin/pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -n sh -c 'ip link set lo up && \
        /tmp/cap-vercel-oi/bin/python \\
            tests/golden/capture/vercel_ai_openinference.py [scenario ...]'

(As installed on 2026-11-27: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2,
protobuf 7.36.2; Node v20.20.2, npm 11.19.1; the Node package versions are written into
each ``.expected.json``.) ``unshare -n`` with only loopback up: nothing can leave the machine.

The agent is ``tests/golden/capture/node-vercel-openinference/agent.mjs``: per user turn one
``generateText({model: createOpenAI({baseURL}).chat("scripted-support-model"), system, messages,
tools, stopWhen: stepCountIs(10), maxRetries: 0, experimental_telemetry: {isEnabled: true,
functionId: "music_store_support"}})`` of ``ai`` 7 with five ``tool({description, inputSchema:
zod, execute})``; the history grows by the user text and ``result.responseMessages``. Spans:
``registerTelemetry(new OpenTelemetry({...}))`` of ``@ai-sdk/otel`` with the options the
openinference-vercel README recommends, on a ``NodeTracerProvider`` (registered globally) whose
only span processor is ``OpenInferenceBatchSpanProcessor({exporter: OTLPTraceExporter})`` of
``@arizeai/openinference-vercel`` (no span filter, as the README's standalone example), which
adds the OpenInference attributes at ``onEnd`` before export; ``forceFlush()`` once per turn.
Session id (multi_turn only): the README's documented way, ``context.with(setSession(
context.active(), {sessionId}), () => generateText(...))`` of ``@arizeai/openinference-core``;
the processor's ``propagateContextAttributes`` (default on) copies ``session.id`` onto each span.

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

NODE_DIR = Path(__file__).resolve().parent / "node-vercel-openinference"
FOLDER = common.TRACES / "vercel-ai-openinference"
SERVICE_NAME = "music-store-support-vercel-openinference"
NODE_PACKAGES = (
    "ai",
    "@ai-sdk/otel",
    "@ai-sdk/openai",
    "@ai-sdk/provider",
    "@ai-sdk/provider-utils",
    "zod",
    "@arizeai/openinference-vercel",
    "@arizeai/openinference-core",
    "@arizeai/openinference-genai",
    "@arizeai/openinference-semantic-conventions",
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
    "Vercel AI SDK 7 generateText with tools and stopWhen: stepCountIs(10) (tool() tools with "
    "zod schemas) with @ai-sdk/openai's Chat Completions model over a scripted loopback server; "
    "spans by the OpenTelemetry integration of @ai-sdk/otel (registerTelemetry) converted to "
    "OpenInference attributes by @arizeai/openinference-vercel's OpenInferenceBatchSpanProcessor "
    "on a NodeTracerProvider, exported by the OTel JS SDK's OTLP/HTTP protobuf exporter to a "
    "loopback receiver (the .jsonl holds each received request); experimental_telemetry "
    "{isEnabled, functionId}; the refused refund throws inside the tool (the SDK turns it into a "
    "tool-error result for the model); multi-turn history is passed as generateText({messages}); "
    "session id via openinference-core setSession on the context (the processor copies "
    "session.id onto every span); see NOTES.md"
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
        extra={
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(State.content_types))
            + ") from @opentelemetry/exporter-trace-otlp-proto (NodeTracerProvider, "
            "OpenInferenceBatchSpanProcessor)"
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
