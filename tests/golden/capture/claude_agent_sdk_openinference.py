"""Capture Anthropic's Claude Agent SDK (Python) driving the Claude Code CLI, traced by
OpenInference's ``openinference-instrumentation-claude-agent-sdk`` (instead of Claude Code's
own OpenTelemetry telemetry, which is off).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-claude-agent-sdk-openinference
    /tmp/cap-claude-agent-sdk-openinference/bin/pip install claude-agent-sdk==0.2.189 \
        openinference-instrumentation-claude-agent-sdk opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-http opentelemetry-exporter-otlp-proto-common \
        opentelemetry-proto protobuf
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-claude-agent-sdk-openinference/bin/python \
        tests/golden/capture/claude_agent_sdk_openinference.py [scenario ...]'

Versions used: claude-agent-sdk 0.2.189 with its bundled Claude Code CLI 2.1.332 (the native
``claude`` binary shipped in ``claude_agent_sdk/_bundled``), mcp 2.3.0,
openinference-instrumentation-claude-agent-sdk 0.1.22, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-api / -sdk /
-exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2
(Python 3.12.1), in a network namespace with only loopback up.

Writes ``tests/golden/traces/claude-agent-sdk-openinference/``.

The agent is the one of ``claude_agent_sdk_otel.py``: ``ClaudeSDKClient`` (one client per
scenario, one ``query`` + ``receive_response`` per user turn, so the three turns of
``multi_turn`` are one Claude Code session) with the five store tools as in-process SDK MCP
tools (``@tool`` + ``create_sdk_mcp_server``, server name ``store``; Claude Code names them
``mcp__store__<tool>``), Claude Code's built-in tools off (``tools=[]``), the store tools
allowed, ``setting_sources=[]``. A failed refund is returned as an MCP tool result with
``is_error: true`` (the SDK's documented way). The session id of multi_turn is passed with
``session_id`` (a UUID: ``uuid5(NAMESPACE_URL, "sess-music-0001")``); every other scenario gets
the random session id Claude Code makes itself. The Claude Agent SDK has no name for its main
agent (``agents=`` defines subagents only), so ``music_store_support`` is named nowhere.

The model is the same scripted loopback server speaking the Messages API with streaming (SSE,
the only way Claude Code calls it): requests that declare the store tools are the agent loop
and take the script's next answer; any other request gets a short text answer without moving
the script (``side_requests`` in the labels).

Instrumentation, as the instrumentor's README shows: an SDK ``TracerProvider`` with a
``SimpleSpanProcessor(OTLPSpanExporter(endpoint))`` and
``ClaudeAgentSDKInstrumentor().instrument(tracer_provider=...)``, with OpenInference's default
``TraceConfig`` (inputs and outputs recorded: nothing hidden). The exporter sends OTLP/HTTP
protobuf to this script's loopback receiver (``received_otlp.receiver``); the provider is
force-flushed after every turn. The CLI's own telemetry is off: no ``OTEL_*`` variable in this
process or the CLI's environment, ``CLAUDE_CODE_ENABLE_TELEMETRY=0``, and non-essential traffic
off (``DISABLE_TELEMETRY``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``,
``DISABLE_AUTOUPDATER``, ``DISABLE_ERROR_REPORTING``). The instrumentor records no model
spans (the model calls are made by the CLI process); its README points to
openinference-instrumentation-anthropic for those, which cannot see the CLI's own client.

Files per scenario: ``<scenario>.jsonl|.pb|.tree.txt`` (spans as received,
``received_otlp``) and labels.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

for _key in [k for k in os.environ if k.startswith(("OTEL_", "ANTHROPIC_", "CLAUDE_"))]:
    del os.environ[_key]

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    TextBlock,
    create_sdk_mcp_server,
    tool,
)
from openinference.instrumentation.claude_agent_sdk import (  # noqa: E402
    ClaudeAgentSDKInstrumentor,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: E402
    OTLPSpanExporter,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from opentelemetry.sdk import trace as trace_sdk  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

FOLDER = common.TRACES / "claude-agent-sdk-openinference"
PACKAGES = (
    "claude-agent-sdk",
    "mcp",
    "openinference-instrumentation-claude-agent-sdk",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-proto",
    "opentelemetry-sdk",
    "protobuf",
)
SERVER_NAME = "store"
PREFIX = f"mcp__{SERVER_NAME}__"

_script = common.active_script


# --------------------------------------------------------------------------- the model (SSE)


class State:
    main: ClassVar[list[dict[str, Any]]] = []
    side: ClassVar[list[dict[str, Any]]] = []
    traces: ClassVar[list[ExportTraceServiceRequest]] = []
    other_paths: ClassVar[list[str]] = []


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _message_events(msg_id: str, blocks: list[dict[str, Any]], stop: str, tokens: int) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": common.MODEL_NAME,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": tokens, "output_tokens": 1},
            },
        }
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]},
                }
            )
        else:
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": {},
                    },
                }
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": json.dumps(block["input"]),
                    },
                }
            )
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 12},
        }
    )
    events.append({"type": "message_stop"})
    return _sse(events)


def messages(request: scripted_model.Request) -> scripted_model.Reply:
    body = request.json()
    names = [t.get("name", "") for t in body.get("tools") or []]
    tokens = 50 + 10 * len(body.get("messages") or [])
    if not any(n.startswith(PREFIX) for n in names):
        State.side.append(body)
        side: list[dict[str, Any]] = [{"type": "text", "text": "ok"}]
        payload = _message_events(f"msg_side_{len(State.side)}", side, "end_turn", tokens)
    else:
        State.main.append(body)
        script = _script()
        calls, final = script.next_response()
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": final}] if final is not None else []
        )
        blocks += [
            {"type": "tool_use", "id": call_id, "name": PREFIX + name, "input": args}
            for call_id, name, args in calls
        ]
        stop = "end_turn" if final is not None else "tool_use"
        msg_id = f"msg_{script.scenario.name}_{script.turn}{script.step}"
        payload = _message_events(msg_id, blocks, stop, tokens)
    if body.get("stream") is False:
        raise scripted_model.NotScripted(400, "only streaming is scripted")
    return scripted_model.Reply(
        payload,
        content_type="text/event-stream",
        headers=(("request-id", f"req_{len(State.main)}_{len(State.side)}"),),
    )


def other_route(request: scripted_model.Request) -> scripted_model.Reply:
    State.other_paths.append(request.path)
    raise scripted_model.NotScripted(404, f"not scripted: {request.path}")


SERVER = scripted_model.LoopbackServer(
    {
        r"/v1/messages(\?.*)?": messages,
        received_otlp.TRACES_PATH: received_otlp.receiver(lambda r, _ct: State.traces.append(r)),
        r".*": other_route,
    }
)

# The CLI's environment: the scripted model, and Claude Code's own telemetry OFF (no
# CLAUDE_CODE_ENABLE_TELEMETRY, no OTEL_* variable reaches it; see the module docstring).
CLI_ENV = {
    "ANTHROPIC_BASE_URL": SERVER.url,
    "ANTHROPIC_API_KEY": "sk-ant-offline",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}

# OpenInference's instrumentor on an SDK tracer provider, as its README shows
# (SimpleSpanProcessor + OTLPSpanExporter over http/protobuf), to the loopback receiver.
TRACER_PROVIDER = trace_sdk.TracerProvider(
    resource=Resource.create(
        {
            "service.name": "music-store-support-claude",
            "deployment.environment.name": "acceptance-test",
        }
    )
)
TRACER_PROVIDER.add_span_processor(
    SimpleSpanProcessor(OTLPSpanExporter(f"{SERVER.url}{received_otlp.TRACES_PATH}"))
)
ClaudeAgentSDKInstrumentor().instrument(tracer_provider=TRACER_PROVIDER)


# --------------------------------------------------------------------------- the tools


def _schema(name: str) -> dict[str, Any]:
    props = common.TOOL_PARAMETERS[name]
    return {"type": "object", "properties": props, "required": list(props)}


def _answer(name: str, args: dict[str, Any]) -> dict[str, Any]:
    try:
        result = _script().call(name, **args)
    except common.StoreError as exc:
        return {"content": [{"type": "text", "text": str(exc)}], "is_error": True}
    return {"content": [{"type": "text", "text": json.dumps(result)}]}


@tool("lookup_track", common.TOOL_DESCRIPTIONS["lookup_track"], _schema("lookup_track"))
async def lookup_track(args: dict[str, Any]) -> dict[str, Any]:
    return _answer("lookup_track", {"track_name": args["track_name"]})


@tool("lookup_album", common.TOOL_DESCRIPTIONS["lookup_album"], _schema("lookup_album"))
async def lookup_album(args: dict[str, Any]) -> dict[str, Any]:
    return _answer("lookup_album", {"album_title": args["album_title"]})


@tool("lookup_artist", common.TOOL_DESCRIPTIONS["lookup_artist"], _schema("lookup_artist"))
async def lookup_artist(args: dict[str, Any]) -> dict[str, Any]:
    return _answer("lookup_artist", {"artist_name": args["artist_name"]})


@tool("lookup_invoice", common.TOOL_DESCRIPTIONS["lookup_invoice"], _schema("lookup_invoice"))
async def lookup_invoice(args: dict[str, Any]) -> dict[str, Any]:
    return _answer(
        "lookup_invoice", {"customer_id": args["customer_id"], "invoice_id": args["invoice_id"]}
    )


@tool("refund", common.TOOL_DESCRIPTIONS["refund"], _schema("refund"))
async def refund(args: dict[str, Any]) -> dict[str, Any]:
    return _answer(
        "refund",
        {"invoice_id": args["invoice_id"], "track_id": args["track_id"], "reason": args["reason"]},
    )


STORE = create_sdk_mcp_server(
    SERVER_NAME, "1.0.0", tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]
)
TOOL_NAMES = [PREFIX + n for n in common.TOOL_DESCRIPTIONS]


# --------------------------------------------------------------------------- capture


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "toolu")
    State.main.clear()
    State.side.clear()
    State.traces.clear()
    State.other_paths.clear()
    session_id = (
        str(uuid.uuid5(uuid.NAMESPACE_URL, scenario.session_id))
        if scenario.session_id is not None
        else None
    )
    options = ClaudeAgentOptions(
        system_prompt=common.SYSTEM_PROMPT,
        mcp_servers={SERVER_NAME: STORE},
        tools=[],
        allowed_tools=TOOL_NAMES,
        model=common.MODEL_NAME,
        setting_sources=[],
        # a fresh config dir per scenario: a re-run reusing multi_turn's fixed session id
        # would otherwise find the earlier transcript and refuse it (exit 1)
        env={**CLI_ENV, "CLAUDE_CONFIG_DIR": tempfile.mkdtemp(prefix="cap-claude-config-")},
        cwd="/tmp",
        session_id=session_id,
        max_turns=10,
    )
    finals: list[str | None] = []
    run_errors: list[str] = []
    seen_session: set[str] = set()
    turn_traces: list[str] = []
    async with ClaudeSDKClient(options=options) as client:
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
            before = len(State.traces)
            await client.query(text)
            texts: list[str] = []
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    texts.extend(b.text for b in message.content if isinstance(b, TextBlock))
                if isinstance(message, ResultMessage):
                    seen_session.add(message.session_id)
                    if message.is_error:
                        run_errors.append(f"turn {turn}: {message.subtype} {message.result}")
            finals.append(texts[-1] if texts else None)
            assert TRACER_PROVIDER.force_flush(30_000), "the OTLP export did not flush"
            new = [t for t in received_otlp.ids_of(State.traces[before:]) if t not in turn_traces]
            if len(new) != 1:
                run_errors.append(f"turn {turn}: {len(new)} new traces")
            turn_traces.extend(new)
    capture = common.Capture(
        scenario,
        script,
        [],
        turn_traces,
        finals,
        common.versions(*PACKAGES),
        session_id=session_id,
        run_errors=run_errors,
        notes="Claude Code session id(s) reported by the SDK: " + ", ".join(sorted(seen_session)),
        extra={
            "side_requests": len(State.side),
            "agent_loop_requests": len(State.main),
            "unscripted_paths": sorted(set(State.other_paths)),
        },
    )
    common.check_labels(capture)
    if run_errors:
        raise SystemExit(f"{name}: {run_errors}")
    FOLDER.mkdir(parents=True, exist_ok=True)
    received_otlp.write_scenario(FOLDER, capture, list(State.traces))
    if os.environ.get("CAPTURE_DEBUG"):
        (Path("/tmp") / f"claude-oi-{name}-requests.json").write_text(
            json.dumps({"main": State.main, "side": State.side}, indent=1)
        )


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    TRACER_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
