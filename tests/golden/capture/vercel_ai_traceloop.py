"""Capture the Vercel AI SDK ``generateText`` agent traced by OpenLLMetry JS.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-vercel-ai-traceloop && npm ci --ignore-scripts && cd -
    # (the lock file pins every package; how it was made, 2026-11-28: npm init -y;
    #  npm pkg set type=commonjs; then
    #  npm install --ignore-scripts ai@7.0.173 @ai-sdk/openai@4.0.118 zod@4.6.7 \
    #      @ai-sdk/otel@1.0.173 @traceloop/node-server-sdk@0.27.0
    #  (the SDK brings @opentelemetry/sdk-node 0.203.0 and exporter-trace-otlp-proto 0.203.0;
    #  `ai`, the @ai-sdk packages and some Google Cloud dependencies declare node >=22 and
    #  warn). node_modules/ is git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-vercel-ai-traceloop
    /tmp/cap-vercel-ai-traceloop/bin/pip install opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-vercel-ai-traceloop/bin/python \
        tests/golden/capture/vercel_ai_traceloop.py [scenario ...]'

(As installed: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2, protobuf 7.36.2; Node
v20.20.2, npm 11.19.1; the Node package versions are written into each ``.expected.json``.)
``unshare -rn`` with only loopback up: nothing can leave the machine.

The agent is ``tests/golden/capture/node-vercel-ai-traceloop/agent.mjs``, the one of
``vercel_ai_openinference.py``: per user turn one ``generateText({model:
createOpenAI({baseURL}).chat("scripted-support-model"), system, messages, tools, stopWhen:
stepCountIs(10), maxRetries: 0, experimental_telemetry: {isEnabled: true, recordInputs: true,
recordOutputs: true, functionId: "music_store_support"}})`` of ``ai`` 7 with the five store
tools of ``common`` as ``tool({description, inputSchema: zod, execute})``; the history grows by
the user text and ``result.responseMessages``. The refused refund throws a ``StoreError`` inside
its tool (the SDK turns it into a tool-error result for the model).

Instrumentation, as OpenLLMetry JS's Vercel AI SDK docs show: ``traceloop.initialize({appName,
baseUrl: <loopback>, apiKey: "tl-offline", disableBatch: true, traceContent: true,
traceloopSyncEnabled: false})`` (the SDK's NodeSDK, a ``SimpleSpanProcessor`` and its own
OTLP/HTTP protobuf exporter to ``<baseUrl>/v1/traces``), whose span processor rewrites the AI
SDK's own spans (scope ``ai``) into its vocabulary. AI SDK 7 emits spans only through an
integration of ``@ai-sdk/otel``: ``registerTelemetry(new LegacyOpenTelemetry())``, the one that
emits the ``ai.*`` spans (``ai.generateText``, ``….doGenerate``, ``ai.toolCall``) OpenLLMetry
rewrites (the newer ``OpenTelemetry`` writes GenAI spans under scope ``gen_ai``, which
OpenLLMetry passes through untouched). Session (``multi_turn`` only): OpenLLMetry's association
properties, ``traceloop.withAssociationProperties({session_id}, () => generateText(...))``
(``traceloop.association.properties.session_id``). ``traceloop.forceFlush()`` once per user
turn.

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``) that is
everything the agent talks to: ``POST /v1/chat/completions`` (the scripted model,
``scripted_model.ChatCompletions``), ``POST /v1/traces`` (``received_otlp.receiver``: each
request body is kept as it came; the SimpleSpanProcessor sends one per span), ``POST
/store/<tool>`` (``scripted_model.StoreEndpoint``: the JS tools call it, so the trajectory is
recorded by the tools as they run; a ``StoreError`` comes back as ``{"error": …}``), and
``/turn_start`` / ``/turn_end``. Node runs with a minimal environment (no ``OTEL_*``, no
``TRACELOOP_*`` but ``TRACELOOP_TELEMETRY=false``).

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

NODE_DIR = Path(__file__).resolve().parent / "node-vercel-ai-traceloop"
FOLDER = common.TRACES / "vercel-ai-traceloop"
SERVICE_NAME = "music-store-support-vercel-ai-traceloop"
NODE_PACKAGES = (
    "ai",
    "@ai-sdk/otel",
    "@ai-sdk/openai",
    "@ai-sdk/provider",
    "@ai-sdk/provider-utils",
    "zod",
    "@traceloop/node-server-sdk",
    "@traceloop/ai-semantic-conventions",
    "@opentelemetry/api",
    "@opentelemetry/sdk-node",
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


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        MODEL.PATH: MODEL,
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
        if package == "@opentelemetry/sdk-trace-base":
            # the copy the SDK's NodeSDK runs on (npm nests 2.0.1 under sdk-node)
            nested = NODE_DIR / "node_modules/@opentelemetry/sdk-node/node_modules"
            candidates.insert(0, nested / package / "package.json")
        for candidate in candidates:
            if candidate.exists():
                found[package] = json.loads(candidate.read_text())["version"]
                break
    found.update(common.versions("opentelemetry-proto", "protobuf"))
    return found


NOTES = (
    "Vercel AI SDK 7 generateText with tools and stopWhen: stepCountIs(10) (tool() tools with "
    "zod schemas) with @ai-sdk/openai's Chat Completions model over a scripted loopback server; "
    "the AI SDK's own ai.* spans (registerTelemetry(new LegacyOpenTelemetry()) of @ai-sdk/otel; "
    "experimental_telemetry {isEnabled, recordInputs, recordOutputs, functionId: "
    "'music_store_support'}) rewritten by OpenLLMetry JS (@traceloop/node-server-sdk initialize, "
    "traceContent on, disableBatch: its SimpleSpanProcessor and OTLP/HTTP protobuf exporter to "
    "a loopback receiver, one request per span); the refused refund throws inside the tool (the "
    "SDK turns it into a tool-error result for the model); multi-turn history is passed as "
    "generateText({messages}); multi_turn: withAssociationProperties({session_id}); see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    State.requests, State.turn_marks = [], []
    State.turn_traces, State.finals, State.run_errors = [], [], []
    MODEL.requests.clear()
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
        "traceloop_base_url": ROOT_URL,
        "control_url": ROOT_URL,
    }
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        "CAPTURE_CONFIG": json.dumps(config),
        "TRACELOOP_TELEMETRY": "false",
        "NO_PROXY": "127.0.0.1,localhost",
        **({"CAPTURE_DEBUG": "1"} if os.environ.get("CAPTURE_DEBUG") else {}),
    }
    proc = subprocess.run(["node", "agent.mjs"], check=False, cwd=NODE_DIR, env=env, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: node exited {proc.returncode}")
    if State.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {State.content_types}")
    tool_messages_sent = [
        message["content"]
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
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
            + ") from @traceloop/node-server-sdk's OTLPTraceExporter "
            + "(@opentelemetry/exporter-trace-otlp-proto), SimpleSpanProcessor",
            "tool_messages_in_last_request": tool_messages_sent,
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
