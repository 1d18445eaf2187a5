"""Capture a VoltAgent agent through VoltAgent's own OpenTelemetry observability.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-voltagent && npm ci --ignore-scripts && cd -  # the lock file
    # (how it was made: npm init -y; npm pkg set type=commonjs; then
    #  npm install --ignore-scripts @voltagent/core@2.10.0 ai@6 @ai-sdk/openai-compatible@2 \
    #      zod@4 @opentelemetry/sdk-trace-base@2 @opentelemetry/exporter-trace-otlp-proto
    #  (the two OTel packages @voltagent/core's docs/observability/mlflow.md names for an
    #  extra OTLP exporter). node_modules/ is git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-voltagent
    /tmp/cap-voltagent/bin/pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -n sh -c 'ip link set lo up && \
        /tmp/cap-voltagent/bin/python tests/golden/capture/voltagent_agent.py [scenario ...]'

(As installed on 2026-11-27: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2,
protobuf 7.36.2; Node v20.20.2, npm 11.19.1; the Node package versions are written into
each ``.expected.json``.) The agent is ``tests/golden/capture/node-voltagent/agent.mjs``: a
VoltAgent ``Agent`` (name ``music_store_support``) with five ``createTool`` tools (zod
schemas), the model ``createOpenAICompatible({baseURL}).chatModel("scripted-support-model")``
(Chat Completions), registered in ``new VoltAgent({agents, observability})`` whose
observability is ``new VoltAgentObservability({serviceName, spanProcessors: [new
BatchSpanProcessor(new OTLPTraceExporter({url}))]})`` (the documented way to add an OTLP
exporter); ``observability.forceFlush()`` once per user turn. No VoltOps keys are set (its
remote processor stays idle). ``NODE_ENV=production`` keeps @voltagent/core from fetching
the models.dev registry at import (seen, and refused, under ``unshare -n``). The multi-turn
session is VoltAgent's ``conversationId`` (with ``userId``) passed to ``generateText``; the
single-turn scenarios pass neither.

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``): ``POST
/v1/chat/completions`` (``scripted_model.ChatCompletions``), ``POST /v1/traces`` (OTLP/HTTP
protobuf receiver, each request kept as it came), ``POST /store/<tool>``
(``scripted_model.StoreEndpoint``; a ``StoreError`` comes back as ``{"error": …}`` and the JS
tool throws a ``StoreError``), and ``/turn_start`` / ``/turn_end``.

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

NODE_DIR = Path(__file__).resolve().parent / "node-voltagent"
FOLDER = common.TRACES / "voltagent"
SERVICE_NAME = "music-store-support-voltagent"
NODE_PACKAGES = (
    "@voltagent/core",
    "@voltagent/internal",
    "ai",
    "@ai-sdk/openai-compatible",
    "@ai-sdk/provider",
    "@ai-sdk/provider-utils",
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
    "VoltAgent Agent (createTool tools) with @ai-sdk/openai-compatible's Chat Completions "
    "model over a scripted loopback server; VoltAgent's own OpenTelemetry observability "
    "(VoltAgentObservability) with the documented extra span processor (BatchSpanProcessor "
    "over @opentelemetry/exporter-trace-otlp-proto's OTLPTraceExporter) exporting to a "
    "loopback receiver (the .jsonl holds each received request); no VoltOps keys; the refused "
    "refund throws inside the tool; the multi-turn session is VoltAgent's conversationId "
    "(with userId); see NOTES.md"
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
        "otlp_endpoint": ROOT_URL,
        "control_url": ROOT_URL,
    }
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        "CAPTURE_CONFIG": json.dumps(config),
        # @voltagent/core starts a models.dev registry refresh (an HTTPS fetch) at import
        # unless NODE_ENV is "production"
        "NODE_ENV": "production",
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
            + ") from @opentelemetry/exporter-trace-otlp-proto in VoltAgentObservability's "
            "spanProcessors"
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
