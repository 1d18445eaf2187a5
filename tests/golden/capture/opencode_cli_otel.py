"""Capture the opencode CLI (``opencode run``) with the store's tools from the project's MCP
server, traced by opencode's own OpenTelemetry export with the AI SDK's telemetry switched
on (``experimental.openTelemetry``).

Not run in CI. Node 20 + npm (for the package only: ``opencode-ai`` ships the native
``opencode`` binary as an optional dependency), and a venv of its own (never evald's) for
this script and the MCP server::

    cd tests/golden/capture/node-opencode && npm ci && cd -   # the lock file
    # (how it was made: npm init -y; npm install opencode-ai@1.18.33; node_modules/ is
    #  git-ignored)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-opencode-cli-otel
    /tmp/cap-opencode-cli-otel/bin/pip install mcp==2.3.0 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2 \
        opentelemetry-exporter-otlp-proto-common==1.45.2 opentelemetry-proto==1.45.2 protobuf
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-opencode-cli-otel/bin/python \
        tests/golden/capture/opencode_cli_otel.py [scenario ...]'

Versions used (2026-11-28): opencode-ai 1.18.33 (``opencode-linux-x64`` native binary, a Bun
bundle holding the AI SDK, ``@ai-sdk/openai-compatible``, Effect and the OTel JS SDK);
mcp 2.3.0, opentelemetry-sdk / -proto / -exporter-otlp-proto-http 1.45.2, protobuf 7.36.2
(Python 3.12.1).

Writes ``tests/golden/traces/opencode-cli-otel/``.

The agent: one ``opencode run --format json --agent music_store_support`` process per user
turn (cwd an empty temp project; ``HOME`` / ``XDG_*`` temp dirs); the second and third turns
of ``multi_turn`` add ``--session <id>`` (opencode's own session continue; the id is taken
from the first turn's JSON events). The user's text is given on stdin (``opencode run``
reads a piped message): a positional message is re-quoted by the CLI (every argument that
holds a space is wrapped in ``"..."``), which would send the model the text in quotes.
``OPENCODE_CONFIG`` points to a config file holding:

* ``provider.scripted``: ``npm: "@ai-sdk/openai-compatible"`` (bundled in the binary),
  ``options.baseURL`` this script's loopback server, one model ``scripted-support-model``;
  ``model`` / ``small_model`` that model;
* ``mcp.store``: ``mcp_store_server.py`` as a ``local`` (stdio) MCP server started with this
  venv's python; opencode offers its tools to the model as ``store_<tool>`` (listed in
  ``tool_names`` of the labels);
* ``agent.music_store_support``: ``mode: "primary"``, ``prompt`` ``common.SYSTEM_PROMPT``,
  ``permission`` ``{"*": "deny", "store_*": "allow"}`` (opencode's built-in tools are not
  offered, the store's are, and run unattended); ``default_agent`` that agent;
* ``experimental.openTelemetry: true``: opencode's documented switch that passes
  ``experimental_telemetry: {isEnabled: true, functionId: "session.llm", metadata: {userId,
  sessionId}}`` to the AI SDK's ``streamText`` (the AI SDK records prompts, responses, tool
  calls and tool results by default: ``recordInputs`` / ``recordOutputs`` default on).

OTLP: opencode starts its OTel export (Effect's OpenTelemetry layer over the JS SDK's
``OTLPTraceExporter``, ``BatchSpanProcessor``; its Effect logger to ``/v1/logs``) when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set: here this script's loopback server. Received exports
(JSON or protobuf) are kept as protobuf messages and written with the project's writers
(``received_otlp``: ``.jsonl`` / ``.pb`` / ``.tree.txt``; ``.logs.jsonl`` / ``.logs.pb`` as
``codex_cli_otel.py`` writes them). ``OTEL_BSP_SCHEDULE_DELAY=200`` (the OTel JS SDK's
standard variable): opencode does not flush its batch processor at exit, and with the default
5 s every span after a turn's first export was lost. The MCP server exports its own spans to
a separate path of the receiver (``OTLP_TRACES_URL``), where they are counted
(``mcp_server_spans_not_written``) and not written: opencode sends no trace context in the
MCP ``_meta``, so each ``tools/call`` span is a trace of its own, not opencode's telemetry.

The model is an OpenAI-compatible Chat Completions endpoint on the loopback server; the AI
SDK streams (``stream: true``), so the scripted answer is sent as ``chat.completion.chunk``
server-sent events (``genkit_agent.py``'s ``sse_chunks``). Requests offering the store tools
are the agent loop and take the script's next answer (tool names as offered); any other
request (opencode's title generation etc.) gets a short text answer without moving the script
and is counted in ``side_requests``. Network: run inside ``unshare -rn`` (loopback only);
models.dev fetch, autoupdate, share, default plugins and LSP downloads are switched off by
opencode's own ``OPENCODE_DISABLE_*`` variables.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

for _key in [k for k in os.environ if k.startswith(("OTEL_", "OPENCODE_", "OPENAI_"))]:
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

FOLDER = common.TRACES / "opencode-cli-otel"
NODE_DIR = SCRIPTS / "node-opencode"
OPENCODE = NODE_DIR / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"
SERVER_SCRIPT = SCRIPTS / "mcp_store_server.py"
MCP_SERVER_NAME = "store"
PACKAGES = ("mcp", "opentelemetry-sdk", "opentelemetry-proto", "protobuf")
NODE_PACKAGES = ("opencode-ai", "opencode-linux-x64")


class State:
    main: ClassVar[list[dict[str, Any]]] = []
    side: ClassVar[list[dict[str, Any]]] = []
    traces: ClassVar[list[ExportTraceServiceRequest]] = []
    logs: ClassVar[list[ExportLogsServiceRequest]] = []
    metrics = 0
    other_paths: ClassVar[list[str]] = []
    mcp_server_spans = 0
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


def mcp_server_traces_route(request: scripted_model.Request) -> scripted_model.Reply:
    """The MCP server's own spans: counted, not written (see the module docstring)."""
    export = ExportTraceServiceRequest()
    _parse(request, export)
    State.mcp_server_spans += len(received_otlp.all_spans(export))
    return _answer(request, ExportTraceServiceResponse())


def metrics_route(request: scripted_model.Request) -> scripted_model.Reply:
    State.metrics += 1
    return _answer(request, ExportMetricsServiceResponse())


# --------------------------------------------------------------------------- the model


def sse_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """A scripted Chat Completions response as ``chat.completion.chunk`` events (as in
    ``genkit_agent.py``): the message, the finish reason, the usage."""
    choice = response["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
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


def _offered(body: dict[str, Any]) -> list[str]:
    return [str((t.get("function") or {}).get("name", "")) for t in body.get("tools") or []]


def _loop_answer(body: dict[str, Any]) -> dict[str, Any]:
    State.main.append(body)
    names = _offered(body)
    answer = scripted_model.chat_completion(body)
    for call in answer["choices"][0]["message"].get("tool_calls") or []:
        tool = call["function"]["name"]
        offered = next((n for n in names if n == tool or n.endswith("_" + tool)), tool)
        State.tool_names[tool] = offered
        call["function"]["name"] = offered
    return answer


def _side_answer(body: dict[str, Any]) -> dict[str, Any]:
    State.side.append(body)
    n = len(State.side)
    message = {"role": "assistant", "content": "Music store support"}
    return scripted_model.completion(body, message, response_id=f"side_{n}", finish_reason="stop")


def model_route(request: scripted_model.Request) -> scripted_model.Reply:
    body = request.json()
    loop = any(n.endswith("lookup_invoice") for n in _offered(body))
    answer = _loop_answer(body) if loop else _side_answer(body)
    if not body.get("stream"):
        return scripted_model.Reply.json(answer)
    events = "".join(f"data: {json.dumps(c)}\n\n" for c in sse_chunks(answer)) + "data: [DONE]\n\n"
    return scripted_model.Reply(events.encode(), content_type="text/event-stream")


def other_route(request: scripted_model.Request) -> scripted_model.Reply:
    State.other_paths.append(request.path)
    raise scripted_model.NotScripted(404, f"not scripted: {request.path}")


SERVER = scripted_model.LoopbackServer(
    {
        r"/v1/chat/completions": model_route,
        r"/v1/traces": traces_route,
        r"/mcp-server/v1/traces": mcp_server_traces_route,
        r"/v1/logs": logs_route,
        r"/v1/metrics": metrics_route,
        scripted_model.StoreEndpoint.PATH: scripted_model.StoreEndpoint(),
        r".*": other_route,
    }
)


def config() -> dict[str, Any]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": f"{SERVER.url}/v1", "apiKey": "sk-offline"},
                "models": {common.MODEL_NAME: {"name": common.MODEL_NAME, "tool_call": True}},
            }
        },
        "model": f"scripted/{common.MODEL_NAME}",
        "small_model": f"scripted/{common.MODEL_NAME}",
        "mcp": {
            MCP_SERVER_NAME: {
                "type": "local",
                "command": [sys.executable, str(SERVER_SCRIPT)],
                "environment": {
                    "STORE_URL": f"{SERVER.url}/store",
                    "OTLP_TRACES_URL": f"{SERVER.url}/mcp-server/v1/traces",
                    "NO_PROXY": "127.0.0.1,localhost",
                },
                "enabled": True,
            }
        },
        "agent": {
            common.AGENT_NAME: {
                "description": "Music store customer support",
                "mode": "primary",
                "prompt": common.SYSTEM_PROMPT,
                "permission": {"*": "deny", f"{MCP_SERVER_NAME}_*": "allow"},
            }
        },
        "default_agent": common.AGENT_NAME,
        "autoupdate": False,
        "share": "disabled",
        "experimental": {"openTelemetry": True},
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


def _node_versions() -> dict[str, str]:
    found: dict[str, str] = {}
    for package in NODE_PACKAGES:
        path = NODE_DIR / "node_modules" / package / "package.json"
        if path.exists():
            found[package] = json.loads(path.read_text())["version"]
    return found


def _turn_traces(requests: list[ExportTraceServiceRequest], before: int) -> list[str]:
    """Trace ids, received since export ``before``, that hold an AI SDK call of the turn
    (a span with ``ai.operationId``): the turn's model calls and tool executions."""
    ids: list[str] = []
    for request in requests[before:]:
        for span in received_otlp.all_spans(request):
            keys = {kv.key for kv in span.attributes}
            tid = span.trace_id.hex()
            if "ai.operationId" in keys and tid not in ids:
                ids.append(tid)
    ordered = received_otlp.ids_of(requests[before:])
    return [t for t in ordered if t in ids]


def run_turn(
    env: dict[str, str], project: Path, text: str, session: str | None
) -> tuple[str | None, str | None, list[str]]:
    """One ``opencode run`` process: (final text, session id, errors)."""
    argv = [str(OPENCODE), "run", "--format", "json", "--agent", common.AGENT_NAME]
    if session is not None:
        argv += ["--session", session]
    done = subprocess.run(
        argv,
        input=text,  # (see the module docstring: a positional message is quoted)
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if os.environ.get("CAPTURE_DEBUG"):
        print(done.stdout, done.stderr[-4000:], file=sys.stderr)
    texts: list[str] = []
    errors: list[str] = []
    sid = session
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        sid = event.get("sessionID") or sid
        part = event.get("part") or {}
        if event.get("type") == "text" and part.get("text"):
            texts.append(str(part["text"]))
        if event.get("type") == "error":
            errors.append(json.dumps(event)[:600])
    if done.returncode != 0:
        errors.append(f"exit {done.returncode}: {done.stderr[-600:]}")
    return (texts[-1] if texts else None), sid, errors


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    State.main.clear()
    State.side.clear()
    State.traces.clear()
    State.logs.clear()
    State.other_paths.clear()
    State.tool_names.clear()
    State.metrics = 0
    State.mcp_server_spans = 0
    home = Path(tempfile.mkdtemp(prefix="cap-opencode-home-"))
    project = Path(tempfile.mkdtemp(prefix="cap-opencode-project-"))
    config_file = home / "opencode.json"
    config_file.write_text(json.dumps(config(), indent=1))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_CONFIG": str(config_file),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "OTEL_EXPORTER_OTLP_ENDPOINT": SERVER.url,
        "OTEL_BSP_SCHEDULE_DELAY": os.environ.get("CAPTURE_BSP_DELAY", "200"),
        "NO_PROXY": "127.0.0.1,localhost",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
    }
    finals: list[str | None] = []
    run_errors: list[str] = []
    sessions: list[str] = []
    turn_traces: list[str] = []
    session: str | None = None
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(State.traces)
        final, sid, errors = run_turn(env, project, text, session)
        time.sleep(1.5)  # exports at exit (the MCP server's too)
        finals.append(final)
        run_errors += [f"turn {turn}: {e}" for e in errors]
        if sid:
            sessions.append(sid)
        session = sid if scenario.session_id is not None else None
        turn_traces.extend(_turn_traces(State.traces, before))
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
        {**_node_versions(), **common.versions(*PACKAGES)},
        session_id=session_id,
        run_errors=run_errors,
        notes="opencode session id(s) (its --format json events): " + ", ".join(sessions),
        extra={
            "reference_session_id": scenario.session_id,
            "tool_names": dict(State.tool_names),
            "side_requests": len(State.side),
            "agent_loop_requests": len(State.main),
            "metrics_exports": State.metrics,
            "mcp_server_spans_not_written": State.mcp_server_spans,
            "unscripted_paths": sorted(set(State.other_paths)),
        },
    )
    if os.environ.get("CAPTURE_DEBUG"):
        Path(f"/tmp/opencode-{name}-requests.json").write_text(
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
