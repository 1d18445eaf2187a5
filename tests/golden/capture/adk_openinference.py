"""Capture Google ADK through openinference-instrumentation-google-adk (Arize OpenInference).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-adk-oi
    /tmp/cap-adk-oi/bin/pip install google-adk openinference-instrumentation-google-adk \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-adk-oi/bin/python tests/golden/capture/adk_openinference.py [scenario ...]

Captured with google-adk 2.13.0, google-genai 2.34.0,
openinference-instrumentation-google-adk 1.0.5, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk / -api 1.44.0 (what
google-adk pins), opentelemetry-exporter-otlp-proto-common / -proto 1.45.2, protobuf
7.36.2, Python 3.12.1; run under ``unshare -n`` (only loopback up).
Writes ``tests/golden/traces/google-adk-openinference/``.

The agent is ``adk.py``'s: real ``LlmAgent`` + ``Runner`` + ``InMemorySessionService`` +
``FunctionTool``s (plain functions); only the model is scripted (a ``BaseLlm`` subclass
answering from the scenario script, as ADK takes a model object). A refused refund is
returned the ADK way, as ``{"status": "error", "error_message": ...}``.
``GoogleADKInstrumentor().instrument(tracer_provider=PROVIDER)``, default ``TraceConfig``.
ADK's own tracer is left as it is by default (no ``ADK_*`` / ``OTEL_INSTRUMENTATION_GENAI_*``
variable set, ADK's spans go to the same global provider); note that the instrumentor
itself re-routes ADK's tracers (see NOTES.md). The session id reaches the spans the way
the instrumentation does it: ``Runner.run_async(session_id=...)`` becomes ``session.id``
(no ``using_session()`` here); one-shot scenarios use a random
``adk-<scenario>-<hex>`` ADK session, labelled ``null``.
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
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-google-adk-openinference")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation.google_adk import GoogleADKInstrumentor  # noqa: E402

GoogleADKInstrumentor().instrument(tracer_provider=PROVIDER)

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

FOLDER = common.TRACES / "google-adk-openinference"
PACKAGES = (
    "google-adk",
    "google-genai",
    "openinference-instrumentation-google-adk",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

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
    notes = NOTES
    if "parallel" in name:
        notes += (
            "; parallel calls add an 'execute_tool (merged)' span (ADK's, emitted through "
            "the OpenInference tracer, no openinference.span.kind, gen_ai.tool.name "
            "'(merged tools)', gen_ai.tool.call.id = an event uuid, status UNSET)"
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
        extra={
            "telemetry_env": {
                k: v for k, v in os.environ.items() if k.startswith(("OTEL_", "ADK_"))
            },
            "adk_session_id": session_id,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "Google ADK LlmAgent + scripted BaseLlm, openinference-instrumentation-google-adk "
    "(scope openinference.instrumentation.google_adk) with ADK's own tracer at its defaults "
    "(schema v2). Tree per turn: invocation [music_store] (OI CHAIN, root: input.value = "
    "run_async arguments as JSON, output.value = final Event JSON, session.id, user.id) > "
    "invoke_workflow music_store_support (ADK's span re-routed to the OI tracer, CHAIN) > "
    "agent_run [music_store_support] (OI AGENT) > invoke_agent music_store_support (ADK's "
    "native span, scope gcp.vertex.agent: the instrumentor's tracer proxy does not intercept "
    "start_span) > execute_tool <name> (ADK's span through the OI tracer, TOOL). ADK's "
    "generate_content spans are suppressed by the proxy, so every model request of the turn "
    "writes its ADK gen_ai.* and OI llm.* attributes onto that one invoke_agent span "
    "(gen_ai.operation.name becomes generate_content, openinference.span.kind LLM): the last "
    "request's input/output win, stale llm.output_messages tool_calls of earlier requests "
    "stay beside the final text; one model span per turn. Tool spans: tool.parameters and "
    "input.value = arguments, output.value = the whole FunctionResponse "
    "{id, name, response} as JSON, tool.id and gen_ai.tool.call.id = the call id, status OK. "
    "session.id = the ADK session id on every run (one-shot scenarios use a random "
    "'adk-<scenario>-<hex>' session, labelled null); the refused refund is returned as "
    "{'status': 'error', 'error_message': ...}: TOOL span status OK, the error only inside "
    "output.value.response"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
