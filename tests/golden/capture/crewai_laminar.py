"""Capture the CrewAI crew of ``crewai_crew.py`` traced by Laminar's Python SDK (``lmnr``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-crewai-laminar
    /tmp/cap-crewai-laminar/bin/pip install crewai 'lmnr[crewai]==0.8.1' \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-crewai-laminar/bin/python \
        tests/golden/capture/crewai_laminar.py [scenario ...]'

Captured with lmnr 0.8.1 (its ``[crewai]`` extra: OpenLLMetry's
opentelemetry-instrumentation-crewai 0.62.4, opentelemetry-semantic-conventions-ai 0.5.1),
crewai 1.15.30, openai 2.54.0, opentelemetry-sdk / -api / -exporter-otlp-proto-http /
-exporter-otlp-proto-common / -proto 1.45.1, protobuf 7.36.2, Python 3.12.1, in a network
namespace with only loopback up. Writes ``tests/golden/traces/crewai-laminar/``.

The crew of ``crewai_crew.py`` (as ``crewai_traceloop.py``: one ``Crew`` of one ``Agent``,
role ``music_store_support``, one ``Task`` whose description is the customer's message,
``@tool`` functions, sequential process, one ``crew.kickoff`` per user turn, CrewAI's
native OpenAI provider ``LLM(provider="openai")`` → ``OpenAICompletion`` with its real
``openai.OpenAI`` client against the scripted Chat Completions loopback server
(``scripted_model.ChatCompletions``), the crew-chat idiom for multi-turn memory
(``inputs["crew_chat_messages"]``), CrewAI's own telemetry and tracing off); only the
instrumentation differs. The refused refund raises in the tool; CrewAI sends the model
``"Error executing tool: ..."``.

Instrumentation, as Laminar's CrewAI docs show: ``Laminar.initialize()`` with its defaults
(every instrument it finds installed: for CrewAI, OpenLLMetry's
``CrewAIInstrumentor``, which its ``[crewai]`` extra installs and Laminar turns on when
``crewai`` is present, wrapping ``Crew.kickoff``, ``Task.execute_sync``,
``Agent.execute_task`` and ``crewai.llm.LLM.call``; for the model calls, Laminar's own fork
of the OpenAI instrumentation around the ``openai`` client CrewAI's native provider uses;
content recorded by both, their default). No tool spans: nothing wraps CrewAI's native
tool execution. Each turn runs inside a
function decorated with Laminar's ``@observe(name="music store support turn")`` (Laminar's
documented entry point, as ``langgraph_laminar.py``), which in ``multi_turn`` calls
``Laminar.set_trace_session_id(session id)`` (Laminar's documented session idiom) before
``crew.kickoff``. No project key: Laminar exports with its own ``LaminarSpanExporter`` to
``OTEL_EXPORTER_OTLP_ENDPOINT`` (documented by Laminar for any OTel backend), here the
``received_otlp.receiver`` route of the same loopback server, OTLP/HTTP protobuf (gzip);
``Laminar.flush()`` after every user turn. Every ``OTEL_*`` / ``LMNR_*`` / ``OPENAI_*`` /
``TRACELOOP_*`` variable is removed first.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "LMNR_", "OPENAI_", "TRACELOOP_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver
CREWAI_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",  # CrewAI's anonymous telemetry (its own provider)
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",  # CrewAI AMP tracing, and its first-run prompt
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # no PyPI look-up from the console formatter
}
os.environ.update(CREWAI_ENV)  # not OTEL_SDK_DISABLED: it would disable Laminar's provider

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "crewai-laminar"
WORKFLOW = "music store support turn"
PACKAGES = (
    "lmnr",
    "opentelemetry-instrumentation-crewai",
    "opentelemetry-semantic-conventions-ai",
    "crewai",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)
TASK_DESCRIPTION = "{customer_message}"
EXPECTED_OUTPUT = "The reply to send to the customer."


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {MODEL.PATH: MODEL, received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export)}
)
BASE_URL = f"{SERVER.url}/v1"
os.environ.update(
    {
        "OTEL_EXPORTER_OTLP_ENDPOINT": SERVER.url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "NO_PROXY": "127.0.0.1,localhost",
    }
)

from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.events.event_bus import crewai_event_bus  # noqa: E402
from crewai.tools import tool  # noqa: E402
from lmnr import Laminar, observe  # noqa: E402

# service.name is Laminar's own (sys.argv[0]): initialize() has no parameter for it.
Laminar.initialize(project_api_key=None)

_script = common.active_script


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


@observe(name=WORKFLOW)
def handle_turn(crew: Crew, inputs: dict[str, Any], session_id: str | None) -> str | None:
    """One user turn: the crew's kickoff, inside Laminar's span (and its session, if any)."""
    if session_id:
        Laminar.set_trace_session_id(session_id)
    output = crew.kickoff(inputs=inputs)
    assert isinstance(output, CrewOutput)  # not a streaming crew
    return output.raw or None


NOTES = (
    "the crew of crewai_crew.py (CrewAI's native OpenAI provider over a scripted loopback "
    "Chat Completions server; native function calling: calls of one response run in a "
    "thread pool), traced by Laminar's Python SDK: Laminar.initialize() with its defaults "
    "and no project key, exported by Laminar's own LaminarSpanExporter over OTLP/HTTP "
    "protobuf to a loopback receiver (OTEL_EXPORTER_OTLP_ENDPOINT); Laminar.flush() after "
    "every turn. Each turn runs in @observe(name='music store support turn'); multi_turn: "
    "history through inputs['crew_chat_messages'] and Laminar.set_trace_session_id(session "
    "id) inside the observed function; the refused refund raises, the model gets 'Error "
    "executing tool: ...'; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    crew = make_crew()
    assert Laminar.flush()
    Received.requests = []
    MODEL.requests.clear()
    history: list[dict[str, str]] = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        inputs: dict[str, Any] = {"customer_message": text}
        if history:  # CrewAI's crew-chat idiom (crewai.utilities.crew_chat)
            inputs["crew_chat_messages"] = json.dumps(history)
        answer = handle_turn(crew, inputs, session_id)
        finals.append(answer)
        history += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": answer or ""},
        ]
        crewai_event_bus.flush()  # let CrewAI's event handlers finish before the flush
        assert Laminar.flush(), "Laminar's export did not flush"
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
        Laminar.shutdown()  # type: ignore[no-untyped-call]
        SERVER.shutdown()


if __name__ == "__main__":
    main()
