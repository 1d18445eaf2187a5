"""Capture the OpenAI Agents SDK through the official OpenTelemetry GenAI instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-oaotel
    /tmp/cap-oaotel/bin/pip install openai-agents opentelemetry-instrumentation-openai-agents-v2 \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -n sh -c 'ip link set lo up; \
        /tmp/cap-oaotel/bin/python tests/golden/capture/openai_agents_otel_genai.py [scenario ...]'

Captured with openai-agents 0.24.0, openai 3.57.0 (httpx2 2.16.2),
opentelemetry-instrumentation-openai-agents-v2 0.1.0 (the contrib package, NOT Traceloop's
opentelemetry-instrumentation-openai-agents), opentelemetry-util-genai 1.3b0,
opentelemetry-instrumentation / -semantic-conventions 0.66b2, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1. Writes
``tests/golden/traces/openai-agents-otel-genai/``.

The agent, tools, scripted model and memory are those of ``openai_agents.py``: real
``Agent``/``Runner``, ``@function_tool``s, ``SQLiteSession`` memory for the multi-turn
scenario, and the SDK's default ``OpenAIResponsesModel`` talking to a real ``AsyncOpenAI``
client; only the model is scripted, as Responses-API JSON served by an
``httpx.MockTransport`` (no network). The refused refund raises inside the tool: the SDK's
default failure handler reports it to the model.

Instrumentation: ``OpenAIAgentsInstrumentor().instrument(tracer_provider=...)`` with its
defaults. It appends a ``GenAISemanticProcessor`` (an SDK ``TracingProcessor``) to the SDK's
processors; ``set_trace_processors([])`` is called first so the SDK's own exporter to
OpenAI's trace ingest is off, and the script checks the GenAI processor is then the only one.
Content capture: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is unset, which this
version resolves to SPAN_AND_EVENT (content on by default); it emits no events or log records
(``_emit_content_events`` is a deliberate no-op), which a logger provider set globally
checks (no ``.logs.*`` files are written when it stays empty). Every ``OTEL_*`` exporter and
``OPENAI_*`` variable is unset and the capture runs in a network namespace with only
loopback up. Session id: the SDK's documented ``RunConfig(group_id=...)``; this
instrumentation maps no trace group id and the SDK's agent span data has no
``conversation_id``, so no span carries a session id (labelled ``session_id: null``).
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
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)  # the default

import common  # noqa: E402
import common_logs  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

try:  # openai >= 3 ships its HTTP client as httpx2
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

SERVICE = "music-store-support-openai-agents-otel-genai"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

from agents import (  # noqa: E402
    Agent,
    RunConfig,
    Runner,
    SQLiteSession,
    function_tool,
    set_trace_processors,
)
from agents.models.openai_responses import OpenAIResponsesModel  # noqa: E402
from agents.tracing import get_trace_provider  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

set_trace_processors([])  # the SDK's own exporter to OpenAI's trace ingest: off
OpenAIAgentsInstrumentor().instrument(tracer_provider=PROVIDER)
_SDK_PROCESSORS = get_trace_provider()._multi_processor._processors  # type: ignore[attr-defined]
assert [type(p).__name__ for p in _SDK_PROCESSORS] == ["GenAISemanticProcessor"], _SDK_PROCESSORS

FOLDER = common.TRACES / "openai-agents-otel-genai"
WORKFLOW = "music store support turn"
PACKAGES = (
    "openai-agents",
    "openai",
    "httpx2",
    "opentelemetry-instrumentation-openai-agents-v2",
    "opentelemetry-util-genai",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
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
    if body.get("stream"):
        return httpx.Response(400, json={"error": {"message": "streaming not scripted"}})
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


NOTES = "see NOTES.md"


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client = AsyncOpenAI(
        api_key="sk-offline",
        base_url="http://scripted-model.invalid/v1",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(_response)),
        max_retries=0,
    )
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    agent = Agent(
        name=common.AGENT_NAME,
        instructions=common.SYSTEM_PROMPT,
        model=OpenAIResponsesModel(model=common.MODEL_NAME, openai_client=client),
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    session = SQLiteSession(scenario.session_id) if scenario.session_id else None
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        config = RunConfig(workflow_name=WORKFLOW, group_id=scenario.session_id)
        result = await Runner.run(agent, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
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
        session_id=None,  # no span carries one (see the module docstring)
        tool_error_contains="Error running tool (non-fatal)",
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    if LOG_RECORDER.records:
        common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
        spans = [span for batch in RECORDER.batches for span in batch]
        (FOLDER / f"{name}.tree.txt").write_text(
            common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
        )


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()


if __name__ == "__main__":
    main()
