"""Capture the BeeAI Framework for TypeScript through @arizeai/openinference-instrumentation-beeai.

Not run in CI. Needs Node 20 + npm, and a Python venv of its own (never evald's)::

    cd tests/golden/capture/node-beeai-js && npm ci --ignore-scripts --legacy-peer-deps && cd -
    # (how it was made: npm init -y; then npm install --legacy-peer-deps --ignore-scripts
    #  beeai-framework@0.1.13 @arizeai/openinference-instrumentation-beeai@1.5.30
    #  @ai-sdk/openai@^1.3.13 zod@3 @opentelemetry/api @opentelemetry/sdk-trace-node
    #  @opentelemetry/sdk-trace-base @opentelemetry/resources @opentelemetry/instrumentation
    #  @opentelemetry/exporter-trace-otlp-proto. --legacy-peer-deps: beeai-framework's optional
    #  peers (@langchain/community, …) conflict with each other; none is used.
    #  node_modules/ is git-ignored.)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-beeai-js-openinference
    /tmp/cap-beeai-js-openinference/bin/pip install opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-beeai-js-openinference/bin/python \
        tests/golden/capture/beeai_js_openinference.py [scenario ...]'

(As installed on 2026-11-28; the Node package versions are written into each
``.expected.json``.) Why beeai-framework 0.1.13 and not the newest (0.1.30): the newest
@arizeai/openinference-instrumentation-beeai (1.5.30) patches only ``beeai-framework``
``>=0.1.9 <0.1.14`` (its ``INSTRUMENTS``; ``manuallyInstrument`` of 0.1.30 logs a
``DependencyConflict`` and patches nothing, so there would be no span at all); 0.1.13 is
the newest framework the newest instrumentation traces, and the version its peer
dependency names (``^0.1.13``).

The agent is ``tests/golden/capture/node-beeai-js/agent.cjs``: BeeAI's ``ToolCallingAgent``
(``meta.name`` ``music_store_support``, the system prompt as the ``instructions`` of its
system template, an ``UnconstrainedMemory``) with the five store tools as ``DynamicTool``s
(zod schemas, the descriptions of ``common.py``), its model BeeAI's ``OpenAIChatModel``
(the Vercel AI SDK's ``@ai-sdk/openai`` provider, ``baseURL`` the scripted Chat
Completions server of this script). One ``agent.run({prompt})`` per user turn. The
instrumentation is set up as its README shows: a ``NodeTracerProvider`` (registered) with a
``BatchSpanProcessor`` over ``@opentelemetry/exporter-trace-otlp-proto``'s
``OTLPTraceExporter`` to this script's loopback receiver, ``new
BeeAIInstrumentation({tracerProvider})`` and ``manuallyInstrument(require("beeai-framework"))``
before the agent modules are loaded; ``provider.forceFlush()`` after each turn. OpenInference
records inputs and outputs by default (its ``traceConfig`` hides nothing unless told).

ToolCallingAgent asks for ``tool_choice: "required"`` and ends its loop with its own
``final_answer`` tool (``{"response": <text>}``): the scripted model, like a provider
honouring ``required``, gives the script's final text as a ``final_answer`` call. The
calls of one response run one after the other (a ``for … await`` loop), so
``parallel_calls`` is two calls in one response run sequentially. The refused refund
throws a ``StoreError`` inside the tool; BeeAI wraps it in a ``ToolError`` and writes a
``ToolMessage`` with ``isError: true`` and ``e.explain()`` as its text.

``multi_turn``: one agent whose ``UnconstrainedMemory`` keeps the conversation between runs
(ToolCallingAgent saves its intermediate steps); the session id is OpenInference's context
attribute (``setSession`` of ``@arizeai/openinference-core``, ``context.with``) around each
run; ``agent.run`` returns a lazy ``Run`` that starts when awaited, so it is awaited inside
the ``context.with`` callback (returned un-awaited, it starts outside the context and no span
gets ``session.id``: seen, not captured). The instrumentation has no session option of its
own. BeeAI-JS has no telemetry of its own that phones home.

This script runs one loopback HTTP server (``scripted_model.LoopbackServer``): ``POST
/v1/chat/completions`` (``scripted_model.ChatCompletions`` with the ``final_answer`` rule
above), ``POST /v1/traces`` (OTLP/HTTP protobuf receiver, each request kept as it came),
``POST /store/<tool>`` (``scripted_model.StoreEndpoint``; a ``StoreError`` comes back as
``{"error": …}`` and the JS tool throws), and ``/turn_start`` / ``/turn_end``.

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

NODE_DIR = Path(__file__).resolve().parent / "node-beeai-js"
FOLDER = common.TRACES / "beeai-js-openinference"
SERVICE_NAME = "music-store-support-beeai-js"
FINAL_ANSWER_TOOL = "final_answer"  # ToolCallingAgent's own tool that ends its loop
NODE_PACKAGES = (
    "beeai-framework",
    "@arizeai/openinference-instrumentation-beeai",
    "@arizeai/openinference-core",
    "@arizeai/openinference-semantic-conventions",
    "ai",
    "@ai-sdk/openai",
    "zod",
    "@opentelemetry/api",
    "@opentelemetry/instrumentation",
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


def answer(body: scripted_model.Body) -> scripted_model.Body:
    """The script's next answer; when the request forces a tool call (``"required"`` or
    the ``final_answer`` function) the final text comes as a ``final_answer`` call, as a
    provider that honours the forced choice answers."""
    response = scripted_model.chat_completion(body)
    message = response["choices"][0]["message"]
    offered = {tool["function"]["name"] for tool in body.get("tools") or []}
    choice = body.get("tool_choice")
    forced = choice == "required" or isinstance(choice, dict)
    if forced and not message.get("tool_calls"):
        assert FINAL_ANSWER_TOOL in offered, offered
        script = common.active_script()
        message["tool_calls"] = [
            {
                "id": f"call_{script.scenario.name[:6]}_{script.turn}{script.step}0",
                "type": "function",
                "function": {
                    "name": FINAL_ANSWER_TOOL,
                    "arguments": json.dumps({"response": message["content"]}),
                },
            }
        ]
        message["content"] = None
        response["choices"][0]["finish_reason"] = "tool_calls"
    return response


MODEL = scripted_model.ChatCompletions(answer)
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
    "BeeAI Framework (TypeScript) ToolCallingAgent (meta.name music_store_support, "
    "DynamicTool tools, UnconstrainedMemory) with BeeAI's OpenAIChatModel (@ai-sdk/openai) "
    "over a scripted loopback Chat Completions server; @arizeai/openinference-instrumentation-"
    "beeai (manuallyInstrument) on a NodeTracerProvider, exported by the OTel JS SDK's "
    "OTLP/HTTP protobuf exporter to a loopback receiver (the .jsonl holds each received "
    "request); ToolCallingAgent forces tool_choice and ends with its own final_answer tool, "
    "so the scripted final text comes as a final_answer call; the refused refund throws "
    "inside the tool (BeeAI ToolError, a ToolMessage with isError); the multi-turn session "
    "is OpenInference's setSession context; see NOTES.md"
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
        "otlp_url": f"{ROOT_URL}/v1/traces",
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
            + ") from @opentelemetry/exporter-trace-otlp-proto in a NodeTracerProvider's "
            "BatchSpanProcessor",
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
