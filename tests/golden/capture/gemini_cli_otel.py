"""Capture Google's Gemini CLI (non-interactive ``gemini -p``) with the store's tools from the
project's MCP server, traced by Gemini CLI's own OpenTelemetry telemetry (spans and log
records; metrics received and dropped).

Not run in CI. Node 20 for the CLI, and a venv of its own (never evald's) for this script and
the MCP server::

    cd tests/golden/capture/node-gemini-cli && npm ci && cd -
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-gemini-cli-otel
    /tmp/cap-gemini-cli-otel/bin/pip install mcp==2.3.0 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2 \
        opentelemetry-exporter-otlp-proto-common==1.45.2 opentelemetry-proto==1.45.2 protobuf
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-gemini-cli-otel/bin/python tests/golden/capture/gemini_cli_otel.py [scenario ...]'

Versions used: @google/gemini-cli 0.61.0 (npm, its bundle ships the OTel JS SDK and the
``@google/genai`` client), Node 20; mcp 2.3.0, opentelemetry-sdk / -proto /
-exporter-otlp-proto-http 1.45.2, protobuf 7.36.2 (Python 3.12.1).

Writes ``tests/golden/traces/gemini-cli-otel/``.

The agent: one ``gemini -p <user text> --approval-mode=yolo -m scripted-support-model -o json``
process per user turn (cwd an empty temp project, ``HOME`` a temp dir holding
``~/.gemini/settings.json``), its only tools the five store tools of the project's MCP stdio
server ``mcp_store_server.py`` (``mcpServers.music_store``, ``trust: true``; Gemini CLI offers
them to the model as ``mcp_music_store_<tool>``, listed in ``tool_names`` of the labels), its
built-in tools excluded (``tools.exclude``: ``BUILT_IN_TOOLS``; ``tools.core: []`` drops the MCP
tools too), the system prompt by ``GEMINI_SYSTEM_MD`` (a file
holding ``common.SYSTEM_PROMPT``; Gemini CLI's documented way to replace its system prompt).
Gemini CLI has no notion of an agent name: the CLI calls itself ``gemini-cli``.
``multi_turn``: turns 2 and 3 are ``gemini --resume latest -p ...`` in the same project (its
session resume: the conversation is reloaded from the saved session, the session id stays).

Telemetry, as Gemini CLI's telemetry docs show, in the settings file: ``telemetry.enabled:
true``, ``target: "local"``, ``otlpEndpoint`` this script's loopback server, ``otlpProtocol:
"http"`` (the OTel JS SDK's OTLP/HTTP **JSON** exporters: ``/v1/traces``, ``/v1/logs``,
``/v1/metrics``), ``logPrompts: true`` and ``traces: true`` (its switch for detailed span
attributes: prompts, outputs). Received JSON exports are converted to the protobuf messages
(hex ids to bytes) and written with the project's writers (``received_otlp``: ``.jsonl`` /
``.pb`` / ``.tree.txt``; ``claude_agent_sdk_otel.write_logs``' format for ``.logs.jsonl`` /
``.logs.pb``). The MCP server is given the receiver too (``OTLP_TRACES_URL``, exported when
it exits), but none of its spans ever arrives: Gemini CLI ends the server at exit before its
``finally`` flushes, so the folder holds Gemini CLI's spans only (``PYTHONPATH`` in its env is
refused by the CLI as "dangerous"; the server does not need it).

The model is the Gemini Developer API on this script's loopback server
(``GOOGLE_GEMINI_BASE_URL``, dummy ``GEMINI_API_KEY``, ``security.auth.selectedType:
"gemini-api-key"``). Gemini CLI streams (``:streamGenerateContent?alt=sse``): the scripted
``gemini_content`` answer is sent as one SSE event. Requests declaring the store tools are the
agent loop and take the script's next answer; any other request (Gemini CLI's side calls) gets
a short text answer without moving the script and is counted in ``side_requests``.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

for _key in [k for k in os.environ if k.startswith(("OTEL_", "GOOGLE_", "GEMINI_"))]:
    del os.environ[_key]

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
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
    ExportTraceServiceResponse,
)

FOLDER = common.TRACES / "gemini-cli-otel"
NODE_DIR = SCRIPTS / "node-gemini-cli"
GEMINI = NODE_DIR / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js"
SERVER_SCRIPT = SCRIPTS / "mcp_store_server.py"
MCP_SERVER_NAME = "music_store"
# Gemini CLI 0.61.0's own tools (as declared to the model), excluded by ``tools.exclude``
BUILT_IN_TOOLS = (
    "update_topic",
    "list_directory",
    "read_file",
    "grep_search",
    "glob",
    "replace",
    "write_file",
    "web_fetch",
    "run_shell_command",
    "list_background_processes",
    "read_background_output",
    "google_web_search",
    "enter_plan_mode",
    "invoke_agent",
    "activate_skill",
)
PACKAGES = ("mcp", "opentelemetry-sdk", "opentelemetry-proto", "protobuf")


def _cli_version() -> str:
    package = NODE_DIR / "node_modules" / "@google" / "gemini-cli" / "package.json"
    return str(json.loads(package.read_text())["version"])


class State:
    main: ClassVar[list[dict[str, Any]]] = []
    side: ClassVar[list[dict[str, Any]]] = []
    traces: ClassVar[list[ExportTraceServiceRequest]] = []
    logs: ClassVar[list[ExportLogsServiceRequest]] = []
    metrics = 0
    other_paths: ClassVar[list[str]] = []
    tool_names: ClassVar[dict[str, str]] = {}


# --------------------------------------------------------------------------- OTLP (JSON or pb)

_ID_KEYS = {"traceId", "spanId", "parentSpanId"}


def _b64_ids(node: Any) -> None:
    """OTLP/JSON's hex ids to the base64 protobuf's JSON mapping expects."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_KEYS and isinstance(value, str):
                node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            else:
                _b64_ids(value)
    elif isinstance(node, list):
        for item in node:
            _b64_ids(item)


def _parse(request: scripted_model.Request, message: Any) -> None:
    raw = request.body
    if request.headers.get("Content-Encoding") == "gzip":
        raw = gzip.decompress(raw)
    content_type = request.headers.get("Content-Type") or ""
    if content_type.startswith("application/json"):
        payload = json.loads(raw)
        _b64_ids(payload)
        json_format.ParseDict(payload, message, ignore_unknown_fields=False)
    elif content_type == "application/x-protobuf":
        message.ParseFromString(raw)
    else:
        raise ValueError(f"not OTLP/HTTP: {content_type}")


def _answer(request: scripted_model.Request, message: Any) -> scripted_model.Reply:
    if (request.headers.get("Content-Type") or "").startswith("application/json"):
        return scripted_model.Reply(b"{}", content_type="application/json")
    return scripted_model.Reply(message.SerializeToString(), content_type="application/x-protobuf")


def traces_route(request: scripted_model.Request) -> scripted_model.Reply:
    export = ExportTraceServiceRequest()
    _parse(request, export)
    State.traces.append(export)
    return _answer(request, ExportTraceServiceResponse())


def logs_route(request: scripted_model.Request) -> scripted_model.Reply:
    export = ExportLogsServiceRequest()
    _parse(request, export)
    State.logs.append(export)
    return _answer(request, ExportLogsServiceResponse())


def metrics_route(request: scripted_model.Request) -> scripted_model.Reply:
    State.metrics += 1
    return _answer(request, ExportMetricsServiceResponse())


# --------------------------------------------------------------------------- the model


def _declared(body: dict[str, Any]) -> list[str]:
    return [
        d.get("name", "")
        for t in body.get("tools") or []
        for d in t.get("functionDeclarations") or []
    ]


def _is_agent_loop(body: dict[str, Any]) -> bool:
    return any(n.endswith("lookup_invoice") for n in _declared(body))


def _side_answer(body: dict[str, Any]) -> dict[str, Any]:
    State.side.append(body)
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
        "modelVersion": common.MODEL_NAME,
    }


def _loop_answer(body: dict[str, Any]) -> dict[str, Any]:
    State.main.append(body)
    names = _declared(body)
    answer = scripted_model.gemini_content(body)
    for part in answer["candidates"][0]["content"]["parts"]:
        call = part.get("functionCall")
        if call is not None:
            tool = call["name"]
            declared = next((n for n in names if n == tool or re.search(rf"(^|_){tool}$", n)), tool)
            State.tool_names[tool] = declared
            call["name"] = declared
    return answer


def model_route(request: scripted_model.Request) -> scripted_model.Reply:
    body = request.json()
    stream = ":streamGenerateContent" in request.path
    answer = _loop_answer(body) if _is_agent_loop(body) else _side_answer(body)
    if stream:
        return scripted_model.Reply(
            f"data: {json.dumps(answer)}\r\n\r\n".encode(), content_type="text/event-stream"
        )
    return scripted_model.Reply.json(answer)


def count_tokens_route(request: scripted_model.Request) -> scripted_model.Reply:
    return scripted_model.Reply.json({"totalTokens": 100})


def other_route(request: scripted_model.Request) -> scripted_model.Reply:
    State.other_paths.append(request.path)
    raise scripted_model.NotScripted(404, f"not scripted: {request.path}")


SERVER = scripted_model.LoopbackServer(
    {
        r"/v1beta/models/[^/:]+:(stream)?[gG]enerateContent(\?.*)?": model_route,
        r"/v1beta/models/[^/:]+:countTokens(\?.*)?": count_tokens_route,
        r"/v1/traces": traces_route,
        r"/v1/logs": logs_route,
        r"/v1/metrics": metrics_route,
        scripted_model.StoreEndpoint.PATH: scripted_model.StoreEndpoint(),
        r".*": other_route,
    }
)


def settings() -> dict[str, Any]:
    return {
        "telemetry": {
            "enabled": True,
            "target": "local",
            "otlpEndpoint": SERVER.url,
            "otlpProtocol": "http",
            "logPrompts": True,
            "traces": True,
        },
        "mcpServers": {
            MCP_SERVER_NAME: {
                "command": sys.executable,
                "args": [str(SERVER_SCRIPT)],
                "env": {
                    "STORE_URL": f"{SERVER.url}/store",
                    "OTLP_TRACES_URL": f"{SERVER.url}/v1/traces",
                    "PYTHONPATH": str(SCRIPTS),
                    "NO_PROXY": "127.0.0.1,localhost",
                },
                "trust": True,
            }
        },
        "tools": {"exclude": list(BUILT_IN_TOOLS)},
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "model": {"name": common.MODEL_NAME},
    }


# --------------------------------------------------------------------------- capture


def _hex_json(request: Any) -> str:
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
        "".join(_hex_json(r) + "\n" for r in requests), encoding="utf-8"
    )
    (folder / f"{name}.logs.pb").write_bytes(every.SerializeToString())
    count = sum(len(sl.log_records) for rl in every.resource_logs for sl in rl.scope_logs)
    print(f"{folder.name}/{name}: {count} log records, {len(requests)} exports", file=sys.stderr)
    return count


def _gemini_spans_traces(requests: list[ExportTraceServiceRequest], before: int) -> list[str]:
    """Trace ids of the CLI's own spans received since export ``before`` (start order)."""
    cli = [
        r
        for r in requests[before:]
        if not any(
            kv.key == "service.name" and kv.value.string_value == "music-store-mcp-server"
            for rs in r.resource_spans
            for kv in rs.resource.attributes
        )
    ]
    return received_otlp.ids_of(cli)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    State.main.clear()
    State.side.clear()
    State.traces.clear()
    State.logs.clear()
    State.other_paths.clear()
    State.metrics = 0
    home = Path(tempfile.mkdtemp(prefix="cap-gemini-home-"))
    project = Path(tempfile.mkdtemp(prefix="cap-gemini-project-"))
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings(), indent=1))
    system_md = home / "system.md"
    system_md.write_text(common.SYSTEM_PROMPT + "\n")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GEMINI_API_KEY": "offline-key",
        "GOOGLE_GEMINI_BASE_URL": SERVER.url,
        "GEMINI_SYSTEM_MD": str(system_md),
        "NO_PROXY": "127.0.0.1,localhost",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
    }
    finals: list[str | None] = []
    run_errors: list[str] = []
    sessions: list[str] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(State.traces)
        argv = ["node", str(GEMINI)]
        if turn > 0:
            argv += ["--resume", "latest"]
        argv += ["-p", text, "--approval-mode=yolo", "-m", common.MODEL_NAME, "-o", "json"]
        done = subprocess.run(
            argv, cwd=project, env=env, capture_output=True, text=True, timeout=180, check=False
        )
        time.sleep(1.5)  # the MCP server's export at its exit
        if os.environ.get("CAPTURE_DEBUG"):
            print(done.stdout, done.stderr, file=sys.stderr)
        out: dict[str, Any] = {}
        try:
            out = json.loads(done.stdout[done.stdout.index("{") :])
        except ValueError:
            run_errors.append(f"turn {turn}: exit {done.returncode}: {done.stderr[-2000:]}")
        if done.returncode != 0:
            run_errors.append(f"turn {turn}: exit {done.returncode}")
        finals.append(out.get("response"))
        if out.get("session_id"):
            sessions.append(str(out["session_id"]))
        turn_traces.extend(_gemini_spans_traces(State.traces, before))
    shutil.rmtree(project, ignore_errors=True)
    session_id = sessions[0] if scenario.session_id is not None and sessions else None
    if scenario.session_id is not None and len(set(sessions)) != 1:
        run_errors.append(f"session ids per turn: {sessions}")
    capture = common.Capture(
        scenario,
        script,
        [],
        turn_traces,
        finals,
        {"@google/gemini-cli": _cli_version(), **common.versions(*PACKAGES)},
        session_id=session_id,
        run_errors=run_errors,
        notes="Gemini CLI session id(s) (its -o json output): " + ", ".join(sessions),
        extra={
            "reference_session_id": scenario.session_id,
            "tool_names": dict(State.tool_names),
            "side_requests": len(State.side),
            "agent_loop_requests": len(State.main),
            "metrics_exports": State.metrics,
            "unscripted_paths": sorted(set(State.other_paths)),
        },
    )
    if os.environ.get("CAPTURE_DEBUG"):
        Path(f"/tmp/gemini-{name}-requests.json").write_text(
            json.dumps({"main": State.main, "side": State.side}, indent=1)
        )
    common.check_labels(capture)
    FOLDER.mkdir(parents=True, exist_ok=True)
    received_otlp.write_scenario(FOLDER, capture, list(State.traces))
    write_logs(FOLDER, name, list(State.logs))
    shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    SERVER.shutdown()


if __name__ == "__main__":
    main()
