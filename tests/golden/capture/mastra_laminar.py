"""Capture a Mastra agent through Mastra's own observability and its Laminar exporter.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-mastra-laminar && npm ci --ignore-scripts && cd -  # the lock file
    # (how it was made: npm init -y; npm pkg set type=commonjs name=mastra-laminar; then
    #  npm install --ignore-scripts @mastra/core@1.71.0 @mastra/laminar@1.3.2 \
    #      @mastra/memory@1.31.0 @ai-sdk/openai@4.0.118 zod@4.6.7 @mastra/observability@1.15.2
    #  (@mastra/laminar 1.3.2, the newest, pins @mastra/observability 1.15.2 and brings
    #  @opentelemetry/exporter-trace-otlp-proto 0.218.0, sdk-trace-base / resources 2.12.1).
    #  The packages declare engines node >=22.13; they run on Node 20 with a warning.
    #  node_modules/ is git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mastra-laminar
    /tmp/cap-mastra-laminar/bin/pip install opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; \
        /tmp/cap-mastra-laminar/bin/python tests/golden/capture/mastra_laminar.py [scenario ...]'

(As installed on 2026-11-28: opentelemetry-sdk / -proto / -exporter-otlp-proto-common 1.45.2,
protobuf 7.36.2, as written into each ``.expected.json``; Node v20.20.2, npm 11.19.1; the Node
package versions are written into each ``.expected.json``.) The agent itself is
``tests/golden/capture/node-mastra-laminar/agent.mjs``: the Mastra ``Agent`` of
``node-mastra-arize/agent.mjs`` (id and name ``music_store_support``, five ``createTool``
tools with zod schemas and the store's descriptions, ``createOpenAI({baseURL}).chat(
"scripted-support-model")`` of ``@ai-sdk/openai`` (Chat Completions), ``Memory`` on
``InMemoryStore``), registered in a ``Mastra`` whose ``observability`` is ``new
Observability({configs: {laminar: {serviceName, exporters: [new LaminarExporter({apiKey,
baseUrl, endpoint})]}}})``, the "Explicit Configuration" of @mastra/laminar's README and
Mastra's Laminar exporter page: a dummy API key (sent as ``Authorization: Bearer``; the
loopback receiver checks nothing), ``baseUrl`` the loopback server (used only for scores,
none sent) and ``endpoint`` its ``/v1/traces``. ``LaminarExporter`` (a ``BaseExporter`` of
@mastra/observability) turns each ended Mastra span into an OTel ``ReadableSpan`` carrying
Laminar's own keys (``lmnr.span.type`` LLM/TOOL/DEFAULT, ``lmnr.span.input`` /
``lmnr.span.output``, ``lmnr.span.path`` / ``ids_path``, Mastra's metadata as
``lmnr.association.properties.metadata.<key>``, ``gen_ai.system`` / ``request.model`` /
``response.model`` / ``usage.*`` on the model-generation span only) and hands it to a
``BatchSpanProcessor`` over @opentelemetry/exporter-trace-otlp-proto (OTLP/HTTP protobuf).
Mastra records inputs and outputs by default (no content switch to turn on). The session
id goes where the stack of ``mastra_arize.py`` puts it: Mastra's memory thread (``memory:
{thread: <session id>, resource}``, only in multi_turn; the other scenarios run without a
thread). @mastra/observability 1.15.2 has no ``flush()`` on the registry: the agent calls
``observability.getDefaultInstance().flush()`` once per user turn (it awaits the in-flight
span handlers, then each exporter's ``flush()``, the processor's ``forceFlush()``).
``MASTRA_TELEMETRY_DISABLED=1`` keeps Mastra's PostHog usage telemetry off.

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``) that is
everything the agent talks to: ``POST /v1/chat/completions`` (the scripted model,
``scripted_model.ChatCompletions``), ``POST /v1/traces`` (an OTLP/HTTP protobuf receiver:
each request body is kept as it came, one ``ExportTraceServiceRequest`` per SDK export),
``POST /store/<tool>`` (the store backend of ``common``, ``scripted_model.StoreEndpoint``:
the JS tools call it, so the trajectory is recorded by the tools as they run; a
``StoreError`` comes back as ``{"error": …}`` and the JS tool throws a ``StoreError`` with
that message), and ``/turn_start`` / ``/turn_end``. Node runs with a minimal environment
(no ``OTEL_*``, ``LMNR_*`` or ``LAMINAR_*`` variables).

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

NODE_DIR = Path(__file__).resolve().parent / "node-mastra-laminar"
FOLDER = common.TRACES / "mastra-laminar"
SERVICE_NAME = "music-store-support-mastra-laminar"
NODE_PACKAGES = (
    "@mastra/core",
    "@mastra/observability",
    "@mastra/laminar",
    "@mastra/memory",
    "@ai-sdk/openai",
    "@ai-sdk/provider",
    "@ai-sdk/provider-utils",
    "zod",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/resources",
    "@opentelemetry/exporter-trace-otlp-proto",
    "@opentelemetry/otlp-transformer",
    "@opentelemetry/semantic-conventions",
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
    "Mastra Agent (createTool tools, Memory on InMemoryStore) with @ai-sdk/openai's "
    "Chat Completions model over a scripted loopback server; Mastra's own tracing "
    "(@mastra/observability) exported by @mastra/laminar's LaminarExporter (explicit "
    "configuration: dummy apiKey, baseUrl, endpoint), Laminar's own span keys (lmnr.span.*, "
    "lmnr.association.properties.*), OTLP/HTTP protobuf to a loopback receiver (the .jsonl "
    "holds each received request); the refused refund throws inside the tool; only "
    "multi_turn runs on a memory thread (thread = session id); see NOTES.md"
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
        "otlp_traces_url": ROOT_URL + received_otlp.TRACES_PATH,  # used as given
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
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(State.content_types))
            + ") from @opentelemetry/exporter-trace-otlp-proto via @mastra/laminar"
            + " LaminarExporter (BatchSpanProcessor)"
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
