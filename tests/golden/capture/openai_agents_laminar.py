"""Capture the OpenAI Agents SDK traced by Laminar's Python SDK (``lmnr``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-lmnr
    /tmp/cap-lmnr/bin/pip install lmnr openai-agents
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-lmnr/bin/python \
        tests/golden/capture/openai_agents_laminar.py [scenario ...]'

Captured with lmnr 0.8.1, openai-agents 0.24.0, openai 3.57.0 (its HTTP client httpx2 2.16.2),
opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto
1.45.1, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/openai-agents-laminar/``.

The agent, tools, scripted model and memory are those of ``openai_agents.py``: real
``Agent``/``Runner``, ``@function_tool``s, ``SQLiteSession`` memory for the multi-turn
scenario, and the SDK's default ``OpenAIResponsesModel`` talking to a real ``AsyncOpenAI``
client; only the model is scripted, as Responses-API JSON served by an
``httpx.MockTransport`` (no network). The refused refund raises inside the tool: the SDK's
default failure handler reports it to the model.

Instrumentation: ``Laminar.initialize()`` with its defaults (every instrument it finds;
for this SDK that is Laminar's own ``OpenAIAgentsInstrumentor``, a ``TracingProcessor``
added with ``add_trace_processor`` that mirrors each SDK trace/span into a Laminar span,
plus wrappers of the models' ``get_response`` for the system prompt and model name). No
project key: Laminar then exports with its own ``LaminarSpanExporter`` to the endpoint of
``OTEL_EXPORTER_OTLP_ENDPOINT`` (documented by Laminar for any OTel backend), here the
``received_otlp.receiver`` route of a loopback server in this process, with
``OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`` (OTLP/HTTP protobuf, gzip). Laminar's own
``BatchSpanProcessor`` (batch size 64, its default) is flushed with ``Laminar.flush()``
after every user turn; the ``.jsonl`` keeps its export requests as received. The SDK's
default trace processor (the exporter to OpenAI's trace ingest) is removed with
``set_trace_processors([])`` before ``Laminar.initialize()`` adds Laminar's.
Session id: ``RunConfig(group_id=session id, trace_metadata={"session_id": session id})``;
Laminar's processor copies the trace metadata to the root span and turns its
``session_id`` key into Laminar's trace session id (``lmnr.association.properties.
session_id``). Every ``OTEL_*`` / ``LMNR_*`` / ``OPENAI_*`` variable is removed first.
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
for _name in [n for n in os.environ if n.startswith(("OTEL_", "LMNR_", "OPENAI_"))]:
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

SERVICE = "music-store-support-openai-agents-laminar"
FOLDER = common.TRACES / "openai-agents-laminar"
WORKFLOW = "music store support turn"
PACKAGES = (
    "lmnr",
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
        "OTEL_EXPORTER_OTLP_ENDPOINT": SERVER.url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
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
from lmnr import Laminar  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

set_trace_processors([])  # the SDK's own exporter to OpenAI's trace ingest: off
# app_name is Laminar's service.name (init_tracing's default is sys.argv[0]); it is not a
# parameter of initialize(), so the resource keeps the script path as service.name.
Laminar.initialize(project_api_key=None)

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
    "Laminar's Python SDK (lmnr): Laminar.initialize() with its defaults, no project key, "
    "exported by Laminar's own LaminarSpanExporter over OTLP/HTTP protobuf to a loopback "
    "receiver (OTEL_EXPORTER_OTLP_ENDPOINT); Laminar.flush() after every turn. Laminar's "
    "OpenAIAgentsInstrumentor mirrors the SDK's trace into a root span named after the "
    "workflow and each SDK span into a Laminar span (lmnr.span.type LLM / TOOL / DEFAULT); "
    "multi_turn: SQLiteSession memory, RunConfig(group_id=session id, trace_metadata="
    "{'session_id': session id}); the SDK's own trace processor is removed; see NOTES.md"
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
    assert Laminar.flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        config = RunConfig(
            workflow_name=WORKFLOW,
            group_id=session_id,
            trace_metadata={"session_id": session_id} if session_id else None,
        )
        result = await Runner.run(agent, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        assert Laminar.flush(), "Laminar's export did not flush"
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
        # which Laminar records as the span's status description and exception type.
        tool_error_contains="Error running tool (non-fatal)",
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
    finally:
        Laminar.shutdown()  # type: ignore[no-untyped-call]
        SERVER.shutdown()


if __name__ == "__main__":
    main()
