"""Capture the CrewAI crew of ``crewai_crew.py`` traced by Langtrace (langtrace-python-sdk).

Not run in CI. Run it in a venv of its own (never evald's), offline (loopback only)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-crewai-langtrace
    /tmp/cap-crewai-langtrace/bin/pip install crewai langtrace-python-sdk \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common importlib_metadata \
        "setuptools<81"
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-crewai-langtrace/bin/python \
        tests/golden/capture/crewai_langtrace.py [scenario ...]'

Captured with langtrace-python-sdk 3.8.21, trace-attributes 7.2.1, crewai 1.15.30 (the
newest; Langtrace's CrewAI instrumentation wraps it), openai 2.54.0, opentelemetry-sdk / -api
/ -exporter-otlp-proto-common / -proto 1.45.2, opentelemetry-instrumentation 0.66b2, protobuf
7.36.2, importlib_metadata 10.2.0, setuptools 80.10.2, Python 3.12.1. (langtrace imports
``importlib_metadata`` and ``pkg_resources`` without declaring them: installed by hand.)
Writes ``tests/golden/traces/crewai-langtrace/``.

The crew, tools, scripted model and memory are those of ``crewai_crew.py``: one ``Crew`` of
one ``Agent`` (role ``music_store_support``, the system prompt as backstory) and one
``Task`` whose description is the customer's message, the store's five ``@tool``
functions, sequential process, one ``crew.kickoff`` per user turn. The model is CrewAI's
native OpenAI provider (``crewai.LLM(provider="openai")`` → ``OpenAICompletion``) with its
real ``openai.OpenAI`` client pointed at the scripted Chat Completions endpoint of a
loopback server in this process (native function calling: the calls of one response run
in a thread pool). The refused refund raises inside the tool; CrewAI sends "Error
executing tool: …" to the model. ``multi_turn`` keeps the crew-chat idiom
(``inputs["crew_chat_messages"]``). CrewAI's own telemetry and tracing are off.

Instrumentation, as Langtrace's CrewAI page shows (``langtrace.init`` before importing
CrewAI; every instrumentation whose package is installed: crewai, openai, sqlalchemy ...;
the crewai one wraps ``Crew.kickoff*``, ``Agent.execute_task`` and ``Task.execute_sync``):
``langtrace.init(custom_remote_exporter=<in-memory BatchRecorder>, service_name=...,
api_key="offline")`` (it prints "Exporting spans to custom host: https://app.langtrace.ai",
but exports only to the given exporter), which installs its OWN global ``TracerProvider``
(LangtraceSampler) with a default ``BatchSpanProcessor`` around the given exporter (the
script flushes it after each turn). Content capture: ``TRACE_PROMPT_COMPLETION_DATA=true``
(Langtrace's switch; also its default). CrewAI names the agent (its role), so no custom
span name is injected; in ``multi_turn`` each turn runs inside Langtrace's documented
``inject_additional_attributes(fn, {"session.id": ...})`` (docs.langtrace.ai
tracing/filter_by_session_id), in a copied ``contextvars`` context (the helper attaches
its baggage and never detaches it). Phone-home off: ``LANGTRACE_ERROR_REPORTING=False`` (no
Sentry), ``OTEL_EXPORTER_OTLP_*`` / ``LANGTRACE_*`` removed, and its SDK-version check
(api.github.com) fails offline under ``unshare -rn``.
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "LANGTRACE_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
CREWAI_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",  # CrewAI's anonymous telemetry (its own provider)
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",  # CrewAI AMP tracing, and its first-run prompt
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # no PyPI look-up from the console formatter
    "LANGTRACE_ERROR_REPORTING": "False",  # no Sentry
    "TRACE_PROMPT_COMPLETION_DATA": "true",  # Langtrace's content switch (on)
}
os.environ.update(CREWAI_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-crewai-langtrace"
RECORDER = common.BatchRecorder()

from langtrace_python_sdk import inject_additional_attributes, langtrace  # noqa: E402

langtrace.init(custom_remote_exporter=RECORDER, service_name=SERVICE, api_key="offline")
PROVIDER: Any = trace.get_tracer_provider()
assert hasattr(PROVIDER, "force_flush"), "Langtrace did not set an SDK tracer provider"

from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.events.event_bus import crewai_event_bus  # noqa: E402
from crewai.tools import tool  # noqa: E402

FOLDER = common.TRACES / "crewai-langtrace"
PACKAGES = (
    "langtrace-python-sdk",
    "trace-attributes",
    "crewai",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)
TASK_DESCRIPTION = "{customer_message}"
EXPECTED_OUTPUT = "The reply to send to the customer."

_script = common.active_script

SERVER = scripted_model.ChatCompletions().serve()
BASE_URL = f"{SERVER.url}/v1"


def scripted_llm() -> LLM:
    """CrewAI's native OpenAI provider (``OpenAICompletion``), pointed at the scripted server."""
    return LLM(
        model=common.MODEL_NAME,
        provider="openai",
        api_key="sk-offline",
        base_url=BASE_URL,
        max_retries=0,
    )


@tool("lookup_track")
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tool("lookup_album")
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tool("lookup_artist")
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool("lookup_invoice")
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool("refund")
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_crew() -> Crew:
    agent = Agent(
        role=common.AGENT_NAME,
        goal="Answer the customers of the Tunes & Co music store and settle their requests.",
        backstory=common.SYSTEM_PROMPT,
        llm=scripted_llm(),
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        allow_delegation=False,
        verbose=False,
    )
    task = Task(description=TASK_DESCRIPTION, expected_output=EXPECTED_OUTPUT, agent=agent)
    return Crew(
        agents=[agent], tasks=[task], process=Process.sequential, verbose=False, tracing=False
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    crew = make_crew()
    history: list[dict[str, str]] = []
    RECORDER.batches.clear()
    PROVIDER.force_flush()
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        inputs: dict[str, Any] = {"customer_message": text}
        if history:  # CrewAI's crew-chat idiom (crewai.utilities.crew_chat)
            inputs["crew_chat_messages"] = json.dumps(history)

        def kickoff(inputs: dict[str, Any] = inputs) -> Any:
            return crew.kickoff(inputs=inputs)

        if scenario.session_id:
            output = contextvars.copy_context().run(
                inject_additional_attributes, kickoff, {"session.id": scenario.session_id}
            )
        else:
            output = contextvars.copy_context().run(kickoff)
        assert isinstance(output, CrewOutput)  # not a streaming crew
        finals.append(output.raw or None)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": output.raw}]
        crewai_event_bus.flush()
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=(
            "CrewAI crew (native OpenAI provider over a scripted loopback Chat Completions "
            "server: calls of one response run in a thread pool) traced by Langtrace "
            "(langtrace.init, every instrumentation it has for the installed packages, "
            "content on); tool outputs are Python reprs (CrewAI str()s the returned dict); "
            "the refused refund raises: one attempt, the model gets 'Error executing tool: "
            "...'; multi_turn: each turn inside inject_additional_attributes({'session.id': "
            "...}), history through inputs['crew_chat_messages']; see NOTES.md for what is "
            "recorded"
        ),
        session_id=scenario.session_id,
        extra={"env": CREWAI_ENV},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
