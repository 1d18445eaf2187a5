"""Capture the CrewAI crew of ``crewai_crew.py`` traced by the AgentOps SDK (``agentops``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-crewai-agentops
    /tmp/cap-crewai-agentops/bin/pip install agentops crewai openai \
        opentelemetry-exporter-otlp-proto-common
    # agentops 0.4.21's exporter subclasses OTLPSpanExporter and reads its private
    # ``_headers`` / ``_session``, gone in opentelemetry-exporter-otlp-proto-http 1.45:
    # pin the last OpenTelemetry release that has them (as agno_agentops.py does). crewai
    # 1.15.30 declares opentelemetry >= 1.45.1 (pip warns) but runs on 1.44 with its own
    # telemetry off.
    /tmp/cap-crewai-agentops/bin/pip install opentelemetry-api==1.44.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0 \
        opentelemetry-exporter-otlp-proto-common==1.44.0 opentelemetry-proto==1.44.0 \
        opentelemetry-exporter-otlp-proto-grpc==1.44.0 \
        opentelemetry-instrumentation==0.65b0 opentelemetry-semantic-conventions==0.65b0
    /tmp/cap-crewai-agentops/bin/pip uninstall -y opentelemetry-exporter-otlp-common \
        opentelemetry-exporter-http-transport  # 1.45-only helpers, left behind by the pin
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-crewai-agentops/bin/python \
        tests/golden/capture/crewai_agentops.py [scenario ...]'

Captured with agentops 0.4.21, crewai 1.15.30, openai 2.54.0, opentelemetry-sdk / -api /
-proto / -exporter-otlp-proto-http / -exporter-otlp-proto-common 1.44.0,
opentelemetry-instrumentation / -semantic-conventions 0.65b0, protobuf 7.36.2, wrapt 1.17.3,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/crewai-agentops/``.

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

Instrumentation, as AgentOps' CrewAI integration page shows: ``import agentops``, the
CrewAI imports, then ``agentops.init(...)``; init instruments the already imported
``crewai`` with AgentOps' ``CrewaiInstrumentor`` (it wraps ``Crew.kickoff``,
``Agent.execute_task``, ``Task.execute_sync``, ``LLM.call``,
``execute_tool_and_check_finality`` and ``ToolUsage.use``) and, an agentic library being
active, takes its own OpenAI client instrumentation off again. AgentOps has no content
switch: what it records it always records. ``auto_start_session=False`` and one
``agentops.start_trace(...)`` / ``agentops.end_trace(..., "Success")`` per user turn (a
trace *is* its session in AgentOps), so that each turn is an OTel trace of its own; in
``multi_turn`` the documented ``agentops.update_trace_metadata({"session_id": ...})``
inside each turn's trace.

Where it goes: AgentOps exports OTLP/HTTP protobuf to ``exporter_endpoint`` with a bearer
JWT it fetches from ``endpoint`` + ``/v3/auth/token`` with the API key; both point at the
same loopback server as the model: ``/v1/traces`` is ``received_otlp.receiver``,
``/v3/auth/token`` a stub answering a fake token (a dummy UUID API key). ``end_trace``
flushes the batch processor; the ``.jsonl`` keeps the export requests as received. The
metrics exporter's endpoint is fixed (``https://otlp.agentops.ai/v1/metrics``): run in
``unshare -rn`` with only loopback up, it cannot leave the machine. Every ``OTEL_*`` /
``AGENTOPS_*`` / ``OPENAI_*`` variable is removed first; ``AGENTOPS_LOGGING_TO_FILE=false``
(else ``./agentops.log``).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "AGENTOPS_", "OPENAI_", "CREWAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
AGENTOPS_ENV = {
    "AGENTOPS_LOGGING_TO_FILE": "false",  # else it writes ./agentops.log
    "CREWAI_DISABLE_TELEMETRY": "true",  # CrewAI's anonymous telemetry (its own provider)
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",  # CrewAI AMP tracing, and its first-run prompt
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # no PyPI look-up from the console formatter
}
os.environ.update(AGENTOPS_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "crewai-agentops"
TRACE_NAME = "music_store_support_turn"
PACKAGES = (
    "agentops",
    "crewai",
    "openai",
    "opentelemetry-instrumentation",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-semantic-conventions",
    "protobuf",
    "wrapt",
)
TASK_DESCRIPTION = "{customer_message}"
EXPECTED_OUTPUT = "The reply to send to the customer."


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()
    auth: ClassVar[list[Any]] = []


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


def _auth(request: scripted_model.Request) -> scripted_model.Reply:
    Received.auth.append(request.json())
    return scripted_model.Reply.json(
        {"token": "offline-jwt-token", "project_id": "offline-project"}
    )


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        MODEL.PATH: MODEL,
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        r"/v3/auth/token": _auth,
    }
)
BASE_URL = f"{SERVER.url}/v1"
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

import agentops  # noqa: E402
from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.events.event_bus import crewai_event_bus  # noqa: E402
from crewai.tools import tool  # noqa: E402

AGENTOPS_INIT = {
    "api_key": str(uuid.UUID(int=0x0FF11E)),  # a dummy key of the documented UUID shape
    "endpoint": SERVER.url,
    "exporter_endpoint": f"{SERVER.url}{received_otlp.TRACES_PATH}",
    "auto_start_session": False,  # one trace per user turn, started below
    "export_flush_interval": 60_000,  # export when a trace ends (end_trace flushes)
    "log_level": "WARNING",
}
agentops.init(**AGENTOPS_INIT)

from agentops.sdk.core import tracer as agentops_tracer  # noqa: E402

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


NOTES = (
    "CrewAI Crew (one Agent, one Task, @tools) with CrewAI's native OpenAI provider over a "
    "scripted loopback Chat Completions server, traced by the AgentOps SDK: "
    "agentops.init(auto_start_session=False, endpoint and exporter_endpoint on the same "
    "loopback server with a stub /v3/auth/token) after the CrewAI imports, so AgentOps' "
    "CrewaiInstrumentor wraps Crew.kickoff, Agent.execute_task, Task.execute_sync, LLM.call "
    "and the tool paths; one agentops.start_trace / end_trace per user turn; OTLP/HTTP "
    "protobuf to a loopback receiver. multi_turn: history through "
    "inputs['crew_chat_messages'] and agentops.update_trace_metadata({'session_id': ...}) in "
    "each turn; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    crew = make_crew()
    session_id = scenario.session_id
    assert agentops_tracer.provider is not None
    agentops_tracer.provider.force_flush()
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
        trace = agentops.start_trace(TRACE_NAME)
        if session_id is not None:
            agentops.update_trace_metadata({"session_id": session_id})
        output = crew.kickoff(inputs=inputs)
        crewai_event_bus.flush()
        agentops.end_trace(trace, "Success")  # flushes the batch processor
        assert isinstance(output, CrewOutput)  # not a streaming crew
        finals.append(output.raw or None)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": output.raw}]
        agentops_tracer.provider.force_flush()  # nothing may lag behind the trace's end
        turn_traces.extend(
            t for t in received_otlp.ids_of(Received.requests[before:]) if t not in turn_traces
        )
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    tool_messages_sent = [
        message.get("content")
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session_id,
        extra={
            "agentops_env": AGENTOPS_ENV,
            "agentops_init": {k: v for k, v in AGENTOPS_INIT.items() if k != "api_key"},
            "auth_requests": len(Received.auth),
            "tool_messages_in_last_request": tool_messages_sent,
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        SERVER.shutdown()


if __name__ == "__main__":
    main()
