"""Capture Agno through OpenLIT (``openlit.init``; its ``agno`` and ``openai`` instrumentors).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agno-openlit
    /tmp/cap-agno-openlit/bin/pip install agno openai openlit opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-agno-openlit/bin/python \
        tests/golden/capture/agno_openlit.py [scenario ...]'

Captured with agno 3.1.10, openai 2.54.0 (openlit pins ``openai<3``), openlit 1.45.0,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.1,
opentelemetry-instrumentation(-httpx) 0.66b1, protobuf 7.36.2 (Python 3.12.1). Writes
``tests/golden/traces/agno-openlit/``.

The agent and tools are those of ``agno_openinference.py``: a real ``agno.agent.Agent``
(name ``music_store_support``, the system prompt as ``instructions``) with plain Python
functions as tools and Agno's ``OpenAIChat`` (real ``openai.AsyncOpenAI`` client) against
the scripted Chat Completions loopback server; one ``await agent.arun(text)`` per turn
(the calls of one response run concurrently). The refused refund raises inside the tool;
Agno catches it and sends the exception text to the model.

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds, among them
``agno``, ``openai`` and OpenTelemetry's ``httpx`` client instrumentor) except
``disable_metrics=True``, ``collect_gpu_stats=False``, ``capture_message_content=True``, no
``otlp_endpoint``, and ``pricing_json`` = an empty local file (otherwise it downloads its
price list from GitHub). OpenLIT reuses the SDK ``TracerProvider`` / ``LoggerProvider`` set
globally first (asserted). Log records go to our logger provider (``<scenario>.logs.*``).
Session id: OpenLIT's agno instrumentor records ``gen_ai.conversation.id`` from the
``session_id`` keyword of ``Agent.arun`` (Agno's documented per-run session), so
``multi_turn`` is one Agent with an ``InMemoryDb`` and ``add_history_to_context=True``
(Agno's chat memory) and ``arun(text, session_id=<session id>)`` every turn.
``OTEL_EXPORTER_OTLP*`` / ``OPENLIT_*`` / ``OPENAI_*`` are unset, Agno's telemetry is off
(``AGNO_TELEMETRY=false``, ``telemetry=False``) and the capture runs with only loopback up.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENLIT_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
AGNO_ENV = {"AGNO_TELEMETRY": "false"}  # Agno's anonymous run telemetry (os-api.agno.com)
os.environ.update(AGNO_ENV)

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-agno-openlit"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

import openlit  # noqa: E402

_PRICING = Path(tempfile.mkdtemp(prefix="openlit-pricing-")) / "pricing.json"
_PRICING.write_text("{}", encoding="utf-8")
openlit.init(
    service_name=SERVICE,
    environment="acceptance-test",
    capture_message_content=True,
    disable_metrics=True,
    collect_gpu_stats=False,
    pricing_json=str(_PRICING),
)
assert trace.get_tracer_provider() is PROVIDER, "OpenLIT replaced the tracer provider"
assert _logs.get_logger_provider() is LOG_PROVIDER, "OpenLIT replaced the logger provider"

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402

FOLDER = common.TRACES / "agno-openlit"
PACKAGES = (
    "agno",
    "openai",
    "openlit",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-instrumentation-httpx",
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
    if session_id is not None:  # Agno's chat memory: a db, history on (the id goes on arun)
        db = InMemoryDb()  # type: ignore[no-untyped-call]
        memory = {"db": db, "add_history_to_context": True}
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
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    # OpenLIT wraps Agent.__init__: building the agent records a one-span 'create_agent'
    # trace of its own, flushed here as the first batch (a stray trace).
    agent = make_agent(scenario.session_id)
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    session = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        if session is None:
            output = await agent.arun(text)
        else:
            output = await agent.arun(text, session_id=session)
        if output.status is not None and str(output.status.value) != "COMPLETED":
            run_errors.append(f"turn {turn}: run status {output.status}")
        finals.append(output.content if isinstance(output.content, str) else None)
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    model = agent.model
    if isinstance(model, OpenAIChat) and model.async_client is not None:
        await model.async_client.close()  # inside this event loop, not at garbage collection
    last = MODEL.requests[-1].get("messages") if MODEL.requests else []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        run_errors=run_errors,
        extra={
            "telemetry_env": AGNO_ENV,
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


NOTES = "Agno Agent + OpenAIChat traced by OpenLIT (openlit.init); see NOTES.md."


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
