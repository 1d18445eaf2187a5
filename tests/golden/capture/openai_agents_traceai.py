"""Capture the OpenAI Agents SDK traced by Future AGI's traceAI (``traceai-openai-agents``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-openai-agents-traceai
    /tmp/cap-openai-agents-traceai/bin/pip install traceai-openai-agents openai-agents \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-openai-agents-traceai/bin/python \
        tests/golden/capture/openai_agents_traceai.py [scenario ...]'

Captured with traceAI-openai-agents 0.1.6, fi-instrumentation-otel 1.1.0, openai-agents
0.24.0, openai 3.57.0 (its HTTP client httpx2 2.16.2), opentelemetry-sdk / -api /
-exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto 1.45.2,
opentelemetry-instrumentation 0.66b2, protobuf 7.36.2, Python 3.12.1, in a network namespace
with only loopback up. Writes ``tests/golden/traces/openai-agents-traceai/``.

The agent, tools, scripted model and memory are those of ``openai_agents.py``: real
``Agent``/``Runner``, ``@function_tool``s, ``SQLiteSession`` memory for the multi-turn
scenario, and the SDK's default ``OpenAIResponsesModel`` talking to a real ``AsyncOpenAI``
client; only the model is scripted, as Responses-API JSON served by an
``httpx.MockTransport`` (no network). The refused refund raises inside the tool: the SDK's
default failure handler reports it to the model.

Instrumentation, as traceAI's README shows: ``fi_instrumentation.register(project_type=
ProjectType.OBSERVE, project_name=...)`` (traceAI's own ``TracerProvider``, its default
``BatchSpanProcessor`` and ``HTTPSpanExporter``, the default FI semantic convention) and
``OpenAIAgentsInstrumentor().instrument(tracer_provider=..., config=TraceConfig(...))``
with every content switch on (``hide_inputs`` / ``hide_outputs`` / ``hide_input_messages``
/ ``hide_output_messages`` / ``hide_input_text`` / ``hide_output_text`` False, the
defaults). The instrumentor's ``FiTracingProcessor`` replaces the SDK's trace processors
(``exclusive_processor`` defaults to True), so the SDK's exporter to OpenAI's trace ingest
is gone. No key: ``FI_API_KEY`` / ``FI_SECRET_KEY`` are unset (the exporter then sends no
auth header) and ``FI_BASE_URL`` (traceAI's documented collector setting) points at a
loopback server in this process, whose ``received_otlp.receiver`` route answers traceAI's
fixed path ``/tracer/v1/traces`` (OTLP/HTTP protobuf, as sent). ``force_flush`` on the
provider after every user turn; the ``.jsonl`` keeps its export requests as received.
Session id: ``fi_instrumentation.using_session(session id)`` around each turn (traceAI's
context attribute, copied by its ``FITracer`` onto every span it starts) and the SDK's
``RunConfig(group_id=session id)``. Every ``OTEL_*`` / ``FI_*`` / ``OPENAI_*`` variable is
removed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "FI_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

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

FOLDER = common.TRACES / "openai-agents-traceai"
WORKFLOW = "music store support turn"
PROJECT = "music-store-support-openai-agents-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceAI-openai-agents",
    "fi-instrumentation-otel",
    "openai-agents",
    "openai",
    "httpx2",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


SERVER = scripted_model.LoopbackServer({TRACEAI_PATH: received_otlp.receiver(_keep_export)})
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool  # noqa: E402
from agents.models.openai_responses import OpenAIResponsesModel  # noqa: E402
from fi_instrumentation import TraceConfig, register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from traceai_openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
OpenAIAgentsInstrumentor().instrument(
    tracer_provider=PROVIDER,
    config=TraceConfig(
        hide_inputs=False,
        hide_outputs=False,
        hide_input_messages=False,
        hide_output_messages=False,
        hide_input_text=False,
        hide_output_text=False,
    ),
)

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
    "Future AGI's traceAI: fi_instrumentation.register(project_type=OBSERVE) (its own "
    "TracerProvider, BatchSpanProcessor and HTTPSpanExporter, FI semantic convention) and "
    "traceai_openai_agents.OpenAIAgentsInstrumentor (an exclusive TracingProcessor of the "
    "SDK), every TraceConfig content switch on; exported over OTLP/HTTP protobuf to a "
    "loopback receiver at FI_BASE_URL + /tracer/v1/traces, no key; force_flush after every "
    "turn. multi_turn: SQLiteSession memory, RunConfig(group_id=session id) and "
    "fi_instrumentation.using_session(session id) around each turn; see NOTES.md"
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
    assert PROVIDER.force_flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        config = RunConfig(workflow_name=WORKFLOW, group_id=session_id)
        scope = using_session(session_id) if session_id else contextlib.nullcontext()
        with scope:
            result = await Runner.run(agent, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        assert PROVIDER.force_flush(), "traceAI's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
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
        # (non-fatal)" (data.error "Tool execution failed. Error details are redacted."),
        # which traceAI writes as the span's status description "<message>: <data>".
        tool_error_contains="Error running tool (non-fatal)",
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
