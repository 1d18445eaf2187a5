"""Capture a LangChain.js agent through @arizeai/openinference-instrumentation-langchain.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-langchainjs && npm ci && cd -  # the committed lock file
    # (how it was made: npm init -y, then
    #  npm install langchain@1.5.14 @langchain/core@1.4.0 @langchain/langgraph@1.7.3 \
    #      @langchain/openai@1.5.8 zod@4.6.7 \
    #      @arizeai/openinference-instrumentation-langchain@4.1.1 \
    #      @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.0 \
    #      @opentelemetry/sdk-trace-base@2.12.1 @opentelemetry/resources@2.12.1 \
    #      @opentelemetry/exporter-trace-otlp-proto@0.223.1; node_modules/ is git-ignored)
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
