"""Capture Agno through openinference-instrumentation-agno.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agno
    /tmp/cap-agno/bin/pip install agno openai openinference-instrumentation-agno \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-agno/bin/python tests/golden/capture/agno_openinference.py [scenario ...]

Captured with agno 3.1.10, openai 3.57.0, openinference-instrumentation-agno 1.0.15,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2.
Writes ``tests/golden/traces/agno-openinference/``.

Real ``agno.agent.Agent`` (name ``music_store_support``, the system prompt as
``instructions``) with plain Python functions as tools (Agno wraps them in its ``Function``
/ ``FunctionCall``) and Agno's ``OpenAIChat`` model (Chat Completions, real
``openai.AsyncOpenAI`` client) pointed at a loopback HTTP server in this process that
scripts the model's answers; nothing else is faked. One ``await agent.arun(text)`` per
user turn: Agno's async loop runs the calls of one response concurrently
(``asyncio.gather`` over ``asyncio.to_thread(FunctionCall.execute)`` for sync tools), so
``parallel_calls`` is real. The refused refund raises inside the tool; Agno catches it
(``FunctionExecutionResult(status="failure")``) and sends the exception text to the model
as the tool message. ``multi_turn`` is one Agent with ``session_id=...``, an ``InMemoryDb``
and ``add_history_to_context=True`` (Agno's documented chat memory); Agno passes its
session to the run, and the instrumentation records its ``session_id`` as ``session.id``
itself (no ``using_session()``). Agno's telemetry (``AGNO_TELEMETRY=false`` and
``telemetry=False``) is off.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere
AGNO_ENV = {"AGNO_TELEMETRY": "false"}  # Agno's anonymous run telemetry (os-api.agno.com)
os.environ.update(AGNO_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-agno")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation.agno import AgnoInstrumentor  # noqa: E402

AgnoInstrumentor().instrument(tracer_provider=PROVIDER)

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402

FOLDER = common.TRACES / "agno-openinference"
PACKAGES = (
    "agno",
    "openai",
    "openinference-instrumentation-agno",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


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
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_agent(session_id: str | None) -> Agent:
    model = OpenAIChat(id=common.MODEL_NAME, api_key="sk-offline", base_url=BASE_URL, max_retries=0)
    memory: dict[str, Any] = {}
    if session_id is not None:  # Agno's chat memory: a db, the session id, history on
        db = InMemoryDb()  # type: ignore[no-untyped-call]
        memory = {"db": db, "session_id": session_id, "add_history_to_context": True}
    return Agent(
        name=common.AGENT_NAME,
        model=model,
        instructions=common.SYSTEM_PROMPT,
        description="Customer support of the Tunes & Co music store.",
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        telemetry=False,
        **memory,
    )


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent(scenario.session_id)
    RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        output = await agent.arun(text)
        if output.status is not None and str(output.status.value) != "COMPLETED":
            run_errors.append(f"turn {turn}: run status {output.status}")
        finals.append(output.content if isinstance(output.content, str) else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    model = agent.model
    if isinstance(model, OpenAIChat) and model.async_client is not None:
        await model.async_client.close()  # inside this event loop, not at garbage collection
    tool_messages_sent = [
        message.get("content")
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
        run_errors=run_errors,
        extra={
            "telemetry_env": AGNO_ENV,
            "tool_messages_in_last_request": tool_messages_sent,
            "messages_in_last_request": len(
                (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
            ),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "Agno Agent + OpenAIChat (real AsyncOpenAI client) over a scripted loopback Chat "
    "Completions server; openinference-instrumentation-agno (scope "
    "openinference.instrumentation.agno, all spans INTERNAL). Spans per turn: "
    "<agent name>.arun (AGENT, root: input.value = this turn's user text, output.value = "
    "final text, session.id, agent.name) with children OpenAIChat.ainvoke (LLM, one per "
    "model request: llm.input_messages = whole history, llm.output_messages tool calls "
    "with the provider's ids, token counts) and <tool name> (TOOL, siblings of the LLM "
    "spans: input.value and tool.parameters = the call's arguments, output.value = "
    "str(result), a Python repr; no call id). One agent.arun per turn: the calls of one "
    "response are started concurrently (asyncio.gather over to_thread). The refused "
    "refund raises; Agno catches it (FunctionExecutionResult failure), the tool span gets "
    "status ERROR with the message as description and as output.value, no exception "
    "event, and the model gets the exception text. multi_turn: one Agent(session_id=..., "
    "db=InMemoryDb(), add_history_to_context=True); the instrumentation records Agno's "
    "session id as session.id itself (one-shot runs get Agno's auto-generated uuid). "
    "AGNO_TELEMETRY=false and telemetry=False."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
