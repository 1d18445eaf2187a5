"""Capture OpenAI's Codex CLI (``codex exec``) through its own OpenTelemetry export (log
events, and its trace spans), with the store's tools from an MCP server.

Not run in CI. Needs Node 20 + npm (for the package only: ``@openai/codex`` ships the
native ``codex`` binary as an optional dependency), and a Python venv of its own (never
evald's)::

    cd tests/golden/capture/node-codex && npm ci && cd -   # the lock file
    # (how it was made: npm init -y; npm install @openai/codex@0.171.0; node_modules/ is
    #  git-ignored)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-codex-cli-otel
    /tmp/cap-codex-cli-otel/bin/pip install mcp opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-exporter-otlp-proto-http \
        opentelemetry-proto protobuf
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-codex-cli-otel/bin/python tests/golden/capture/codex_cli_otel.py [scenario ...]'

Versions used (2026-11-28): @openai/codex 0.171.0 (``codex-cli 0.171.0``, the
``@openai/codex-linux-x64`` native binary), mcp 2.3.0, opentelemetry-sdk / -proto /
-exporter-otlp-proto-http 1.45.2, protobuf 7.36.2 (Python 3.12.1, Node v20).

Writes ``tests/golden/traces/codex-cli-otel/``.

The agent: ``codex exec --json`` (one process per user turn; the second and third turns of
``multi_turn`` are ``codex exec resume <thread id>``, Codex's own session resume), with a
fresh ``CODEX_HOME`` per scenario holding a ``config.toml``:

* ``model_providers.scripted`` (``wire_api = "responses"``, the only wire API Codex 0.171
  accepts; ``base_url`` this script's loopback server) and ``model =
  "scripted-support-model"``; the system prompt as ``developer_instructions``;
* ``mcp_servers.store``: ``mcp_store_server.py`` (the store's five tools, each forwarding to
  this script's ``POST /store/<tool>``) started by Codex over stdio with this venv's python;
  the server exports its own spans (MCP SDK) to this script's receiver;
* ``approval_policy = "never"``, ``sandbox_mode = "read-only"`` and the server's
  ``default_tools_approval_mode = "approve"``: MCP calls run unattended (without the last
  one Codex refuses them: "MCP tool call requires approval, but approval policy is never");
  the server is ``required = true`` (else Codex may send the turn's first request before
  the server listed its tools, and the store tools are not offered);
* ``[otel]``: ``exporter`` (log events) and ``trace_exporter`` (spans) both ``otlp-http``
  with ``protocol = "binary"`` to this script's ``/v1/logs`` and ``/v1/traces``,
  ``log_user_prompt = true``, ``log_agent_responses = true`` (adds nothing here),
  ``environment = "acceptance-test"``.

Codex has no agent name: ``music_store_support`` appears nowhere but in the system prompt.

The model is a scripted loopback server speaking the Responses API with streaming (SSE, the
only way Codex calls it): a request that offers the store tools is the agent loop and takes
the script's next answer (``function_call`` items, or one assistant ``message``); any other
request (a side call of Codex's) gets a short text answer without moving the script and is
counted in ``side_requests``.

Files per scenario: ``<scenario>.jsonl|.pb|.tree.txt`` (spans as received: Codex's and the
MCP server's, ``received_otlp``), ``<scenario>.logs.jsonl`` (one ``ExportLogsServiceRequest``
per export, as received, hex ids) and ``<scenario>.logs.pb`` (every record in one
request), labels.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

for _key in [k for k in os.environ if k.startswith("OTEL_")]:
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
)

NODE_DIR = SCRIPTS / "node-codex"
CODEX = NODE_DIR / "node_modules" / ".bin" / "codex"
SERVER_SCRIPT = SCRIPTS / "mcp_store_server.py"
FOLDER = common.TRACES / "codex-cli-otel"
PACKAGES = ("mcp", "opentelemetry-proto", "opentelemetry-sdk", "protobuf")
NODE_PACKAGES = ("@openai/codex", "@openai/codex-linux-x64")
SERVER_NAME = "store"

_script = common.active_script


class State:
    main: ClassVar[list[dict[str, Any]]] = []
    side: ClassVar[list[dict[str, Any]]] = []
    traces: ClassVar[list[ExportTraceServiceRequest]] = []
    logs: ClassVar[list[ExportLogsServiceRequest]] = []
    metrics = 0
    other_paths: ClassVar[list[str]] = []


# --------------------------------------------------------------------------- the model (SSE)


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _response(resp_id: str, items: list[dict[str, Any]], tokens: int) -> bytes:
    base = {"id": resp_id, "object": "response", "model": common.MODEL_NAME, "status": ""}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}
    ]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item["type"] == "message":
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                }
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    usage = {
        "input_tokens": tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens + 12,
    }
    events.append(
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": items, "usage": usage},
        }
    )
    return _sse(events)


def _tool_names(body: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        names.append(str(tool.get("name", "")))
        for inner in tool.get("tools") or []:  # a namespace of tools
            names.append(str(inner.get("name", "")))
    return names


def responses(request: scripted_model.Request) -> scripted_model.Reply:
    body = request.json()
    if body.get("stream") is False:
        raise scripted_model.NotScripted(400, "only streaming is scripted")
    names = _tool_names(body)
    tokens = 50 + 10 * len(body.get("input") or [])
    if not any(n.endswith("lookup_invoice") for n in names):
        State.side.append(body)
        n = len(State.side)
        items = [_message(f"msg_side_{n}", "ok")]
        payload = _response(f"resp_side_{n}", items, tokens)
    else:
        State.main.append(body)
        script = _script()
        calls, final = script.next_response()
        tag = f"{script.scenario.name}_{script.turn}{script.step}"
        if final is not None:
            items = [_message(f"msg_{tag}", final)]
        else:
            items = [
                {
                    "type": "function_call",
                    "id": f"fc_{call_id}",
                    "call_id": call_id,
                    **_tool_ref(body, name),
                    "arguments": json.dumps(args),
                    "status": "completed",
                }
                for call_id, name, args in calls
            ]
        payload = _response(f"resp_{tag}", items, tokens)
    return scripted_model.Reply(payload, content_type="text/event-stream")


def _message(msg_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": msg_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _tool_ref(body: dict[str, Any], name: str) -> dict[str, Any]:
    """How the request offered the store tool ``name``: a plain function (its full name),
    or a function inside a namespace (``namespace`` + the inner name)."""
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                if str(inner.get("name", "")).endswith(name):
                    return {"namespace": tool["name"], "name": inner["name"]}
        elif str(tool.get("name", "")).endswith(name):
            return {"name": tool["name"]}
    raise AssertionError(f"{name} not offered: {_tool_names(body)}")


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
        r"/v1/responses(\?.*)?": responses,
        received_otlp.TRACES_PATH: received_otlp.receiver(lambda r, _ct: State.traces.append(r)),
        r"/v1/logs": logs_route,
        r"/v1/metrics": metrics_route,
        scripted_model.StoreEndpoint.PATH: scripted_model.StoreEndpoint(),
        r".*": other_route,
    }
)


def _toml(value: str) -> str:
    return json.dumps(value)


def config_toml() -> str:
    url = SERVER.url
    return f"""\
model = "{common.MODEL_NAME}"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "read-only"
developer_instructions = {_toml(common.SYSTEM_PROMPT)}
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"

[mcp_servers.{SERVER_NAME}]
command = {_toml(sys.executable)}
args = [{_toml(str(SERVER_SCRIPT))}]
env = {{ STORE_URL = "{url}/store", OTLP_TRACES_URL = "{url}/v1/traces" }}
required = true
default_tools_approval_mode = "approve"

[otel]
environment = "acceptance-test"
log_user_prompt = true
log_agent_responses = true
exporter = {{ otlp-http = {{ endpoint = "{url}/v1/logs", protocol = "binary" }} }}
trace_exporter = {{ otlp-http = {{ endpoint = "{url}/v1/traces", protocol = "binary" }} }}
"""


# --------------------------------------------------------------------------- capture


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


def _prompt_trace_ids(requests: list[ExportLogsServiceRequest]) -> list[str]:
    """The trace of each user turn: the one its ``codex.user_prompt`` record is in."""
    seen: list[str] = []
    for request in requests:
        for rl in request.resource_logs:
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    names = [
                        a.value.string_value for a in record.attributes if a.key == "event.name"
                    ]
                    tid = record.trace_id.hex()
                    if names == ["codex.user_prompt"] and tid and tid not in seen:
                        seen.append(tid)
    return seen


def _node_versions() -> dict[str, str]:
    found: dict[str, str] = {}
    for package in NODE_PACKAGES:
        path = NODE_DIR / "node_modules" / package / "package.json"
        if path.exists():
            found[package] = json.loads(path.read_text())["version"]
    return found


def exec_turn(home: Path, text: str, thread_id: str | None) -> tuple[str | None, str, list[str]]:
    """One ``codex exec`` (or ``exec resume``) process: (final text, thread id, errors)."""
    cmd = [str(CODEX), "exec"]
    if thread_id is not None:
        cmd += ["resume", thread_id]
    cmd += ["--json", "--skip-git-repo-check", text]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(home),
        "SCRIPTED_API_KEY": "sk-offline",
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        cmd,
        cwd=str(home),
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if os.environ.get("CAPTURE_DEBUG"):
        print(done.stdout, done.stderr, file=sys.stderr)
    finals: list[str] = []
    errors: list[str] = []
    tid = thread_id or ""
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "thread.started":
            tid = event.get("thread_id", tid)
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "agent_message":
            finals.append(item.get("text", ""))
        if event.get("type") in ("turn.failed", "error"):
            errors.append(json.dumps(event))
    if done.returncode != 0:
        errors.append(f"exit {done.returncode}: {done.stderr[-400:]}")
    return (finals[-1] if finals else None), tid, errors


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    State.main.clear()
    State.side.clear()
    State.traces.clear()
    State.logs.clear()
    State.other_paths.clear()
    State.metrics = 0
    home = Path(tempfile.mkdtemp(prefix="cap-codex-home-"))
    (home / "config.toml").write_text(config_toml(), encoding="utf-8")
    finals: list[str | None] = []
    run_errors: list[str] = []
    thread_id: str | None = None
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        final, tid, errors = exec_turn(home, text, thread_id)
        finals.append(final)
        run_errors += [f"turn {turn}: {e}" for e in errors]
        thread_id = tid
        time.sleep(1.0)
    time.sleep(2.0)
    # Each codex process exports many traces (one per app-server request, auth refresh,
    # file read ...): the turn's is the one holding its user prompt; the others are listed
    # as ``stray_traces`` by the writer.
    turn_traces = _prompt_trace_ids(State.logs)
    if len(turn_traces) != len(scenario.user_inputs):
        run_errors.append(f"{len(turn_traces)} prompt traces for {len(scenario.user_inputs)} turns")
    capture = common.Capture(
        scenario,
        script,
        [],
        turn_traces,
        finals,
        {**common.versions(*PACKAGES), **_node_versions()},
        session_id=thread_id if scenario.session_id is not None else None,
        run_errors=run_errors,
        notes=f"Codex thread id: {thread_id}",
        extra={
            "side_requests": len(State.side),
            "agent_loop_requests": len(State.main),
            "metrics_exports": State.metrics,
            "log_trace_ids": _trace_ids_of_logs(State.logs),
            "unscripted_paths": sorted(set(State.other_paths)),
        },
    )
    if os.environ.get("CAPTURE_DEBUG"):
        (Path("/tmp") / f"codex-{name}-requests.json").write_text(
            json.dumps({"main": State.main, "side": State.side}, indent=1)
        )
    common.check_labels(capture)
    FOLDER.mkdir(parents=True, exist_ok=True)
    received_otlp.write_scenario(FOLDER, capture, list(State.traces))
    write_logs(FOLDER, name, list(State.logs))


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)


if __name__ == "__main__":
    main()
