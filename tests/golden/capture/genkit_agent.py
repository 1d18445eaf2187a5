"""Capture a Firebase Genkit agent (``ai.defineAgent`` of ``genkit/beta``) through Genkit's own
OpenTelemetry spans, exported over OTLP/HTTP protobuf.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-genkit && npm ci --ignore-scripts && cd -  # the lock file
    # (how it was made: npm init -y; npm pkg set type=commonjs; then
    #  npm install --ignore-scripts genkit@1.42.0 @genkit-ai/compat-oai@1.42.0
    #  npm install --ignore-scripts @opentelemetry/exporter-trace-otlp-proto@0.52.1 \
    #      @opentelemetry/sdk-trace-base@1.25.1 @opentelemetry/resources@1.25.1
    #  (the OTel JS line @genkit-ai/core itself pins: sdk-node 0.52, sdk-trace-base ~1.25;
    #  npm also installs @genkit-ai/firebase and -google-cloud, optional deps of
    #  @genkit-ai/core that load only with ENABLE_FIREBASE_MONITORING=true). node_modules/ is
    #  git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-genkit
    /tmp/cap-genkit/bin/pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -n sh -c 'ip link set lo up && \
        /tmp/cap-genkit/bin/python tests/golden/capture/genkit_agent.py [scenario ...]'

(As installed on 2026-11-27: opentelemetry-sdk 1.45.2, opentelemetry-proto 1.45.2,
protobuf 7.36.2; Node v20.20.2, npm 11.19.1; the Node package versions are written into
each ``.expected.json``.) ``unshare -n`` with only loopback up: nothing can leave the machine.
The script is ``genkit_agent.py``, not ``genkit.py`` (no Python package of that name is
involved, but the convention of the other scripts is kept).

The agent itself is ``tests/golden/capture/node-genkit/agent.mjs``: ``genkit({plugins:
[openAICompatible({name: "scripted", baseURL, apiKey, maxRetries: 0})]})`` (the
@genkit-ai/compat-oai plugin, i.e. the ``openai`` JS SDK, Chat Completions), five
``ai.defineTool({name, description, inputSchema: zod, outputSchema: z.any()}, fn)`` tools, and
``ai.defineAgent({name: "music_store_support", model: "scripted/scripted-support-model",
system, tools, store: new InMemorySessionStore()})`` (genkit/beta, Genkit 1.42's session/chat
mechanism: a prompt wired into the multi-turn agent runtime); one ``agent.chat(init)`` per
scenario and one ``chat.send(text)`` per user turn. multi_turn passes ``{sessionId:
"sess-music-0001"}``; the other scenarios let Genkit pick a random session id. Telemetry:
``await enableTelemetry({resource, autoDetectResources: false, spanProcessors:
[BatchSpanProcessor(OTLPTraceExporter({url}))]})`` of ``genkit/tracing`` before any span (its
argument is the configuration of the OpenTelemetry ``NodeSDK`` Genkit starts itself), then
``flushTracing()`` once per user turn. ``GENKIT_ENV`` is unset (production: no reflection
server / dev UI, and Genkit's own telemetry-server exporter sends nothing without
``GENKIT_TELEMETRY_SERVER``).

Genkit's agent streams its model calls (``generateStream``), so the compat-oai model sends
``stream: true``: the scripted Chat Completions endpoint here (``StreamingChatCompletions``)
answers such a request with the same scripted response as server-sent
``chat.completion.chunk`` events (a role+content/tool-calls chunk, a finish chunk, a usage
chunk, ``[DONE]``). A tool that throws would fail the whole Genkit ``generate`` (only
interrupts are caught), so the refused refund is *returned* to the model as ``{"error": …}``.

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``) that is
everything the agent talks to: ``POST /v1/chat/completions`` (the scripted model),
``POST /v1/traces`` (an OTLP/HTTP protobuf receiver: each request body is kept as it came,
one ``ExportTraceServiceRequest`` per SDK export), ``POST /store/<tool>`` (the store backend
of ``common``, ``scripted_model.StoreEndpoint``: the JS tools call it, so the trajectory is
recorded by the tools as they run), and ``/turn_start`` / ``/turn_end``.

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

Body = scripted_model.Body

NODE_DIR = Path(__file__).resolve().parent / "node-genkit"
FOLDER = common.TRACES / "genkit"
SERVICE_NAME = "music-store-support-genkit"
NODE_PACKAGES = (
    "genkit",
    "@genkit-ai/core",
    "@genkit-ai/ai",
    "@genkit-ai/compat-oai",
    "openai",
    "zod",
    "@opentelemetry/api",
    "@opentelemetry/sdk-node",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/resources",
    "@opentelemetry/exporter-trace-otlp-proto",
    "@opentelemetry/otlp-transformer",
)


def sse_chunks(response: Body) -> list[Body]:
    """A scripted Chat Completions response as the ``chat.completion.chunk`` events of a
    stream: the message (role, content, tool calls with ids, names and whole arguments),
    then the finish reason, then the usage (``stream_options.include_usage``)."""
    choice = response["choices"][0]
    message = choice["message"]
    delta: dict[str, object] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": k, **call} for k, call in enumerate(message["tool_calls"])]
    base = {
        "id": response["id"],
        "object": "chat.completion.chunk",
        "created": response["created"],
        "model": response["model"],
    }
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**base, "choices": [], "usage": response["usage"]},
    ]


class StreamingChatCompletions(scripted_model.ChatCompletions):
    """``scripted_model.ChatCompletions`` that also answers ``stream: true`` requests (as
    server-sent events carrying the same scripted response); non-streaming as before."""

    def __call__(self, request: scripted_model.Request) -> scripted_model.Reply:
        body = request.json()
        if not body.get("stream"):
            return super().__call__(request)
        self.requests.append(body)
        events = "".join(
            f"data: {json.dumps(chunk)}\n\n" for chunk in sse_chunks(self.answer(body))
        )
        return scripted_model.Reply(
            (events + "data: [DONE]\n\n").encode(), content_type="text/event-stream"
        )


MODEL = StreamingChatCompletions()


class State:
    """What the loopback server received for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    turn_marks: ClassVar[list[int]] = []  # index into requests at each turn start
    turn_traces: ClassVar[list[str]] = []
    finals: ClassVar[list[str | None]] = []
    run_errors: ClassVar[list[str]] = []
    content_types: ClassVar[set[str]] = set()
    session_ids: ClassVar[list[str | None]] = []


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
    State.session_ids.append(body.get("session_id"))
    if body.get("error"):
        State.run_errors.append(body["error"])
    State.turn_traces.extend(received_otlp.ids_of(State.requests[State.turn_marks[-1] :]))
    return scripted_model.Reply.json({})


SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
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
    "Firebase Genkit 1.42 agent (ai.defineAgent of genkit/beta with InMemorySessionStore; "
    "five ai.defineTool tools) with @genkit-ai/compat-oai's openAICompatible plugin (Chat "
    "Completions, streamed: answered as server-sent events) over a scripted loopback server; "
    "Genkit's own spans (tracer genkit-tracer, genkit:* attributes) from the NodeSDK Genkit "
    "starts, given an OTLP/HTTP protobuf BatchSpanProcessor through enableTelemetry() of "
    "genkit/tracing, exported to a loopback receiver (the .jsonl holds each received "
    "request); one agent.chat() per scenario, chat.send() per turn; the refused refund is "
    "returned to the model as {error} (a throwing Genkit tool fails the whole generate); "
    "session id as genkit:metadata:agent:sessionId on the agent span (random for one-shot "
    "scenarios); see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    State.requests, State.turn_marks = [], []
    State.turn_traces, State.finals, State.run_errors = [], [], []
    State.session_ids = []
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
        "GENKIT_ENV": "prod",  # Genkit's default: no reflection server, no dev-UI telemetry
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
            + ") from @opentelemetry/exporter-trace-otlp-proto via genkit/tracing "
            "enableTelemetry (Genkit's NodeSDK)",
            "session_ids_reported": State.session_ids,
            "streamed_model_requests": sum(1 for r in MODEL.requests if r.get("stream")),
            "model_requests": len(MODEL.requests),
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
