"""Capture Agno through Traceloop's OpenLLMetry (``traceloop-sdk``, ``Traceloop.init``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agno-traceloop
    V=0.66b0  # pip cannot resolve traceloop-sdk's unpinned contrib instrumentations alone
    /tmp/cap-agno-traceloop/bin/pip install traceloop-sdk==0.62.4 agno openai \
        opentelemetry-exporter-otlp-proto-common opentelemetry-instrumentation==$V \
        opentelemetry-instrumentation-logging==$V opentelemetry-instrumentation-redis==$V \
        opentelemetry-instrumentation-threading==$V opentelemetry-instrumentation-requests==$V \
        opentelemetry-instrumentation-sqlalchemy==$V opentelemetry-instrumentation-urllib3==$V
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-agno-traceloop/bin/python tests/golden/capture/agno_traceloop.py [scenario ...]'

Captured with agno 3.1.10, openai 3.57.0, traceloop-sdk 0.62.4,
opentelemetry-instrumentation-agno 0.62.4, opentelemetry-instrumentation-openai 0.62.4,
opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-instrumentation 0.66b0,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.0, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/agno-traceloop/``.

The agent of ``agno_openinference.py`` unchanged: a real ``agno.agent.Agent`` (name
``music_store_support``, the system prompt as ``instructions``) with plain Python functions
as tools and Agno's ``OpenAIChat`` model (Chat Completions, real ``openai.AsyncOpenAI``
client) pointed at a loopback HTTP server in this process that scripts the model's answers;
one ``await agent.arun(text)`` per user turn (Agno's async loop runs the calls of one
response concurrently); the refused refund raises inside the tool and Agno sends the
exception text to the model; ``multi_turn`` is one Agent with ``session_id=...``, an
``InMemoryDb`` and ``add_history_to_context=True``. Agno's telemetry is off
(``AGNO_TELEMETRY=false``, ``telemetry=False``).

Instrumented as Agno's own docs show for Traceloop (docs.agno.com/observability/traceloop):
``Traceloop.init(app_name=...)`` before the agent is built, which enables every OpenLLMetry
instrumentation installed (here Agno's, which wraps ``Agent.arun`` and
``FunctionCall.execute``, and OpenAI's, which records the model calls). The export goes to
the capture's in-memory recorder through ``Traceloop.init(processor=BatchSpanProcessor(...))``
(OpenLLMetry's documented custom-processor hook; no Traceloop endpoint, no API key, metrics
and logs off), flushed after every turn. Content tracing is on
(``TRACELOOP_TRACE_CONTENT=true``, the default, stated). ``multi_turn`` also sets the
session the documented Traceloop way, ``Traceloop.set_association_properties({"session_id":
...})`` before each turn (the instrumentation records none of Agno's own session).
``TRACELOOP_TELEMETRY=false``; nothing is sent anywhere.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "TRACELOOP_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
TRACELOOP_ENV = {
    "TRACELOOP_TELEMETRY": "false",
    "TRACELOOP_TRACE_CONTENT": "true",  # the default, stated
    "TRACELOOP_METRICS_ENABLED": "false",
    "TRACELOOP_LOGGING_ENABLED": "false",
}
AGNO_ENV = {"AGNO_TELEMETRY": "false"}  # Agno's anonymous run telemetry (os-api.agno.com)
os.environ.update(TRACELOOP_ENV)
os.environ.update(AGNO_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from traceloop.sdk import Traceloop  # noqa: E402

RECORDER = common.BatchRecorder()
Traceloop.init(
    app_name="music-store-support-agno",
    processor=BatchSpanProcessor(
        RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
    ),
    disable_batch=False,
)
_provider = trace.get_tracer_provider()
assert isinstance(_provider, TracerProvider)
PROVIDER: TracerProvider = _provider

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402

FOLDER = common.TRACES / "agno-traceloop"
PACKAGES = (
    "agno",
    "openai",
    "traceloop-sdk",
    "opentelemetry-instrumentation-agno",
    "opentelemetry-instrumentation-openai",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-instrumentation",
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
        if scenario.session_id is not None:  # Traceloop's documented session association
            Traceloop.set_association_properties({"session_id": scenario.session_id})
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
            "telemetry_env": {**TRACELOOP_ENV, **AGNO_ENV},
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
    "Completions server, traced by traceloop-sdk's Traceloop.init (its Agno and OpenAI "
    "instrumentations), exported by a BatchSpanProcessor over the in-memory recorder passed "
    "as Traceloop.init(processor=...). multi_turn: one Agent(session_id=..., "
    "db=InMemoryDb(), add_history_to_context=True) and "
    "Traceloop.set_association_properties({'session_id': ...}) before each turn. "
    "See NOTES.md for the span tree and keys."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
