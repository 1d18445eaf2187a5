"""Capture the Agno agent of ``agno_openinference.py`` traced by the AgentOps SDK (``agentops``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agno-agentops
    /tmp/cap-agno-agentops/bin/pip install agentops agno openai \
        opentelemetry-exporter-otlp-proto-common
    # agentops 0.4.21's exporter subclasses OTLPSpanExporter and reads its private
    # ``_headers`` / ``_session``, gone in opentelemetry-exporter-otlp-proto-http 1.45:
    # pin the last OpenTelemetry release that has them (as openai_agents_agentops.py does).
    /tmp/cap-agno-agentops/bin/pip install opentelemetry-api==1.44.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0 \
        opentelemetry-exporter-otlp-proto-common==1.44.0 opentelemetry-proto==1.44.0 \
        opentelemetry-instrumentation==0.65b0 opentelemetry-semantic-conventions==0.65b0
    /tmp/cap-agno-agentops/bin/pip uninstall -y opentelemetry-exporter-otlp-common \
        opentelemetry-exporter-http-transport  # 1.45-only helpers, left behind by the pin
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-agno-agentops/bin/python \
        tests/golden/capture/agno_agentops.py [scenario ...]'

Captured with agentops 0.4.21, agno 3.1.10, openai 3.57.0 (its HTTP client httpx2 2.16.2),
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-http / -exporter-otlp-proto-common
1.44.0, opentelemetry-instrumentation / -semantic-conventions 0.65b0, protobuf 7.36.2,
wrapt 1.17.3, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/agno-agentops/``.

The agent, tools, scripted model and memory are those of ``agno_openinference.py``: a real
``agno.agent.Agent`` named ``music_store_support`` (the system prompt as ``instructions``)
with the store's five tools as plain Python functions (Agno wraps them in its ``Function``
/ ``FunctionCall``) and Agno's ``OpenAIChat`` model (Chat Completions, a real
``openai.AsyncOpenAI`` client) pointed at the scripted Chat Completions endpoint of a
loopback server in this process. One ``await agent.arun(text)`` per user turn: Agno runs
the calls of one response concurrently (``asyncio.gather`` over ``asyncio.to_thread``), so
``parallel_calls`` is real. The refused refund raises inside the tool; Agno catches it
(``FunctionExecutionResult(status="failure")``) and sends the exception text to the model
as the tool message. ``multi_turn`` is one Agent with ``session_id=...``, an ``InMemoryDb``
and ``add_history_to_context=True`` (Agno's documented chat memory). Agno's telemetry is off
(``AGNO_TELEMETRY=false``, ``telemetry=False``).

Instrumentation, as AgentOps' Agno integration page shows: ``import agentops``, the Agno
imports, then ``agentops.init(...)``; init instruments the already imported ``agno`` with
AgentOps' ``AgnoInstrumentor`` (it wraps ``Agent.run``/``arun``, ``FunctionCall.execute``,
``Agent._set_session_metrics`` and the Team/Workflow methods) and, an agentic library being
active, takes its own OpenAI client instrumentation off again. AgentOps has no content
switch: what it records it always records. ``auto_start_session=False`` and one
``agentops.start_trace(...)`` / ``agentops.end_trace(..., "Success")`` per user turn
(AgentOps' documented manual trace control: a trace *is* its session), so that each turn is
an OTel trace of its own; in ``multi_turn`` the documented
``agentops.update_trace_metadata({"session_id": ...})`` inside each turn's trace, with
Agno's session id.

Where it goes: AgentOps exports OTLP/HTTP protobuf to ``exporter_endpoint`` with a bearer JWT
it fetches from ``endpoint`` + ``/v3/auth/token`` with the API key; both point at the same
loopback server as the model: ``/v1/traces`` is ``received_otlp.receiver``,
``/v3/auth/token`` a stub answering a fake token (a dummy UUID API key). ``end_trace``
flushes the batch processor; the ``.jsonl`` keeps the export requests as received. The
metrics exporter's endpoint is fixed (``https://otlp.agentops.ai/v1/metrics``): run in
``unshare -rn`` with only loopback up, it cannot leave the machine. Every ``OTEL_*`` /
``AGENTOPS_*`` / ``OPENAI_*`` variable is removed first; ``AGENTOPS_LOGGING_TO_FILE=false``
(else ``./agentops.log``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "AGENTOPS_", "OPENAI_", "AGNO_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
AGENTOPS_ENV = {
    "AGENTOPS_LOGGING_TO_FILE": "false",  # else it writes ./agentops.log
    "AGNO_TELEMETRY": "false",  # Agno's anonymous run telemetry (os-api.agno.com)
}
os.environ.update(AGENTOPS_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "agno-agentops"
TRACE_NAME = "music_store_support_turn"
PACKAGES = (
    "agentops",
    "agno",
    "openai",
    "httpx2",
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
from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402

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


NOTES = (
    "Agno Agent + OpenAIChat (real AsyncOpenAI client) over a scripted loopback Chat "
    "Completions server, traced by the AgentOps SDK: agentops.init(auto_start_session=False, "
    "endpoint and exporter_endpoint on the same loopback server with a stub /v3/auth/token) "
    "after the Agno imports, so AgentOps' AgnoInstrumentor wraps Agent.arun and "
    "FunctionCall.execute; one agentops.start_trace / end_trace per user turn; OTLP/HTTP "
    "protobuf to a loopback receiver. multi_turn: Agent(session_id=..., db=InMemoryDb(), "
    "add_history_to_context=True) and agentops.update_trace_metadata({'session_id': ...}) in "
    "each turn; see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent(scenario.session_id)
    session_id = scenario.session_id
    assert agentops_tracer.provider is not None
    agentops_tracer.provider.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        trace = agentops.start_trace(TRACE_NAME)
        if session_id is not None:
            agentops.update_trace_metadata({"session_id": session_id})
        output = await agent.arun(text)
        agentops.end_trace(trace, "Success")  # flushes the batch processor
        if output.status is not None and str(output.status.value) != "COMPLETED":
            run_errors.append(f"turn {turn}: run status {output.status}")
        finals.append(output.content if isinstance(output.content, str) else None)
        agentops_tracer.provider.force_flush()  # nothing may lag behind the trace's end
        turn_traces.extend(
            t for t in received_otlp.ids_of(Received.requests[before:]) if t not in turn_traces
        )
    model = agent.model
    if isinstance(model, OpenAIChat) and model.async_client is not None:
        await model.async_client.close()  # inside this event loop, not at garbage collection
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
        run_errors=run_errors,
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
            asyncio.run(run(name))
    finally:
        SERVER.shutdown()


if __name__ == "__main__":
    main()
