"""Capture an OpenAI Agents SDK handoff (triage agent -> store agent) traced by Logfire.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-oai-handoff-logfire
    /tmp/cap-oai-handoff-logfire/bin/pip install openai-agents==0.24.0 openai==3.57.0 \
        httpx2==2.16.2 logfire==5.4.0 logfire-sdk==5.4.0 opentelemetry-sdk==1.45.2 \
        opentelemetry-api==1.45.2 opentelemetry-proto==1.45.2 \
        opentelemetry-exporter-otlp-proto-common==1.45.2 protobuf==7.36.2
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-oai-handoff-logfire/bin/python \
        tests/golden/capture/openai_agents_handoff_logfire.py [scenario ...]'

Captured with openai-agents 0.24.0, openai 3.57.0 (httpx2 2.16.2), logfire 5.4.0
(logfire-sdk 5.4.0), opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2,
protobuf 7.36.2, Python 3.12.1. Writes
``tests/golden/traces/openai-agents-handoff-logfire/``.

The agents and the routing of the scripted model are those of ``openai_agents_handoff.py``
(written again here): a ``triage`` agent with no tools and ``handoffs=[store_agent]``, and
the store agent (``music_store_support``, the five ``@function_tool``s). Every user turn
starts at the triage agent; its one model call answers with the SDK's handoff tool call
(``transfer_to_music_store_support``), the SDK switches to the store agent, whose model
calls follow the scenario's script; the store agent's final text is the run's answer (the
SDK does not return to the triage agent). The scripted model tells the two agents'
requests apart by their ``instructions`` and declared tools, and echoes both in its
answers, as the Responses API does. The model is the SDK's default
``OpenAIResponsesModel`` with a real ``AsyncOpenAI`` client over an ``httpx.MockTransport``
(no network).

The instrumentation is that of ``openai_agents_logfire.py``: ``logfire.configure(
send_to_logfire=False, console=False, additional_span_processors=[BatchSpanProcessor(
recorder)])`` and ``logfire.instrument_openai_agents()``; the SDK's own trace processor
(OpenAI's trace ingest) is removed with ``set_trace_processors([])``; every ``OTEL_*``,
``LOGFIRE_*`` and ``OPENAI_*`` variable is unset. Multi-turn memory is a ``SQLiteSession``
(in memory) and the session id is the SDK's documented ``RunConfig(group_id=...)``, which
Logfire records as ``group_id`` on each turn's root span.
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
    service_name="music-store-support-openai-agents-handoff",
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

FOLDER = common.TRACES / "openai-agents-handoff-logfire"
WORKFLOW = "music store support turn"
TRIAGE_NAME = "triage"
TRIAGE_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. You cannot look anything "
    "up yourself: hand every customer request over to the music store support agent."
)
HANDOFF_TOOL = f"transfer_to_{common.AGENT_NAME}"  # the SDK's default handoff tool name
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


class Router:
    """Per-turn routing of the scripted model: which agent asked, and what it gets.

    The triage agent's request (its instructions, the handoff tool as its only tool) is
    answered with the handoff call, once per turn; the store agent's requests follow the
    scenario's script (``common.Script``), so ``llm_step`` counts the store agent's calls.
    ``llm_calls_per_turn`` counts every model request, the triage agent's included.
    """

    def __init__(self) -> None:
        self.turn = -1
        self.triage_calls = 0
        self.store_calls = 0
        self.log: list[tuple[int, str]] = []  # (turn, agent) per model request

    def start_turn(self, turn: int) -> None:
        self.turn, self.triage_calls, self.store_calls = turn, 0, 0

    def answer(self, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The response id and output items for one Responses-API request."""
        tools = sorted(t.get("name", "") for t in body.get("tools") or [])
        script = _script()
        if body.get("instructions") == TRIAGE_PROMPT:
            if tools != [HANDOFF_TOOL]:
                raise RuntimeError(f"triage request with tools {tools}")
            if self.triage_calls or self.store_calls:
                raise RuntimeError("the triage agent was asked twice in one turn")
            self.triage_calls += 1
            script.llm_calls[script.turn] += 1
            self.log.append((self.turn, TRIAGE_NAME))
            call_id = f"call_{script.scenario.name[:6]}_{self.turn}h"
            return f"resp_{script.scenario.name}_{self.turn}h", [
                {
                    "type": "function_call",
                    "id": f"fc_{call_id}",
                    "call_id": call_id,
                    "name": HANDOFF_TOOL,
                    "arguments": "{}",
                    "status": "completed",
                }
            ]
        if body.get("instructions") != common.SYSTEM_PROMPT:
            raise RuntimeError(f"request of an unknown agent: {body.get('instructions')!r}")
        if not self.triage_calls:
            raise RuntimeError("the store agent was asked before the handoff")
        self.store_calls += 1
        self.log.append((self.turn, common.AGENT_NAME))
        calls, final = script.next_response()
        step = script.step
        if final is not None:
            return f"resp_{script.scenario.name}_{self.turn}{step}", [
                {
                    "type": "message",
                    "id": f"msg_{self.turn}{step}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": final, "annotations": []}],
                }
            ]
        return f"resp_{script.scenario.name}_{self.turn}{step}", [
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


ROUTER = Router()


def _response(request: httpx.Request) -> httpx.Response:
    """The Responses API answer of the scripted model (``POST /v1/responses``)."""
    if not request.url.path.endswith("/responses"):
        return httpx.Response(404, json={"error": f"not scripted: {request.url.path}"})
    body = json.loads(request.content)
    if body.get("stream"):
        return httpx.Response(400, json={"error": "streaming not scripted"})
    response_id, output = ROUTER.answer(body)
    prompt_tokens = 50 + 10 * len(body.get("input") or [])
    payload = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": common.MODEL_NAME,
        "output": output,
        # Echoed from the request, as the Responses API does: the LLM spans then say which
        # agent asked (its instructions as the system message, its tools).
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
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
    model = OpenAIResponsesModel(model=common.MODEL_NAME, openai_client=client)
    store_agent = Agent(
        name=common.AGENT_NAME,
        handoff_description="Answers questions about tracks, albums, artists and invoices, "
        "and refunds purchased tracks.",
        instructions=common.SYSTEM_PROMPT,
        model=model,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    triage = Agent(
        name=TRIAGE_NAME,
        instructions=TRIAGE_PROMPT,
        model=model,
        handoffs=[store_agent],
    )
    session = SQLiteSession(scenario.session_id) if scenario.session_id else None
    PROCESSOR.force_flush()
    RECORDER.batches.clear()
    ROUTER.log.clear()
    finals: list[str | None] = []
    last_agents: list[str] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        ROUTER.start_turn(turn)
        before = len(RECORDER.spans)
        config = RunConfig(workflow_name=WORKFLOW, group_id=scenario.session_id)
        result = await Runner.run(triage, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        last_agents.append(result.last_agent.name)
        PROCESSOR.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    notes = (
        "handoff: every turn starts at the triage agent, whose one model call requests "
        f"{HANDOFF_TOOL}; the store agent then runs the scenario and its final text is the "
        "run's answer (no return to the triage agent); llm_calls_per_turn counts the triage "
        "agent's model call too; multi_turn: SQLiteSession memory and RunConfig(group_id=session "
        "id), which Logfire records as group_id on the turn's root span; the refused refund "
        "raises inside the tool and the SDK's default failure handler reports it to the model; "
        "the tool span says only 'Error running tool (non-fatal)' (redacted); Logfire "
        "(logfire.configure(send_to_logfire=False, console=False, additional_span_processors="
        "[BatchSpanProcessor(recorder)]), instrument_openai_agents(), scope "
        "logfire.openai_agents) wraps the SDK trace provider; SDK's own processor removed"
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=notes,
        session_id=scenario.session_id,
        # The SDK redacts the exception; Logfire's function span has no call id and no
        # exception event: the error evald can read is what the model was told next.
        tool_error_contains="An error occurred while running the tool",
        extra={
            "agents": [TRIAGE_NAME, common.AGENT_NAME],
            "handoff_tool": HANDOFF_TOOL,
            "model_requests": [[turn, agent] for turn, agent in ROUTER.log],
            "last_agent_per_turn": last_agents,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    logfire.shutdown()


if __name__ == "__main__":
    main()
