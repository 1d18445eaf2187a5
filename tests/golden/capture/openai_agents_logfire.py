"""Capture the OpenAI Agents SDK through Pydantic Logfire's ``instrument_openai_agents``.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-oa-logfire
    /tmp/cap-oa-logfire/bin/pip install openai-agents logfire opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -n sh -c 'ip link set lo up; \
        /tmp/cap-oa-logfire/bin/python tests/golden/capture/openai_agents_logfire.py [scenario ...]'

Captured with openai-agents 0.24.0, openai 3.57.0 (its HTTP client httpx2 2.16.2),
logfire 5.4.0 (logfire-sdk 5.4.0), opentelemetry-sdk / -api / -exporter-otlp-proto-common /
-proto 1.45.2, protobuf 7.36.2, Python 3.12.1. Writes
``tests/golden/traces/openai-agents-logfire/``.

The agent, tools, scripted model and memory are those of ``openai_agents.py``: real
``Agent``/``Runner``, ``@function_tool``s, ``SQLiteSession`` memory for the multi-turn
scenario, and the SDK's default ``OpenAIResponsesModel`` talking to a real ``AsyncOpenAI``
client; only the model is scripted, as Responses-API JSON served by an
``httpx.MockTransport`` (no network). The refused refund raises inside the tool: the SDK's
default failure handler reports it to the model.

Only the instrumentation differs: ``logfire.configure(send_to_logfire=False,
console=False, additional_span_processors=[BatchSpanProcessor(recorder)])`` (Logfire builds
and installs its own ``TracerProvider``; the recorder is one more processor on it, behind
Logfire's scrubbing wrapper, defaults otherwise) and ``logfire.instrument_openai_agents()``
(wraps the SDK's global trace provider, so every SDK trace/span also becomes a Logfire
span). No token, nothing sent anywhere: the SDK's own tracing processor (the exporter to
OpenAI's trace ingest endpoint) is removed with ``set_trace_processors([])`` (Logfire's
wrapper does not need it: it creates its spans from the SDK's ``create_trace`` /
``create_span``), ``OPENAI_API_KEY`` and every ``OTEL_EXPORTER_OTLP*`` / ``LOGFIRE_*``
variable are unset, and the capture runs in a network namespace with only loopback up.
Session id: the SDK's documented ``RunConfig(group_id=...)`` (a conversation id), which
Logfire records as ``group_id`` on the trace's root span.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "LOGFIRE_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind

import common  # noqa: E402
import logfire  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

try:  # openai >= 3 ships its HTTP client as httpx2
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

RECORDER = common.BatchRecorder()
PROCESSOR = BatchSpanProcessor(
    RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
)
logfire.configure(
    send_to_logfire=False,
    console=False,
    service_name="music-store-support-openai-agents",
    environment="acceptance-test",
    additional_span_processors=[PROCESSOR],
)
logfire.instrument_openai_agents()

from agents import (  # noqa: E402
    Agent,
    RunConfig,
    Runner,
    SQLiteSession,
    function_tool,
    set_trace_processors,
)
from agents.models.openai_responses import OpenAIResponsesModel  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

set_trace_processors([])  # the SDK's own exporter to OpenAI's trace ingest: off

FOLDER = common.TRACES / "openai-agents-logfire"
WORKFLOW = "music store support turn"
PACKAGES = (
    "openai-agents",
    "openai",
    "httpx2",
    "logfire",
    "logfire-sdk",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
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
    "OpenAI Agents SDK (OpenAIResponsesModel over a scripted httpx MockTransport) + "
    "logfire.instrument_openai_agents() (scope logfire.openai_agents), "
    "logfire.configure(send_to_logfire=False, console=False, additional_span_processors="
    "[BatchSpanProcessor(recorder)]), default scrubbing. Logfire wraps the SDK's trace "
    "provider: per turn one root 'OpenAI Agents trace: music store support turn' span "
    "(group_id = the session id in multi_turn, agent_trace_id), an 'Agent run' span per "
    "agent run, one 'Responses API with ...' span per model request (gen_ai.* request/"
    "response attrs, raw_input, response, events = the conversation as Logfire's event "
    "list) and one 'Function: <tool>' span per tool call (input = JSON arguments, output "
    "= the returned dict as str; no call id). The refused refund raises; the SDK's default "
    "failure handler reports it to the model (output = 'An error occurred while running "
    "the tool. Please try again.') and sets the SDK span error {message: 'Error running "
    "tool (non-fatal)', data.error: 'Tool execution failed. Error details are "
    "redacted.'}; Logfire copies it into 'error', sets level error (status ERROR, no "
    "description) and records no exception event: the real message is lost. multi_turn: "
    "SQLiteSession memory and RunConfig(group_id=session id). The SDK's own trace "
    "processor (OpenAI's trace ingest) is removed; nothing is sent anywhere."
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
    session = SQLiteSession(scenario.session_id) if scenario.session_id else None
    PROCESSOR.force_flush()
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        config = RunConfig(workflow_name=WORKFLOW, group_id=scenario.session_id)
        result = await Runner.run(agent, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        PROCESSOR.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    await client.close()
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
        # The SDK redacts the exception: its span error says only "Error running tool
        # (non-fatal)", and Logfire's record_exception (only when data.error == str(exc))
        # does not fire. Logfire's function spans carry no marker evald reads, so the
        # call's error is what the model was told, in the next request's history.
        tool_error_contains="An error occurred while running the tool",
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    logfire.shutdown()


if __name__ == "__main__":
    main()
