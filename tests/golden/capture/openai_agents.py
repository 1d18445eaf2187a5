"""Capture the OpenAI Agents SDK through its OpenTelemetry bridges.

Not run in CI. Run it in a venv of its own (never evald's)::

    python3.12 -m venv /tmp/cap-oai
    /tmp/cap-oai/bin/pip install openai-agents openinference-instrumentation-openai-agents \
        opentelemetry-instrumentation-openai-agents opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-oai/bin/python tests/golden/capture/openai_agents.py openinference [scenario ...]
    /tmp/cap-oai/bin/python tests/golden/capture/openai_agents.py traceloop [scenario ...]

Writes ``tests/golden/traces/openai-agents-openinference/`` (openinference-instrumentation-
openai-agents, exclusive processor) or ``…/openai-agents-traceloop/`` (Traceloop's
opentelemetry-instrumentation-openai-agents, replacing the SDK's backend exporter).

Real ``Agent``/``Runner``, ``@function_tool``s, ``SQLiteSession`` memory for the
multi-turn scenario, and the SDK's default ``OpenAIResponsesModel`` talking to a real
``AsyncOpenAI`` client; only the model is scripted, as Responses-API JSON served by an
``httpx.MockTransport`` (no network). The refused refund raises inside the tool:
the SDK's default failure handler reports it to the model.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common

try:  # openai >= 3 ships its HTTP client as httpx2
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]
from opentelemetry import trace

INSTRUMENTATION = next((a for a in sys.argv[1:] if a in ("openinference", "traceloop")), None)
if INSTRUMENTATION is None:
    raise SystemExit("usage: openai_agents.py openinference|traceloop [scenario ...]")
PROVIDER, RECORDER = common.make_provider("music-store-support-openai-agents")
trace.set_tracer_provider(PROVIDER)

from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool  # noqa: E402
from agents.models.openai_responses import OpenAIResponsesModel  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

if INSTRUMENTATION == "openinference":
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=PROVIDER)
    PACKAGES = (
        "openai-agents",
        "openai",
        "openinference-instrumentation-openai-agents",
        "openinference-instrumentation",
        "openinference-semantic-conventions",
        "opentelemetry-sdk",
    )
else:
    from opentelemetry.instrumentation.openai_agents import (
        OpenAIAgentsInstrumentor as TraceloopInstrumentor,
    )

    TraceloopInstrumentor(replace_existing_processors=True).instrument(tracer_provider=PROVIDER)
    PACKAGES = (
        "openai-agents",
        "openai",
        "opentelemetry-instrumentation-openai-agents",
        "opentelemetry-semantic-conventions-ai",
        "opentelemetry-sdk",
    )

FOLDER = common.TRACES / f"openai-agents-{INSTRUMENTATION}"
WORKFLOW = "music store support turn"


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
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        config = RunConfig(workflow_name=WORKFLOW, group_id=scenario.session_id)
        if INSTRUMENTATION == "openinference" and scenario.session_id:
            with using_session(scenario.session_id):
                result = await Runner.run(agent, text, session=session, run_config=config)
        else:
            result = await Runner.run(agent, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    session_label = scenario.session_id
    notes = (
        "multi_turn: SQLiteSession memory and RunConfig(group_id=session id); "
        "the refused refund raises inside the tool and the SDK's default failure handler "
        "reports it to the model; the tool span says only 'Error running tool (non-fatal)' "
        "... 'Error details are redacted' (the real message is lost)"
    )
    if INSTRUMENTATION == "openinference":
        notes += "; session.id only through openinference using_session() around each turn"
    else:
        notes += "; Traceloop maps neither group_id nor any session: no session id in the spans"
        session_label = None
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=notes,
        session_id=session_label,
        # The SDK redacts the exception: the span says only this (and the model gets a
        # generic "An error occurred while running the tool. Please try again.").
        tool_error_contains="Error running tool (non-fatal)",
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected([a for a in sys.argv[1:] if a != INSTRUMENTATION]):
        asyncio.run(run(name))
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
