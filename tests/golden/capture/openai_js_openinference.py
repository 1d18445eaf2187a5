"""Capture a hand-written OpenAI-client tool loop in JavaScript traced by OpenInference JS.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-openai-js-openinference && npm ci --ignore-scripts && cd -
    # (how it was made, 2026-11-28: npm init -y; npm pkg set type=commonjs; then
    #  npm install --ignore-scripts openai@7.59.0 \
    #      @arizeai/openinference-instrumentation-openai@4.2.7 \
    #      @arizeai/openinference-semantic-conventions@2.12.0 \
    #      @arizeai/openinference-core@2.7.1 @opentelemetry/api@1.9.1 \
    #      @opentelemetry/exporter-trace-otlp-proto@0.223.1 @opentelemetry/resources@2.12.1 \
    #      @opentelemetry/sdk-trace-base@2.12.1 @opentelemetry/sdk-trace-node@2.12.1 \
    #      @opentelemetry/instrumentation@0.223.0
    #  (the OTel JS 2.x line of node-openai-agents-openinference; some dependencies declare
    #  node >=22 and warn). node_modules/ is git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-openai-js-openinference
    /tmp/cap-openai-js-openinference/bin/pip install opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-openai-js-openinference/bin/python \
        tests/golden/capture/openai_js_openinference.py [scenario ...]'

(As installed: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2, protobuf 7.36.2; Node
v20.20.2, npm 11.19.1; the Node package versions are written into each ``.expected.json``.)
``unshare -rn`` with only loopback up: nothing can leave the machine.

No agent framework. The agent is ``tests/golden/capture/node-openai-js-openinference/agent.cjs``:
the loop of ``openai_js_traceloop.py`` (``openai_client_laminar.py`` ported to JavaScript). A
``SupportAgent`` keeps the conversation (system prompt, then every message, across the turns
of ``multi_turn``); per user turn it calls ``client.chat.completions.create`` (the official
``openai`` 7.x client, non-streaming, against the scripted loopback server,
``scripted_model.ChatCompletions``) with the five tools of ``common`` (descriptions and
JSON-schema parameters), appends the assistant message, runs each ``tool_call`` in order
(sequentially, also the two calls of ``parallel_calls``; the tools are plain functions, not
traced) and appends one ``tool`` message per call, until the model answers without tool
calls. The refused refund throws a ``StoreError`` inside its tool; the loop catches it and
sends ``"Error: RefundWindowExpired: ..."`` back as the tool message.

Instrumentation, as the README of ``@arizeai/openinference-instrumentation-openai`` shows: a
``NodeTracerProvider`` registered globally (default resource merged with ours) whose
``BatchSpanProcessor`` feeds the real ``OTLPTraceExporter`` of
``@opentelemetry/exporter-trace-otlp-proto``, then ``registerInstrumentations({instrumentations:
[new OpenAIInstrumentation()]})`` before ``require("openai")`` (CommonJS: its require hook
patches ``openai`` ^5/^6/^7). Content: OpenInference's trace-config defaults (inputs, outputs,
messages recorded; nothing hidden). Each user turn is a user span named ``music_store_support``
started with ``tracer.startActiveSpan`` (``openinference.span.kind=AGENT``, ``agent.name``,
``input.value`` / ``output.value``), active around the loop, so the ``OpenAI Chat
Completions`` spans are its children. Session (``multi_turn`` only): OpenInference's
``setSession(context.active(), {sessionId})`` around each turn (its OITracer copies
``session.id`` onto the LLM spans) and ``session.id`` on the turn span. After each turn the
provider is flushed (one OTLP request per turn).

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``) that is
everything the agent talks to: ``POST /v1/chat/completions`` (the scripted model),
``POST /v1/traces`` (``received_otlp.receiver``: each request body is kept as it came),
``POST /store/<tool>`` (``scripted_model.StoreEndpoint``: the JS tools call it, so the
trajectory is recorded by the tools as they run; a ``StoreError`` comes back as
``{"error": …}``), and ``/turn_start`` / ``/turn_end``. Node runs with a minimal environment
(no ``OTEL_*``).

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

NODE_DIR = Path(__file__).resolve().parent / "node-openai-js-openinference"
FOLDER = common.TRACES / "openai-js-openinference"
SERVICE_NAME = "music-store-support-openai-js-openinference"
NODE_PACKAGES = (
    "openai",
    "@arizeai/openinference-instrumentation-openai",
    "@arizeai/openinference-core",
    "@arizeai/openinference-semantic-conventions",
    "@opentelemetry/api",
    "@opentelemetry/instrumentation",
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
        candidate = NODE_DIR / "node_modules" / package / "package.json"
        if candidate.exists():
            found[package] = json.loads(candidate.read_text())["version"]
    found.update(common.versions("opentelemetry-proto", "protobuf"))
    return found


NOTES = (
    "hand-written Chat Completions tool loop in JavaScript (the loop of openai_js_traceloop.py; "
    "the official openai 7.x client over a scripted loopback server), traced by "
    "@arizeai/openinference-instrumentation-openai (registerInstrumentations, OpenInference "
    "trace-config defaults: content on) on a NodeTracerProvider whose BatchSpanProcessor feeds "
    "the OTel JS SDK's OTLP/HTTP protobuf exporter to a loopback receiver, flushed per turn; "
    "each turn in a user span 'music_store_support' (openinference.span.kind AGENT, agent.name, "
    "input.value/output.value); tools are plain functions (no tool spans); the refused refund "
    "throws inside its tool and the loop sends 'Error: RefundWindowExpired: ...' back; "
    "multi_turn: OpenInference's setSession() context (session.id); see NOTES.md"
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
        "tool_parameters": common.TOOL_PARAMETERS,
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
    proc = subprocess.run(["node", "agent.cjs"], check=False, cwd=NODE_DIR, env=env, timeout=300)
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
            + ") from @opentelemetry/exporter-trace-otlp-proto (NodeTracerProvider, "
            + "BatchSpanProcessor flushed per turn)",
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
