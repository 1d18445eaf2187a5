"""Capture Anthropic's Claude Agent SDK (Python) driving the Claude Code CLI, traced by
Claude Code's own OpenTelemetry telemetry (log records / events, metrics, beta traces).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-claude
    /tmp/cap-claude/bin/pip install claude-agent-sdk opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-proto protobuf
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-claude/bin/python tests/golden/capture/claude_agent_sdk_otel.py [scenario ...]'

Versions used: claude-agent-sdk 0.2.189 with its bundled Claude Code CLI 2.1.332 (the wheel
ships the native ``claude`` binary in ``claude_agent_sdk/_bundled``; no npm install), mcp 2.3.0,
opentelemetry-proto / -sdk 1.45.2, protobuf 7.36.2 (Python 3.12.1).

Writes ``tests/golden/traces/claude-agent-sdk-otel/``.

The agent: ``ClaudeSDKClient`` (one client per scenario, one ``query`` per user turn, so the
three turns of ``multi_turn`` are one Claude Code session) with the five store tools as
in-process SDK MCP tools (``@tool`` + ``create_sdk_mcp_server``, server name ``store``; Claude
Code names them ``mcp__store__<tool>``), Claude Code's built-in tools turned off
(``tools=[]``), the store tools allowed (``allowed_tools``), ``setting_sources=[]``. A failed
refund is returned as an MCP tool result with ``is_error: true`` (the SDK's documented way).
The session id of multi_turn is passed with ``session_id`` (Claude Code's ``--session-id``;
it must be a UUID, so it is ``uuid5(NAMESPACE_URL, "sess-music-0001")``); every other scenario
gets the random session id Claude Code makes itself.

Telemetry (environment of the CLI): ``CLAUDE_CODE_ENABLE_TELEMETRY=1``, logs, metrics and
traces exported with ``otlp`` over ``http/protobuf`` to this script's loopback receiver
(``OTEL_EXPORTER_OTLP_ENDPOINT``), ``CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`` (the beta that
turns on spans), ``OTEL_LOG_USER_PROMPTS=1``, ``OTEL_LOG_TOOL_DETAILS=1``,
``OTEL_LOG_TOOL_CONTENT=1``, ``OTEL_LOG_ASSISTANT_RESPONSES=1``; non-essential traffic off
(``DISABLE_TELEMETRY``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``, ``DISABLE_AUTOUPDATER``,
``DISABLE_ERROR_REPORTING``). Metrics are received and dropped (not written).

The model is a scripted loopback server speaking the Messages API with streaming (SSE, the
only way Claude Code calls it): requests that declare the store tools are the agent loop and
take the script's next answer; any other request (Claude Code's side calls) gets a short
text answer without moving the script, and is listed in ``side_requests`` of the labels.

Files per scenario: ``<scenario>.jsonl|.pb|.tree.txt`` (spans as received,
``received_otlp``), ``<scenario>.logs.jsonl`` (one ``ExportLogsServiceRequest`` per export, as
received, hex ids) and ``<scenario>.logs.pb`` (every record in one request), labels.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

for _key in [k for k in os.environ if k.startswith("OTEL_")]:
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
from google.protobuf import json_format  # noqa: E402
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # noqa: E402
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (  # noqa: E402
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "claude-agent-sdk-otel"
PACKAGES = (
    "claude-agent-sdk",
    "mcp",
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
    logs: ClassVar[list[ExportLogsServiceRequest]] = []
    metrics = 0
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
        blocks = [{"type": "text", "text": "ok"}]
        payload = _message_events(f"msg_side_{len(State.side)}", blocks, "end_turn", tokens)
    else:
        State.main.append(body)
        script = _script()
        calls, final = script.next_response()
        blocks = [{"type": "text", "text": final}] if final is not None else []
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


def _raw(request: scripted_model.Request) -> bytes:
    raw = request.body
    if request.headers.get("Content-Encoding") == "gzip":
        raw = gzip.decompress(raw)
    if (request.headers.get("Content-Type") or "") != "application/x-protobuf":
        raise ValueError(f"not OTLP/HTTP protobuf: {request.headers.get('Content-Type')}")
    return raw


def logs_route(request: scripted_model.Request) -> scripted_model.Reply:
    export = ExportLogsServiceRequest()
    export.ParseFromString(_raw(request))
    State.logs.append(export)
    return scripted_model.Reply(
        ExportLogsServiceResponse().SerializeToString(), content_type="application/x-protobuf"
    )


def metrics_route(request: scripted_model.Request) -> scripted_model.Reply:
    _raw(request)
    State.metrics += 1
    return scripted_model.Reply(
        ExportMetricsServiceResponse().SerializeToString(), content_type="application/x-protobuf"
    )


def other_route(request: scripted_model.Request) -> scripted_model.Reply:
    State.other_paths.append(request.path)
    raise scripted_model.NotScripted(404, f"not scripted: {request.path}")


SERVER = scripted_model.LoopbackServer(
    {
        r"/v1/messages(\?.*)?": messages,
        received_otlp.TRACES_PATH: received_otlp.receiver(lambda r, _ct: State.traces.append(r)),
        r"/v1/logs": logs_route,
        r"/v1/metrics": metrics_route,
        r".*": other_route,
    }
)

CLI_ENV = {
    "ANTHROPIC_BASE_URL": SERVER.url,
    "ANTHROPIC_API_KEY": "sk-ant-offline",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
    "OTEL_LOGS_EXPORTER": "otlp",
    "OTEL_METRICS_EXPORTER": "otlp",
    "OTEL_TRACES_EXPORTER": "otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    "OTEL_EXPORTER_OTLP_ENDPOINT": SERVER.url,
    "OTEL_LOGS_EXPORT_INTERVAL": "500",
    "OTEL_METRIC_EXPORT_INTERVAL": "1000",
    "OTEL_BSP_SCHEDULE_DELAY": "500",
    "OTEL_LOG_USER_PROMPTS": "1",
    "OTEL_LOG_TOOL_DETAILS": "1",
    "OTEL_LOG_TOOL_CONTENT": "1",
    "OTEL_LOG_ASSISTANT_RESPONSES": "1",
    "OTEL_SERVICE_NAME": "music-store-support-claude",
    "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=acceptance-test",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


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


def _trace_ids_of_logs(requests: list[ExportLogsServiceRequest]) -> list[str]:
    seen: list[str] = []
    for request in requests:
        for rl in request.resource_logs:
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    tid = record.trace_id.hex()
                    if tid and tid not in seen:
                        seen.append(tid)
    return seen


def _logs_hex_json(request: ExportLogsServiceRequest) -> str:
    as_dict = json_format.MessageToDict(request, use_integers_for_enums=True)
    common._hex_ids(as_dict)
    return json.dumps(as_dict, ensure_ascii=False, separators=(",", ":"))


def write_logs(folder: Path, name: str, requests: list[ExportLogsServiceRequest]) -> int:
    requests = [
        r for r in requests if any(sl.log_records for rl in r.resource_logs for sl in rl.scope_logs)
    ]
    every = ExportLogsServiceRequest()
    for request in requests:
        every.resource_logs.extend(request.resource_logs)
    (folder / f"{name}.logs.jsonl").write_text(
        "".join(_logs_hex_json(r) + "\n" for r in requests), encoding="utf-8"
    )
    (folder / f"{name}.logs.pb").write_bytes(every.SerializeToString())
    count = sum(len(sl.log_records) for rl in every.resource_logs for sl in rl.scope_logs)
    print(f"{folder.name}/{name}: {count} log records, {len(requests)} exports", file=sys.stderr)
    return count


async def _settle(seconds: float = 2.5) -> None:
    await asyncio.sleep(seconds)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "toolu")
    State.main.clear()
    State.side.clear()
    State.traces.clear()
    State.logs.clear()
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
    async with ClaudeSDKClient(options=options) as client:
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
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
            await _settle()
    # Claude Code exports its spans when the CLI exits (one batch per process, the batch
    # span processor's own schedule is not reached within a turn), so the turns' traces are
    # read afterwards: one trace per turn (its claude_code.interaction span), in start order.
    await _settle(3.0)
    turn_traces = received_otlp.ids_of(State.traces)
    if len(turn_traces) != len(scenario.user_inputs):
        run_errors.append(f"{len(turn_traces)} traces for {len(scenario.user_inputs)} turns")
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
            "metrics_exports": State.metrics,
            "log_trace_ids": _trace_ids_of_logs(State.logs),
            "unscripted_paths": sorted(set(State.other_paths)),
        },
    )
    common.check_labels(capture)
    FOLDER.mkdir(parents=True, exist_ok=True)
    received_otlp.write_scenario(FOLDER, capture, list(State.traces))
    write_logs(FOLDER, name, list(State.logs))
    if os.environ.get("CAPTURE_DEBUG"):
        (Path("/tmp") / f"claude-{name}-requests.json").write_text(
            json.dumps({"main": State.main, "side": State.side}, indent=1)
        )


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))


if __name__ == "__main__":
    main()
