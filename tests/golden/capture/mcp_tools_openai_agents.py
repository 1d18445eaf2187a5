"""Capture the OpenAI Agents SDK using MCP tools (stdio server), via OpenInference.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mcp
    /tmp/cap-mcp/bin/pip install openai-agents openinference-instrumentation-openai-agents \
        openinference-instrumentation-mcp mcp opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-exporter-otlp-proto-http
    /tmp/cap-mcp/bin/python tests/golden/capture/mcp_tools_openai_agents.py [scenario ...]

As installed on 2026-11-24: openai-agents 0.24.0, openai 3.54.0, mcp 2.3.0 (mcp-types
2.3.0), openinference-instrumentation-openai-agents 2.6.0, openinference-instrumentation-mcp
2.0.13, openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -proto / -exporter-otlp-proto-common / -http 1.45.2, protobuf 7.36.2.

Writes ``tests/golden/traces/mcp-tools-openai-agents/``. Real ``Agent``/``Runner`` whose only
tools come from ``mcp_servers=[MCPServerStdio(...)]``: ``mcp_store_server.py`` (mcp 2.x
``MCPServer``, the renamed ``FastMCP``) run as a subprocess with this venv's python, one
server process per scenario (all turns). Default tool naming (no
``include_server_in_tool_names``), default ``cache_tools_list=False``. The model is the
SDK's ``OpenAIChatCompletionsModel`` with a real ``AsyncOpenAI`` client against this
script's loopback Chat Completions server (``scripted_model``); multi-turn
memory is a ``SQLiteSession``; session id through OpenInference ``using_session()``.

Two processes export spans:

* this process: ``OpenAIAgentsInstrumentor`` (the SDK's trace processor bridge) and the
  MCP SDK's own client spans (``MCP send …``, tracer ``mcp-python-sdk``), both on the
  provider of ``common.make_provider`` (batches flushed per turn);
  ``MCPInstrumentor`` (openinference-instrumentation-mcp) is instrumented here and in the
  server; it creates no spans, it only carries the trace context over the transport;
* the MCP server: its own provider, OTLP/HTTP protobuf exporter to this script's loopback
  receiver, one batch when the server exits (end of the scenario).

The ``.jsonl`` holds every export request in the order they happened (this process's
batches encoded as ``common`` does, the server's requests as received).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

PROVIDER, RECORDER = common.make_provider("music-store-support-openai-agents-mcp")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation.mcp import MCPInstrumentor  # noqa: E402

MCPInstrumentor().instrument(tracer_provider=PROVIDER)  # before mcp is imported

from agents import Agent, RunConfig, Runner, SQLiteSession  # noqa: E402
from agents.mcp import MCPServerStdio  # noqa: E402
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

OpenAIAgentsInstrumentor().instrument(tracer_provider=PROVIDER)

FOLDER = common.TRACES / "mcp-tools-openai-agents"
SERVER_SCRIPT = SCRIPTS / "mcp_store_server.py"
MCP_SERVER_NAME = "music_store"
WORKFLOW = "music store support turn"
PACKAGES = (
    "openai-agents",
    "openai",
    "mcp",
    "mcp-types",
    "openinference-instrumentation-openai-agents",
    "openinference-instrumentation-mcp",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-proto",
    "protobuf",
)


class Exports:
    """Every export request of the scenario, in the order it happened (both processes)."""

    lock = threading.Lock()
    log: ClassVar[list[tuple[str, ExportTraceServiceRequest]]] = []


_original_export = RECORDER.export


def _logging_export(spans: Any) -> Any:
    result = _original_export(spans)
    with Exports.lock:
        Exports.log.append(("agent", encode_spans(list(spans))))
    return result


RECORDER.export = _logging_export  # type: ignore[method-assign]


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    with Exports.lock:
        Exports.log.append(("mcp-server", request))


# Loopback: the scripted model, the store backend, the MCP server's OTLP receiver.
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: scripted_model.ChatCompletions(),
        scripted_model.StoreEndpoint.PATH: scripted_model.StoreEndpoint(),
    }
)
ROOT_URL = SERVER.url


def mcp_server() -> MCPServerStdio:
    return MCPServerStdio(
        params={
            "command": sys.executable,
            "args": [str(SERVER_SCRIPT)],
            "env": {
                "STORE_URL": f"{ROOT_URL}/store",
                "OTLP_TRACES_URL": f"{ROOT_URL}/v1/traces",
                "MCP_OPENINFERENCE": "1",
                "PYTHONPATH": str(SCRIPTS),
                "NO_PROXY": "127.0.0.1,localhost",
            },
        },
        name=MCP_SERVER_NAME,
        client_session_timeout_seconds=30,
    )


NOTES = (
    "OpenAI Agents SDK with tools only from an MCP stdio server (mcp 2.x MCPServer, "
    "subprocess); OpenAIChatCompletionsModel over a scripted loopback Chat Completions "
    "server; openinference-instrumentation-openai-agents in the agent process, the MCP "
    "SDK's native client (CLIENT 'MCP send <method> [<tool>]') and server (SERVER "
    "'<method> [<tool>]', from the server process, exported separately) spans; "
    "openinference-instrumentation-mcp only propagates context. Tool names are not "
    "namespaced (default, no include_server_in_tool_names). The refused refund raises "
    "ToolError in the MCP tool: the result comes back with isError=true and text "
    "'Error executing tool refund: RefundWindowExpired: ...', which the SDK hands to the "
    "model as the tool output; multi_turn: SQLiteSession memory, RunConfig(group_id), "
    "session.id only through openinference using_session()"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client = AsyncOpenAI(api_key="sk-offline", base_url=f"{ROOT_URL}/v1", max_retries=0)
    session = SQLiteSession(scenario.session_id) if scenario.session_id else None
    RECORDER.batches.clear()
    Exports.log = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    async with mcp_server() as server:
        # connecting (server/discover) happens outside any agent trace: its own batch
        PROVIDER.force_flush()
        agent = Agent(
            name=common.AGENT_NAME,
            instructions=common.SYSTEM_PROMPT,
            model=OpenAIChatCompletionsModel(model=common.MODEL_NAME, openai_client=client),
            mcp_servers=[server],
        )
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
            before = len(RECORDER.spans)
            config = RunConfig(workflow_name=WORKFLOW, group_id=scenario.session_id)
            if scenario.session_id:
                with using_session(scenario.session_id):
                    result = await Runner.run(agent, text, session=session, run_config=config)
            else:
                result = await Runner.run(agent, text, session=session, run_config=config)
            finals.append(result.final_output if isinstance(result.final_output, str) else None)
            PROVIDER.force_flush()
            turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    PROVIDER.force_flush()
    for _ in range(50):  # the server exports when it exits: wait for its request
        if any(source == "mcp-server" for source, _ in Exports.log):
            break
        await asyncio.sleep(0.1)
    sources = [source for source, _ in Exports.log]
    if "mcp-server" not in sources:
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
    received_otlp.write_scenario(FOLDER, capture, [request for _, request in Exports.log])


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
