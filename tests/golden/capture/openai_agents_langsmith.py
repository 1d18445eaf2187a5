"""Capture the OpenAI Agents SDK traced by LangSmith's ``OpenAIAgentsTracingProcessor`` in
LangSmith's OpenTelemetry mode (``LANGSMITH_TRACING_MODE=otel``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-openai-agents-langsmith
    /tmp/cap-openai-agents-langsmith/bin/pip install "langsmith[otel,openai-agents]" \
        openai-agents opentelemetry-sdk opentelemetry-exporter-otlp-proto-http \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-openai-agents-langsmith/bin/python \
        tests/golden/capture/openai_agents_langsmith.py [scenario ...]'

Captured with langsmith 0.15.1, openai-agents 0.24.0, openai 3.57.0 (its HTTP client httpx2
2.16.2), opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common /
-proto 1.45.2, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up.
Writes ``tests/golden/traces/openai-agents-langsmith/``.

The agent, tools, scripted model and memory are those of ``openai_agents.py``: real
``Agent``/``Runner`` (agent ``music_store_support``), ``@function_tool``s, ``SQLiteSession``
memory for the multi-turn scenario, and the SDK's default ``OpenAIResponsesModel`` talking to
a real ``AsyncOpenAI`` client; only the model is scripted, as Responses-API JSON served by an
``httpx.MockTransport`` (no network). The refused refund raises inside the tool: the SDK's
default failure handler reports it to the model.

Instrumentation, as LangSmith's docs show:
``set_trace_processors([OpenAIAgentsTracingProcessor()])``
(``langsmith.integrations.openai_agents_sdk``, re-exported by ``langsmith.wrappers``), which
replaces the SDK's own exporter to OpenAI's trace ingest and turns every SDK trace/span into a
LangSmith run; with ``LANGSMITH_TRACING=true`` and ``LANGSMITH_TRACING_MODE=otel`` (the
installed version's documented switch; the legacy ``LANGSMITH_OTEL_ENABLED`` +
``LANGSMITH_OTEL_ONLY`` resolve to the same ``otel`` mode) the LangSmith client writes those
runs as OTel spans instead of posting them. No global ``TracerProvider`` is set, so LangSmith
builds its own (``get_otlp_tracer_provider``: ``BatchSpanProcessor`` + the OTel SDK's
``OTLPSpanExporter``, OTLP/HTTP protobuf) and ``OTEL_EXPORTER_OTLP_ENDPOINT`` points it at a
loopback server in this process whose ``received_otlp.receiver`` route answers ``/v1/traces``.
LangSmith records inputs and outputs by default (``LANGSMITH_HIDE_INPUTS`` /
``LANGSMITH_HIDE_OUTPUTS`` unset: content on). ``LANGSMITH_ENDPOINT`` is a closed local port
and the key a dummy: nothing is sent anywhere else. After every user turn the client is
flushed and the provider force-flushed; the ``.jsonl`` keeps the export requests as received.
Session: ``RunConfig(group_id=session id)``, which the processor copies into the run metadata
as ``thread_id`` (LangSmith's documented thread key). Each turn arrives as two traces: the
run's spans, and a lone copy of its root (the SDK's trace run, posted late) holding the turn's
input and answer, kept as a stray trace (see the folder's NOTES.md). Every ``OTEL_*`` /
``LANGSMITH_*`` / ``LANGCHAIN_*`` / ``OPENAI_*`` variable is removed first.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [
    n for n in os.environ if n.startswith(("OTEL_", "LANGSMITH_", "LANGCHAIN_", "OPENAI_"))
]:
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

FOLDER = common.TRACES / "openai-agents-langsmith"
WORKFLOW = "music store support turn"
PACKAGES = (
    "langsmith",
    "openai-agents",
    "openai",
    "httpx2",
    "opentelemetry-sdk",
    "opentelemetry-api",
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


SERVER = scripted_model.LoopbackServer(
    {received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export)}
)
os.environ.update(
    {
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_TRACING_MODE": "otel",
        "LANGSMITH_API_KEY": "offline",
        "LANGSMITH_ENDPOINT": "http://127.0.0.1:9",
        "LANGSMITH_PROJECT": "music-store-golden",
        "OTEL_EXPORTER_OTLP_ENDPOINT": SERVER.url,
        "OTEL_SERVICE_NAME": "music-store-support-openai-agents-langsmith",
        "NO_PROXY": "127.0.0.1,localhost",
    }
)

from agents import (  # noqa: E402
    Agent,
    RunConfig,
    Runner,
    SQLiteSession,
    function_tool,
    set_trace_processors,
)
from agents.models.openai_responses import OpenAIResponsesModel  # noqa: E402
from langsmith.integrations.openai_agents_sdk import OpenAIAgentsTracingProcessor  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROCESSOR = OpenAIAgentsTracingProcessor()
set_trace_processors([PROCESSOR])


def _flush() -> None:
    PROCESSOR.client.flush()
    provider: Any = trace.get_tracer_provider()
    assert provider.force_flush(), "LangSmith's OTLP export did not flush"


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


def _turn_trace(requests: list[ExportTraceServiceRequest]) -> str:
    """The trace of one turn's agent run: LangSmith's OTel mode exports every turn as two
    traces (see NOTES.md), the run's spans and a lone copy of its root span holding the
    turn's input and answer; the lone one is left a stray trace in the labels."""
    counts: dict[str, int] = {}
    for request in requests:
        for span in received_otlp.all_spans(request):
            counts[span.trace_id.hex()] = counts.get(span.trace_id.hex(), 0) + 1
    ids = received_otlp.ids_of(requests)
    if len(ids) != 2 or sorted(counts.values())[0] != 1:
        raise SystemExit(f"expected a run's trace and a lone root span, got {counts}")
    return max(ids, key=counts.__getitem__)


NOTES = (
    "OpenAI Agents SDK (OpenAIResponsesModel over a scripted httpx MockTransport) traced by "
    "LangSmith's OpenAIAgentsTracingProcessor (set_trace_processors, replacing the SDK's "
    "exporter) with LANGSMITH_TRACING_MODE=otel: LangSmith's own TracerProvider "
    "(get_otlp_tracer_provider, BatchSpanProcessor + OTLPSpanExporter) exporting OTLP/HTTP "
    "protobuf to a loopback receiver at OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; client "
    "flush + force_flush after every turn. multi_turn: SQLiteSession memory and "
    "RunConfig(group_id=session id), which LangSmith copies to metadata thread_id. Each turn "
    "is exported as two traces: the run's spans (the turn's trace here) and a lone copy of "
    "the root span holding the turn's input and answer (stray_traces); see NOTES.md"
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
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        config = RunConfig(workflow_name=WORKFLOW, group_id=session_id)
        result = await Runner.run(agent, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        for _ in range(50):  # the lone root span (see _turn_trace) may end a moment later
            _flush()
            if len(received_otlp.ids_of(Received.requests[before:])) >= 2:
                break
            time.sleep(0.1)
        turn_traces.append(_turn_trace(Received.requests[before:]))
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
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
    finally:
        provider: Any = trace.get_tracer_provider()
        if hasattr(provider, "shutdown"):
            provider.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
