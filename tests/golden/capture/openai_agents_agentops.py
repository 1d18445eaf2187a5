"""Capture the OpenAI Agents SDK traced by the AgentOps SDK (``agentops``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-openai-agents-agentops
    /tmp/cap-openai-agents-agentops/bin/pip install agentops openai-agents
    # agentops 0.4.21's exporter subclasses OTLPSpanExporter and reads its private
    # ``_headers`` / ``_session``, gone in opentelemetry-exporter-otlp-proto-http 1.45:
    # pin the last OpenTelemetry release that has them (as agentops_manual.py does).
    /tmp/cap-openai-agents-agentops/bin/pip install opentelemetry-api==1.44.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0 \
        opentelemetry-exporter-otlp-proto-common==1.44.0 opentelemetry-proto==1.44.0 \
        opentelemetry-instrumentation==0.65b0 opentelemetry-semantic-conventions==0.65b0
    /tmp/cap-openai-agents-agentops/bin/pip uninstall -y opentelemetry-exporter-otlp-common \
        opentelemetry-exporter-http-transport  # 1.45-only helpers, left behind by the pin
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-openai-agents-agentops/bin/python \
        tests/golden/capture/openai_agents_agentops.py [scenario ...]'

Captured with agentops 0.4.21, openai-agents 0.24.0, openai 3.57.0 (its HTTP client httpx2
2.16.2), opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-http /
-exporter-otlp-proto-common 1.44.0, opentelemetry-instrumentation / -semantic-conventions
0.65b0, protobuf 7.36.2, wrapt 1.17.3, Python 3.12.1, in a network namespace with only
loopback up. Writes ``tests/golden/traces/openai-agents-agentops/``.

The agent, tools, scripted model and memory are those of ``openai_agents.py``: real
``Agent``/``Runner``, ``@function_tool``s, ``SQLiteSession`` memory for the multi-turn
scenario, and the SDK's default ``OpenAIResponsesModel`` talking to a real ``AsyncOpenAI``
client; only the model is scripted, as Responses-API JSON served by an
``httpx.MockTransport`` (no network). The refused refund raises inside the tool: the SDK's
default failure handler reports it to the model.

Instrumentation, as AgentOps' OpenAI Agents SDK integration page shows: ``agentops.init``
before the SDK is imported; its import hook then installs AgentOps'
``OpenAIAgentsInstrumentor`` when ``agents`` is imported (``set_trace_processors([its
processor])``: it *replaces* the SDK's default processor, so nothing goes to OpenAI's trace
ingest), and, an agentic library being active, takes its own OpenAI client instrumentation
off again. AgentOps has no content switch: messages, arguments and results are always
recorded. ``auto_start_session=False`` and one ``agentops.start_trace(...)`` /
``agentops.end_trace(..., "Success")`` per user turn (AgentOps' documented manual trace
control: a trace *is* its session), so that each turn is an OTel trace of its own; with the
default ``auto_start_session=True`` a whole process is one trace whose root ends at exit.
Session id in ``multi_turn``: ``RunConfig(group_id=session id)`` (the SDK's conversation id)
and the documented ``agentops.update_trace_metadata({"session_id": ...})`` inside each
turn's trace.

Where it goes: AgentOps exports OTLP/HTTP protobuf to ``exporter_endpoint`` with a bearer JWT
it fetches from ``endpoint`` + ``/v3/auth/token`` with the API key; both point at a loopback
server in this process: ``/v1/traces`` is ``received_otlp.receiver``, ``/v3/auth/token`` a
stub answering a fake token (a dummy UUID API key). ``end_trace`` flushes the batch
processor; the ``.jsonl`` keeps the export requests as received. The metrics exporter's
endpoint is fixed (``https://otlp.agentops.ai/v1/metrics``): run in ``unshare -rn`` with only
loopback up, it cannot leave the machine. Every ``OTEL_*`` / ``AGENTOPS_*`` / ``OPENAI_*``
variable is removed first; ``AGENTOPS_LOGGING_TO_FILE=false`` (else ``./agentops.log``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "AGENTOPS_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
AGENTOPS_ENV = {"AGENTOPS_LOGGING_TO_FILE": "false"}  # else it writes ./agentops.log
os.environ.update(AGENTOPS_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

try:  # openai >= 3 ships its HTTP client as httpx2
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

FOLDER = common.TRACES / "openai-agents-agentops"
WORKFLOW = "music store support turn"
TRACE_NAME = "music_store_support_turn"
PACKAGES = (
    "agentops",
    "openai-agents",
    "openai",
    "httpx2",
    "opentelemetry-instrumentation",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-semantic-conventions",
    "protobuf",
    "wrapt",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()
    auth: ClassVar[list[Any]] = []


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


def _auth(request: scripted_model.Request) -> scripted_model.Reply:
    Received.auth.append(request.json())
    return scripted_model.Reply.json(
        {"token": "offline-jwt-token", "project_id": "offline-project"}
    )


SERVER = scripted_model.LoopbackServer(
    {received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export), r"/v3/auth/token": _auth}
)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

# The SDK is imported before agentops.init, as AgentOps' own examples do
# (examples/openai_agents/*.py): init then instruments the modules already imported. With
# init first, its import hook instruments ``agents`` while the package is still half
# imported, and 0.4.21 fails ("cannot import name 'set_trace_processors' from partially
# initialized module 'agents'"), leaving the SDK untraced (checked: one span per turn).
import agentops  # noqa: E402
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool  # noqa: E402
from agents.models.openai_responses import OpenAIResponsesModel  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

AGENTOPS_INIT = {
    "api_key": str(uuid.UUID(int=0x0FF11E)),  # a dummy key of the documented UUID shape
    "endpoint": SERVER.url,
    "exporter_endpoint": f"{SERVER.url}{received_otlp.TRACES_PATH}",
    "auto_start_session": False,  # one trace per user turn, started below
    "export_flush_interval": 60_000,  # export when a trace ends (end_trace flushes)
    "log_level": "WARNING",
}
agentops.init(**AGENTOPS_INIT)

from agentops.sdk.core import tracer as agentops_tracer  # noqa: E402

_script = common.active_script


def _response(request: httpx.Request) -> httpx.Response:
    """The Responses API answer of the scripted model (``POST /v1/responses``)."""
    body = json.loads(request.content)
    calls, final = _script().next_response()
    step = _script().step
    if final is not None:
        output: list[dict[str, Any]] = [
            {
                "type": "message",
                "id": f"msg_{_script().turn}{step}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": final, "annotations": []}],
            }
        ]
    else:
        output = [
            {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
            for call_id, name, args in calls
        ]
    prompt_tokens = 50 + 10 * len(body.get("input") or [])
    payload = {
        "id": f"resp_{_script().scenario.name}_{_script().turn}{step}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": common.MODEL_NAME,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "usage": {
            "input_tokens": prompt_tokens,
            "output_tokens": 12,
            "total_tokens": prompt_tokens + 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    return httpx.Response(200, json=payload)


@function_tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@function_tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@function_tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@function_tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@function_tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


NOTES = (
    "OpenAI Agents SDK (OpenAIResponsesModel over a scripted httpx MockTransport) traced by "
    "the AgentOps SDK: agentops.init(auto_start_session=False, endpoint and exporter_endpoint "
    "on a loopback server with a stub /v3/auth/token) before the SDK is imported, so AgentOps' "
    "OpenAIAgentsInstrumentor replaces the SDK's trace processor; one agentops.start_trace / "
    "end_trace per user turn; OTLP/HTTP protobuf to a loopback receiver. multi_turn: "
    "SQLiteSession memory, RunConfig(group_id=session id) and "
    "agentops.update_trace_metadata({'session_id': ...}) in each turn; see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client = AsyncOpenAI(
        api_key="sk-offline",
        base_url="http://scripted-model.invalid/v1",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(_response)),
        max_retries=0,
    )
    agent = Agent(
        name=common.AGENT_NAME,
        instructions=common.SYSTEM_PROMPT,
        model=OpenAIResponsesModel(model=common.MODEL_NAME, openai_client=client),
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    session_id = scenario.session_id
    session = SQLiteSession(session_id) if session_id else None
    assert agentops_tracer.provider is not None
    agentops_tracer.provider.force_flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        trace = agentops.start_trace(TRACE_NAME)
        if session_id is not None:
            agentops.update_trace_metadata({"session_id": session_id})
        config = RunConfig(workflow_name=WORKFLOW, group_id=session_id)
        result = await Runner.run(agent, text, session=session, run_config=config)
        agentops.end_trace(trace, "Success")  # flushes the batch processor
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        agentops_tracer.provider.force_flush()  # nothing may lag behind the trace's end
        turn_traces.extend(
            t for t in received_otlp.ids_of(Received.requests[before:]) if t not in turn_traces
        )
    await client.close()
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session_id,
        # The SDK redacts the exception: its span error is "Error running tool
        # (non-fatal)" (data.error "Tool execution failed. Error details are redacted.").
        tool_error_contains="Error running tool (non-fatal)",
        extra={
            "agentops_env": AGENTOPS_ENV,
            "agentops_init": {k: v for k, v in AGENTOPS_INIT.items() if k != "api_key"},
            "auth_requests": len(Received.auth),
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
    finally:
        SERVER.shutdown()


if __name__ == "__main__":
    main()
