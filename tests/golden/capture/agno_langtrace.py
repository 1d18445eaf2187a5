"""Capture an Agno ``Agent`` traced by Langtrace (langtrace-python-sdk, its Agno integration).

Not run in CI. Run it in a venv of its own (never evald's), offline (loopback only)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agno-langtrace
    /tmp/cap-agno-langtrace/bin/pip install agno openai langtrace-python-sdk \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common importlib_metadata \
        "setuptools<81"
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-agno-langtrace/bin/python tests/golden/capture/agno_langtrace.py [scenario ...]'

Captured with langtrace-python-sdk 3.8.21, trace-attributes 7.2.1, agno 3.1.10, openai
3.57.0, opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2,
opentelemetry-instrumentation 0.66b2, protobuf 7.36.2, importlib_metadata 10.2.0,
setuptools 80.10.2, Python 3.12.1 (langtrace imports ``importlib_metadata`` and
``pkg_resources`` without declaring them: installed by hand). Writes
``tests/golden/traces/agno-langtrace/``.

The agent and tools are those of ``agno_openlit.py``: a real ``agno.agent.Agent`` (name
``music_store_support``, the system prompt as ``instructions``) with plain Python functions
as tools and Agno's ``OpenAIChat`` (real ``openai.AsyncOpenAI`` client) against the scripted
Chat Completions loopback server; one ``await agent.arun(text)`` per turn (the calls of one
response run concurrently). The refused refund raises inside the tool; Agno catches it and
sends the exception text to the model. ``multi_turn``: one Agent with an ``InMemoryDb`` and
``add_history_to_context=True`` (Agno's chat memory) and ``arun(text, session_id=...)``.

Instrumentation, as Langtrace's docs show (``langtrace.init`` before importing the framework;
every instrumentation whose package is installed: agno, openai, sqlalchemy ...):
``langtrace.init(custom_remote_exporter=<in-memory BatchRecorder>, service_name=...,
api_key="offline")``, which installs its OWN global ``TracerProvider`` with a
``BatchSpanProcessor`` around the given exporter (the script flushes it after each turn).
Langtrace's Agno instrumentation wraps ``Agent.run`` / ``Agent.arun`` (its ``Agent._run`` /
``_arun`` targets no longer exist in agno 3, and the ``AgentMemory`` / ``Team`` wraps after
them in the same ``try`` are then skipped); the model calls are traced by its OpenAI
instrumentation. Content capture: ``TRACE_PROMPT_COMPLETION_DATA=true`` (Langtrace's switch;
also its default). Each turn is one call of an ``async`` function decorated with Langtrace's
documented ``@with_langtrace_root_span("music_store_support")`` (its way to group a
request's spans in one trace: ``Agent.arun`` returns a coroutine, so its span ends before the
run starts and, without the root, every model call is a trace of its own), run inside
``inject_additional_attributes(fn, {"session.id": ...})`` in ``multi_turn`` (Langtrace's
session attribute), each turn in an asyncio task of its own (the helper attaches baggage and
never detaches it). Agno names the agent itself, so no ``langtrace.span.name`` is injected.
Phone-home off: ``LANGTRACE_ERROR_REPORTING=False`` (no Sentry), ``AGNO_TELEMETRY=false`` and
``telemetry=False``, ``OTEL_EXPORTER_OTLP_*`` / ``LANGTRACE_*`` / ``OPENAI_*`` removed, and the
SDK-version check (api.github.com) fails offline under ``unshare -rn``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [
    n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "LANGTRACE_", "OPENAI_"))
]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
ENV = {
    "LANGTRACE_ERROR_REPORTING": "False",  # no Sentry
    "TRACE_PROMPT_COMPLETION_DATA": "true",  # Langtrace's content switch (on)
    "AGNO_TELEMETRY": "false",  # Agno's anonymous run telemetry (os-api.agno.com)
}
os.environ.update(ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-agno-langtrace"
RECORDER = common.BatchRecorder()

from langtrace_python_sdk import (  # noqa: E402
    inject_additional_attributes,
    langtrace,
    with_langtrace_root_span,
)

langtrace.init(custom_remote_exporter=RECORDER, service_name=SERVICE, api_key="offline")
PROVIDER: Any = trace.get_tracer_provider()
assert hasattr(PROVIDER, "force_flush"), "Langtrace did not set an SDK tracer provider"

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402

FOLDER = common.TRACES / "agno-langtrace"
PACKAGES = (
    "langtrace-python-sdk",
    "trace-attributes",
    "agno",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
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


@with_langtrace_root_span(common.AGENT_NAME)  # type: ignore[untyped-decorator]
async def run_turn(agent: Agent, text: str, session: str | None) -> Any:
    """One user turn under Langtrace's documented root span (one trace per turn)."""
    if session is None:
        return await agent.arun(text)
    return await agent.arun(text, session_id=session)


async def run_turns(
    agent: Agent,
    scenario: common.Scenario,
    script: common.Script,
    *,
    finals: list[str | None],
    turn_traces: list[str],
    run_errors: list[str],
) -> None:
    session = scenario.session_id
    attributes: dict[str, str] = {}
    if session is not None:
        attributes["session.id"] = session
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)

        async def in_task(text: str = text) -> Any:
            # a task of its own: the baggage Langtrace attaches stays in its context
            return await inject_additional_attributes(
                lambda: run_turn(agent, text, session), dict(attributes)
            )

        output = await asyncio.create_task(in_task())
        if output.status is not None and str(output.status.value) != "COMPLETED":
            run_errors.append(f"turn {turn}: run status {output.status}")
        finals.append(output.content if isinstance(output.content, str) else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    model = agent.model
    if isinstance(model, OpenAIChat) and model.async_client is not None:
        await model.async_client.close()  # inside this event loop, not at garbage collection


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent(scenario.session_id)
    PROVIDER.force_flush()
    RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    asyncio.run(
        run_turns(
            agent, scenario, script, finals=finals, turn_traces=turn_traces, run_errors=run_errors
        )
    )
    last = MODEL.requests[-1].get("messages") if MODEL.requests else []
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
            "env": ENV,
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "Agno Agent + OpenAIChat (AsyncOpenAI) over the scripted Chat Completions server, arun per "
    "turn, traced by Langtrace (langtrace.init: its agno and openai instrumentations); each "
    "turn under with_langtrace_root_span('music_store_support'), in multi_turn inside "
    "inject_additional_attributes({'session.id': ...}) and arun(session_id=...) with an "
    "InMemoryDb; see NOTES.md for what is recorded"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
