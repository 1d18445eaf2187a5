"""Capture a LastMile mcp-agent agent with MCP tools, traced by mcp-agent's own OpenTelemetry.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mcp-agent-otel
    /tmp/cap-mcp-agent-otel/bin/python -m pip install "mcp-agent[openai]" "mcp<2"
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mcp-agent-otel-server
    /tmp/cap-mcp-agent-otel-server/bin/python -m pip install mcp==2.3.0 opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-mcp-agent-otel/bin/python \
        tests/golden/capture/mcp_agent_otel.py [scenario ...]'

mcp-agent 0.2.6 imports ``mcp.server.fastmcp`` (mcp 1.x: with mcp 2.x it does not import),
so its venv pins ``mcp<2``; the project's MCP server is mcp 2.x (``MCPServer``) and runs on
the second venv's python (``MCP_SERVER_PYTHON`` overrides it).

As installed on 2026-11-28 (Python 3.12.1): mcp-agent 0.2.6, mcp 1.30.0 (mcp-types 2.3.0),
openai 3.57.0, opentelemetry-instrumentation-openai 0.62.4 (OpenLLMetry, an mcp-agent
dependency), opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-sdk / -api 1.45.2,
opentelemetry-exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2; the server's venv:
mcp 2.3.0, opentelemetry-sdk / -exporter-otlp-proto-http 1.45.2. The network namespace is a
precaution: nothing was seen trying to leave the machine.

Writes ``tests/golden/traces/mcp-agent-otel/``. A real ``MCPApp`` (``name=
"music_store_support_app"``, ``session_id=<the scenario's session id>``) configured by an
``mcp_agent.config.yaml`` in a scratch directory; one ``Agent(name="music_store_support",
instruction=<system prompt>, server_names=["music_store"])`` whose only tools are the
store's five tools from the project's MCP server ``mcp_store_server.py`` (stdio, started
by mcp-agent from ``mcp.servers.music_store`` with the server venv's python; mcp-agent
offers them to the model namespaced ``music_store_<tool>``), with ``OpenAIAugmentedLLM``
attached (``agent.attach_llm``). The model is the real ``openai`` client against this script's
loopback Chat Completions server (``openai.base_url``, ``openai.default_model``); the
scripted calls name the tools as the request offers them. One ``app.run()`` per scenario,
one ``await llm.generate_str(text)`` per user turn; multi-turn memory is the LLM's own
history (``use_history`` default true). The refused refund raises ``ToolError`` in the MCP
tool (``isError`` result), which mcp-agent hands to the model as the tool result.

Instrumentation, as mcp-agent's docs show it: the ``otel:`` section of
``mcp_agent.config.yaml`` (``enabled: true``, ``exporters: [{otlp: {endpoint: <loopback
receiver>/v1/traces}}]``, ``service_name: music-store-support-mcp-agent``). mcp-agent then
builds its own ``TracerProvider`` (``BatchSpanProcessor`` + OTLP/HTTP protobuf exporter,
resource ``session.id`` = the app's session id), sets it global and instruments the
OpenAI client with OpenLLMetry (its Anthropic instrumentation needs ``anthropic``, not
installed: mcp-agent logs that and goes on). mcp-agent's own spans always carry the
content (no switch); OpenLLMetry's switch ``TRACELOOP_TRACE_CONTENT`` is set to ``true``
explicitly. The global provider is flushed after every user turn (``force_flush`` through
the OTel API). mcp-agent sets the global provider only once per process, so each scenario
runs in a process of its own (``main`` starts this script once per scenario). The MCP server
exports its own spans (service ``music-store-mcp-server``) to the same receiver when it
exits, as in ``mcp_tools_openai_agents.py``. The app's own span (the trace's root) is never
exported: ``MCPApp.run`` ends it after ``MCPApp.cleanup()`` has shut the provider down.

The ``.jsonl`` holds every export request as received, in order.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
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

FOLDER = common.TRACES / "mcp-agent-otel"
SERVER_SCRIPT = SCRIPTS / "mcp_store_server.py"
MCP_SERVER_NAME = "music_store"
SERVICE = "music-store-support-mcp-agent"
SERVER_SERVICE = "music-store-mcp-server"
# mcp-agent 0.2.6 imports mcp 1.x (``mcp.server.fastmcp``); the project's server is mcp 2.x:
# it runs on a python of its own (a venv with mcp 2.3.0 and the OTLP exporter)
SERVER_PYTHON = os.environ.get("MCP_SERVER_PYTHON", "/tmp/cap-mcp-agent-otel-server/bin/python")
PACKAGES = (
    "mcp-agent",
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


def offered_names(body: dict[str, Any]) -> dict[str, str]:
    """The store tools' names as the request offers them (``music_store_refund`` ...)."""
    names: dict[str, str] = {}
    for tool in body.get("tools") or []:
        name = tool["function"]["name"]
        for store_tool in common.TOOL_DESCRIPTIONS:
            if name == store_tool or name.endswith(f"_{store_tool}"):
                names[store_tool] = name
    return names


def scripted_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The script's next answer, its calls naming the tools as the request offers them."""
    response = scripted_model.chat_completion(body)
    names = offered_names(body)
    for call in response["choices"][0]["message"].get("tool_calls") or []:
        call["function"]["name"] = names[call["function"]["name"]]
    return response


MODEL = scripted_model.ChatCompletions(scripted_answer)
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
        scripted_model.StoreEndpoint.PATH: scripted_model.StoreEndpoint(),
    }
)
ROOT_URL = SERVER.url
WORKDIR = Path(tempfile.mkdtemp(prefix="mcp-agent-capture-"))
CONFIG = {
    "execution_engine": "asyncio",
    "logger": {"type": "none", "level": "error", "progress_display": False},
    "openai": {
        "api_key": "offline",
        "base_url": f"{ROOT_URL}/v1",
        "default_model": common.MODEL_NAME,
    },
    "otel": {
        "enabled": True,
        "service_name": SERVICE,
        "exporters": [{"otlp": {"endpoint": f"{ROOT_URL}/v1/traces"}}],
    },
    "mcp": {
        "servers": {
            MCP_SERVER_NAME: {
                "command": SERVER_PYTHON,
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
CONFIG_PATH = WORKDIR / "mcp_agent.config.yaml"
CONFIG_PATH.write_text(json.dumps(CONFIG, indent=2))  # JSON is YAML
os.environ["HOME"] = str(WORKDIR)
os.chdir(WORKDIR)

from mcp_agent.agents.agent import Agent  # noqa: E402
from mcp_agent.app import MCPApp  # noqa: E402
from mcp_agent.workflows.llm.augmented_llm_openai import OpenAIAugmentedLLM  # noqa: E402

NOTES = (
    "LastMile mcp-agent MCPApp (session_id = the scenario's session) with one Agent "
    "(music_store_support, server_names=[music_store]) whose tools come from the project's "
    "MCP stdio server (namespaced music_store_<tool> by mcp-agent), OpenAIAugmentedLLM over a "
    "scripted loopback Chat Completions server (openai.base_url); one generate_str per user "
    "turn, history kept by the LLM; traced by mcp-agent's own otel: config (its provider, "
    "OTLP HTTP exporter to a loopback receiver, OpenLLMetry's OpenAI instrumentation, "
    "TRACELOOP_TRACE_CONTENT=true); the MCP server exports its own spans. The refused "
    "refund raises ToolError in the MCP tool (isError result), handed to the model as the "
    "tool result."
)


def turn_trace(requests: list[ExportTraceServiceRequest]) -> str:
    """The trace of the span that ended last in this turn's exports (the turn's own span)."""
    spans = received_otlp.all_spans(
        received_otlp.merged([r for r in requests if _service(r) == SERVICE])
    )
    return str(max(spans, key=lambda span: span.end_time_unix_nano).trace_id.hex())


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    Exports.log = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    app = MCPApp(
        name="music_store_support_app", settings=str(CONFIG_PATH), session_id=scenario.session_id
    )
    async with app.run():
        agent = Agent(
            name=common.AGENT_NAME,
            instruction=common.SYSTEM_PROMPT,
            server_names=[MCP_SERVER_NAME],
        )
        async with agent:
            llm = await agent.attach_llm(OpenAIAugmentedLLM)
            for turn, text in enumerate(scenario.user_inputs):
                script.start_turn(turn)
                before = len(Exports.log)
                finals.append(await llm.generate_str(message=text))
                trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
                await asyncio.sleep(0.2)
                turn_traces.append(turn_trace(Exports.log[before:]))
    trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
    for _ in range(100):  # the server exports when it exits: wait for its request
        if any(_service(r) == SERVER_SERVICE for r in Exports.log):
            break
        await asyncio.sleep(0.1)
    sources = [_service(r) for r in Exports.log]
    if SERVER_SERVICE not in sources:
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
    names = common.selected(sys.argv[1:])
    if len(names) == 1:
        asyncio.run(run(names[0]))
    else:  # mcp-agent sets the global provider once per process: one process per scenario
        for name in names:
            subprocess.run([sys.executable, str(SCRIPTS / "mcp_agent_otel.py"), name], check=True)
    SERVER.shutdown()


if __name__ == "__main__":
    main()
