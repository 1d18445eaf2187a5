"""Capture Google ADK's native OpenTelemetry spans (tracer ``gcp.vertex.agent``).

Not run in CI. Run it in a venv of its own (never evald's)::

    python3.12 -m venv /tmp/cap-adk
    /tmp/cap-adk/bin/pip install google-adk opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-adk/bin/python tests/golden/capture/adk.py [--legacy] [scenario ...]

Writes ``tests/golden/traces/google-adk-content/`` (default schema, content capture
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``), or with
``--legacy`` ``tests/golden/traces/google-adk-legacy/`` (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``).

Real ``LlmAgent`` + ``Runner`` + ``InMemorySessionService`` + ``FunctionTool``s; only
the model is scripted (a ``BaseLlm`` subclass answering from the scenario script).
A refused refund is returned the ADK way, as ``{"status": "error", "error_message"}``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
LEGACY = "--legacy" in sys.argv
if LEGACY:
    os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
else:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

import common  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-google-adk")
trace.set_tracer_provider(PROVIDER)

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

FOLDER = common.TRACES / ("google-adk-legacy" if LEGACY else "google-adk-content")


_script = common.active_script


class ScriptedModel(BaseLlm):
    """Answers each request with the scenario script's next response."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        calls, final = _script().next_response()
        if final is not None:
            parts = [types.Part(text=final)]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
                for call_id, name, args in calls
            ]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=50 + 10 * len(llm_request.contents),
                candidates_token_count=12,
                total_token_count=62 + 10 * len(llm_request.contents),
            ),
            finish_reason=types.FinishReason.STOP,
        )


def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    try:
        return dict(
            _script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)
        )
    except common.StoreError as exc:  # ADK's idiom: report the failure in the result
        return {"status": "error", "error_message": str(exc)}


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "adk")
    agent = LlmAgent(
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        model=ScriptedModel(model=common.MODEL_NAME),
        instruction=common.SYSTEM_PROMPT,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name="music_store", agent=agent, session_service=sessions)
    session_id = scenario.session_id or f"adk-{name}-{uuid.uuid4().hex[:8]}"
    await sessions.create_session(
        app_name="music_store", user_id="customer-17", session_id=session_id
    )
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        final: str | None = None
        async for event in runner.run_async(
            user_id="customer-17",
            session_id=session_id,
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        ):
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(part.text or "" for part in event.content.parts) or final
        finals.append(final)
        PROVIDER.force_flush()
        turn_traces.extend(t for t in common.trace_ids_of(RECORDER.spans[before:]))
    notes = (
        "ADK reports gen_ai.conversation.id = the ADK session id on every run (one-shot "
        "scenarios use a random 'adk-<scenario>-<hex>' session, labelled null); the refused "
        "refund is returned as {'status': 'error', 'error_message': ...}: execute_tool span "
        "status UNSET, the error only in the result"
    )
    if "parallel" in name:
        notes += "; parallel calls add a phantom 'execute_tool (merged)' span"
    if LEGACY:
        notes += "; legacy schema (ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1): root 'invocation'"
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions("google-adk", "google-genai", "opentelemetry-sdk"),
        notes=notes,
        session_id=scenario.session_id,
        extra={
            "telemetry_env": {
                k: v for k, v in os.environ.items() if k.startswith(("OTEL_", "ADK_"))
            }
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
