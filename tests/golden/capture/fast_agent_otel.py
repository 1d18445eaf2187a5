"""Capture a fast-agent agent with MCP tools, traced by fast-agent's own OpenTelemetry support.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-fast-agent-otel
    /tmp/cap-fast-agent-otel/bin/python -m pip install fast-agent-mcp
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-fast-agent-otel/bin/python \
        tests/golden/capture/fast_agent_otel.py [scenario ...]'

As installed on 2026-11-28 (Python 3.12.1): fast-agent-mcp 0.10.48, mcp / mcp-types 2.3.0,
openai 3.37.0, opentelemetry-instrumentation-openai 0.62.4 (OpenLLMetry, a fast-agent
dependency), opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-sdk / -api 1.45.2,
opentelemetry-exporter-otlp-proto-http / -proto 1.45.1, protobuf 7.36.2. The network
namespace is a precaution: nothing was seen trying to leave the machine.

Writes ``tests/golden/traces/fast-agent-otel/``. A real ``FastAgent`` application
(``parse_cli_args=False``, ``quiet=True``) with one agent, ``@fast.agent(name=
"music_store_support", instruction=<system prompt>, servers=["music_store"], model=
"generic.scripted-support-model")``, whose only tools are the store's five tools from the
project's MCP server ``mcp_store_server.py`` (stdio, started by fast-agent from its
``mcp.servers`` config with this venv's python). The model is fast-agent's generic
OpenAI-compatible provider (``generic:`` ``base_url`` on this script's loopback Chat
Completions server). fast-agent always streams Chat Completions (``stream: true``), so the
scripted answer is sent as ``chat.completion.chunk`` server-sent events (the SSE form of
``llamaindex_traceai.py``); the scripted calls name the tools as the request offers them
(fast-agent namespaces MCP tools ``<server>__<tool>``). Each scenario is one
``async with fast.run() as app`` and one ``await app.music_store_support.send(text)`` per
user turn; multi-turn memory is the agent's own history (fast-agent keeps it across
``send`` calls). The refused refund raises ``ToolError`` in the MCP tool (``isError``
result), which fast-agent hands back to the model as the tool result.

Instrumentation, as fast-agent's docs show it: the ``otel:`` section of
``fastagent.config.yaml`` (``enabled: true``, ``otlp_endpoint:`` this script's loopback
receiver ``/v1/traces``, ``service_name: music-store-support-fast-agent``). fast-agent then
builds its own ``TracerProvider`` (``BatchSpanProcessor`` + OTLP/HTTP protobuf exporter),
sets it global and instruments the OpenAI client with OpenLLMetry's
``opentelemetry-instrumentation-openai`` (and google-genai's, unused here). fast-agent has
no content switch of its own; OpenLLMetry records prompts and completions unless
``TRACELOOP_TRACE_CONTENT=false``: set to ``true`` here, explicitly. fast-agent's own spans
(the run span named after the app, ``Agent: '<name>' generate`` per ``send``, ``MCP Tool:
<server>__<tool>`` per call) and the MCP SDK's client spans come from the same global
provider. The global provider is flushed after every user turn (``force_flush`` through the
OTel API). The MCP server exports its own spans (service ``music-store-mcp-server``) to the
same receiver when it exits, as in ``mcp_tools_openai_agents.py``.

The ``.jsonl`` holds every export request as received, in order.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, ClassVar

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "OPENAI_", "TRACELOOP_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
os.environ["TRACELOOP_TRACE_CONTENT"] = "true"  # OpenLLMetry's content switch (its default)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "fast-agent-otel"
SERVER_SCRIPT = SCRIPTS / "mcp_store_server.py"
MCP_SERVER_NAME = "music_store"
SERVICE = "music-store-support-fast-agent"
PACKAGES = (
    "fast-agent-mcp",
    "mcp",
    "mcp-types",
    "openai",
    "opentelemetry-instrumentation-openai",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-proto",
    "protobuf",
)


class Exports:
    """Every export request received (both processes), in order."""

    lock = threading.Lock()
    log: ClassVar[list[ExportTraceServiceRequest]] = []


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    with Exports.lock:
        Exports.log.append(request)


def _service(request: ExportTraceServiceRequest) -> str:
    for resource_spans in request.resource_spans:
        for attribute in resource_spans.resource.attributes:
            if attribute.key == "service.name":
                return str(attribute.value.string_value)
    return ""


def sse_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """A scripted Chat Completions response as the ``chat.completion.chunk`` events of a
    stream: the role and text, each tool call (index, id, name, whole arguments), the
    finish reason, then the usage (``stream_options.include_usage``)."""
    choice = response["choices"][0]
    message = choice["message"]
    base = {
        "id": response["id"],
        "object": "chat.completion.chunk",
        "created": response["created"],
        "model": response["model"],
    }
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": message.get("content")}]
    deltas += [
        {"tool_calls": [{"index": k, **call}]}
        for k, call in enumerate(message.get("tool_calls") or [])
    ]
    return [
        *({**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas),
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**base, "choices": [], "usage": response["usage"]},
    ]


def offered_names(body: dict[str, Any]) -> dict[str, str]:
    """The store tools' names as the request offers them (``music_store__refund`` ...)."""
    names: dict[str, str] = {}
    for tool in body.get("tools") or []:
        name = tool["function"]["name"]
        names[name.rsplit("__", 1)[-1]] = name
    return names


def scripted_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The script's next answer, its calls naming the tools as the request offers them."""
    response = scripted_model.chat_completion(body)
    names = offered_names(body)
    for call in response["choices"][0]["message"].get("tool_calls") or []:
        call["function"]["name"] = names[call["function"]["name"]]
    return response


class StreamingChatCompletions(scripted_model.ChatCompletions):
    """Chat Completions answering ``stream: true`` as server-sent events."""

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


MODEL = StreamingChatCompletions(scripted_answer)
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
        scripted_model.StoreEndpoint.PATH: scripted_model.StoreEndpoint(),
    }
)
ROOT_URL = SERVER.url
WORKDIR = Path(tempfile.mkdtemp(prefix="fast-agent-capture-"))
CONFIG = {
    "default_model": f"generic.{common.MODEL_NAME}",
    "logger": {"type": "none", "level": "error", "progress_display": False},
    "generic": {"api_key": "offline", "base_url": f"{ROOT_URL}/v1"},
    "otel": {
        "enabled": True,
        "service_name": SERVICE,
        "otlp_endpoint": f"{ROOT_URL}/v1/traces",
    },
    "mcp": {
        "servers": {
            MCP_SERVER_NAME: {
                "command": sys.executable,
                "args": [str(SERVER_SCRIPT)],
                "env": {
                    "STORE_URL": f"{ROOT_URL}/store",
                    "OTLP_TRACES_URL": f"{ROOT_URL}/v1/traces",
                    "PYTHONPATH": str(SCRIPTS),
                    "NO_PROXY": "127.0.0.1,localhost",
                },
            }
        }
    },
}
CONFIG_PATH = WORKDIR / "fastagent.config.yaml"
CONFIG_PATH.write_text(json.dumps(CONFIG, indent=2))  # JSON is YAML
os.environ["HOME"] = str(WORKDIR)
os.chdir(WORKDIR)

from fast_agent import FastAgent  # noqa: E402

NOTES = (
    "fast-agent FastAgent app with one agent (music_store_support) whose tools come from "
    "the project's MCP stdio server (namespaced music_store__<tool> by fast-agent); generic "
    "OpenAI-compatible provider over a scripted loopback Chat Completions server (streamed: "
    "answered as SSE chunks); traced by fast-agent's own otel: config (its provider, OTLP "
    "HTTP to a loopback receiver, OpenLLMetry's OpenAI instrumentation, "
    "TRACELOOP_TRACE_CONTENT=true); the MCP server exports its own spans. One fast.run() per "
    "scenario: its run span is the root of one trace holding every turn (multi_turn: the "
    "three turns in one trace). The refused refund raises ToolError in the MCP tool "
    "(isError result), handed to the model as the tool result."
)


def agent_trace_ids(requests: list[ExportTraceServiceRequest]) -> list[str]:
    return received_otlp.ids_of([r for r in requests if _service(r) == SERVICE])


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    Exports.log = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    fast = FastAgent("music store support", config_path=str(CONFIG_PATH), parse_cli_args=False,
                     quiet=True)  # fmt: skip

    @fast.agent(
        name=common.AGENT_NAME,
        instruction=common.SYSTEM_PROMPT,
        servers=[MCP_SERVER_NAME],
        model=f"generic.{common.MODEL_NAME}",
    )
    async def _agent() -> None:  # the decorator registers the agent
        return None

    async with fast.run() as app:
        agent = app[common.AGENT_NAME]
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
            finals.append(await agent.send(text))
            trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
            await asyncio.sleep(0.2)
            ids = agent_trace_ids(Exports.log)
            turn_traces.append(ids[-1])
    trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
    for _ in range(100):  # the server exports when it exits: wait for its request
        if any(_service(r) == "music-store-mcp-server" for r in Exports.log):
            break
        await asyncio.sleep(0.1)
    sources = [_service(r) for r in Exports.log]
    if "music-store-mcp-server" not in sources:
        raise SystemExit(f"{name}: no spans received from the MCP server")
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
        tool_error_contains="RefundWindowExpired",
        extra={
            "export_sources": sources,
            "mcp_server": {"name": MCP_SERVER_NAME, "transport": "stdio"},
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, list(Exports.log))


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    SERVER.shutdown()


if __name__ == "__main__":
    main()
