"""Capture the CrewAI crew of ``crewai_crew.py`` traced by traceAI (``traceai-crewai``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-crewai-traceai
    /tmp/cap-crewai-traceai/bin/pip install crewai==1.15.30 traceai-crewai openai \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-common==1.45.2 \
        opentelemetry-proto==1.45.2
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-crewai-traceai/bin/python \
        tests/golden/capture/crewai_traceai.py [scenario ...]'

Captured with traceAI-crewai 0.1.8, fi-instrumentation-otel 1.1.0, crewai 1.15.30, openai
2.54.0, opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common /
-proto 1.45.2, opentelemetry-instrumentation 0.66b2, protobuf 7.36.2, Python 3.12.1, in a
network namespace with only loopback up. Writes ``tests/golden/traces/crewai-traceai/``.

The crew is that of ``crewai_crew.py``: one ``Crew`` of one ``Agent`` (role
``music_store_support``) and one ``Task`` whose description is the customer's message,
``@tool`` functions, sequential process, one ``crew.kickoff`` per user turn; CrewAI's native
OpenAI provider (``LLM(provider="openai")``, real ``openai.OpenAI`` client) pointed at a
loopback HTTP server in this process that scripts the answers
(``scripted_model.ChatCompletions``). The refused refund raises inside the tool. Multi-turn
memory is CrewAI's crew-chat idiom (``inputs["crew_chat_messages"]``). CrewAI's own
telemetry and tracing are off. One deviation from ``crewai_crew.py``: the ``Task`` is given
``context=[]`` (no upstream tasks, CrewAI's own parameter), because traceai-crewai 0.1.8's
kickoff wrapper iterates ``task.context`` whenever it is truthy and CrewAI 1.15's default
``NOT_SPECIFIED`` is truthy and not iterable (``TypeError`` on every kickoff).

Instrumentation, as traceAI's CrewAI quickstart shows: ``fi_instrumentation.register(
project_type=ProjectType.OBSERVE, project_name=...)`` (traceAI's own ``TracerProvider``, its
default ``BatchSpanProcessor`` and ``HTTPSpanExporter``) and ``CrewAIInstrumentor().instrument(
tracer_provider=..., config=TraceConfig(...))`` with every content switch on (the defaults).
traceai-crewai 0.1.8 wraps ``Crew.kickoff``, ``Task._execute_core`` and
``ToolUsage._use`` only (no model spans; it instruments no provider). No key: ``FI_BASE_URL``
points at the loopback server, whose ``received_otlp.receiver`` route answers traceAI's fixed
path ``/tracer/v1/traces`` (OTLP/HTTP protobuf, as sent). ``force_flush`` after every turn.
Session id: ``fi_instrumentation.using_session(session id)`` around each turn in
``multi_turn``. Every ``OTEL_*`` / ``FI_*`` / ``OPENAI_*`` variable is removed first.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "FI_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver
CREWAI_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
}
os.environ.update(CREWAI_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "crewai-traceai"
PROJECT = "music-store-support-crewai-traceai"
TRACEAI_PATH = "/tracer/v1/traces"
TASK_DESCRIPTION = "{customer_message}"
EXPECTED_OUTPUT = "The reply to send to the customer."
PACKAGES = (
    "traceAI-crewai",
    "fi-instrumentation-otel",
    "crewai",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


MODEL = scripted_model.ChatCompletions()
SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: MODEL,
        TRACEAI_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.events.event_bus import crewai_event_bus  # noqa: E402
from crewai.tools import tool  # noqa: E402
from fi_instrumentation import TraceConfig, register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from traceai_crewai import CrewAIInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
CrewAIInstrumentor().instrument(
    tracer_provider=PROVIDER,
    config=TraceConfig(
        hide_inputs=False,
        hide_outputs=False,
        hide_input_messages=False,
        hide_output_messages=False,
        hide_input_text=False,
        hide_output_text=False,
    ),
)

_script = common.active_script


def scripted_llm() -> LLM:
    """CrewAI's native OpenAI provider (``OpenAICompletion``), pointed at the scripted server."""
    return LLM(
        model=common.MODEL_NAME,
        provider="openai",
        api_key="sk-offline",
        base_url=f"{SERVER.url}/v1",
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
    # context=[]: traceai-crewai 0.1.8 iterates ``task.context`` when truthy, and CrewAI
    # 1.15's default (``NOT_SPECIFIED``) is a truthy non-iterable: kickoff raises TypeError.
    task = Task(
        description=TASK_DESCRIPTION, expected_output=EXPECTED_OUTPUT, agent=agent, context=[]
    )
    return Crew(
        agents=[agent], tasks=[task], process=Process.sequential, verbose=False, tracing=False
    )


NOTES = (
    "the CrewAI crew of crewai_crew.py (native OpenAI provider over the scripted Chat "
    "Completions server) traced by Future AGI's traceAI: fi_instrumentation.register("
    "project_type=OBSERVE) (its own TracerProvider, BatchSpanProcessor and HTTPSpanExporter) "
    "and traceai_crewai.CrewAIInstrumentor (wraps Crew.kickoff, Task._execute_core, "
    "ToolUsage._use), every TraceConfig content switch on; exported over OTLP/HTTP protobuf "
    "to a loopback receiver at FI_BASE_URL + /tracer/v1/traces, no key; force_flush after "
    "every turn. multi_turn: crew-chat history (inputs['crew_chat_messages']) and "
    "fi_instrumentation.using_session(session id) around each turn; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    crew = make_crew()
    history: list[dict[str, str]] = []
    session_id = scenario.session_id
    assert PROVIDER.force_flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        inputs: dict[str, Any] = {"customer_message": text}
        if history:  # CrewAI's crew-chat idiom (crewai.utilities.crew_chat)
            inputs["crew_chat_messages"] = json.dumps(history)
        scope = using_session(session_id) if session_id else contextlib.nullcontext()
        with scope:
            output = crew.kickoff(inputs=inputs)
        assert isinstance(output, CrewOutput)
        finals.append(output.raw or None)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": output.raw}]
        crewai_event_bus.flush()
        assert PROVIDER.force_flush(), "traceAI's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session_id,
        extra={"telemetry_env": CREWAI_ENV},
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
