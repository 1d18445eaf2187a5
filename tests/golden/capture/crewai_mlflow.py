"""Capture the CrewAI crew of ``crewai_crew.py`` traced by ``mlflow.crewai.autolog()`` over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-crewai-mlflow
    /tmp/cap-crewai-mlflow/bin/pip install mlflow==3.17.2 crewai==1.15.28 openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-crewai-mlflow/bin/python tests/golden/capture/crewai_mlflow.py [scenario ...]'

Captured with mlflow / mlflow-skinny / mlflow-tracing 3.17.2, crewai / crewai-core / crewai-cli
1.15.28, openai 2.54.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common /
-exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1, in a network
namespace with only loopback up. Writes ``tests/golden/traces/crewai-mlflow/``.

Why crewai 1.15.28, not 1.15.30 (the newest, and the version of the other CrewAI
captures): crewai 1.15.29 removed ``crewai.agents.crew_agent_executor``, the first module
``mlflow.crewai.autolog()`` 3.17.2 patches; its ``ModuleNotFoundError`` aborts every patch
(one ``try`` around them all; it only logs "An exception happens when applying
auto-tracing to crewai"), so with crewai 1.15.30 nothing at all is traced (checked: 0
spans). 1.15.28 is the newest crewai the autolog patches; MLflow's docs state
"known to be compatible" up to crewai 1.9.3.

The crew is the one of ``crewai_crew.py``: one ``Crew`` of one ``Agent`` (role
``music_store_support``) and one ``Task`` whose description is the customer's message, the
five store tools as ``@tool`` functions, sequential process, one ``crew.kickoff`` per user
turn. The model is CrewAI's own native OpenAI provider (``crewai.LLM(provider="openai")`` →
``OpenAICompletion``) with its real ``openai`` client pointed at the scripted Chat
Completions route of a loopback server in this process (``scripted_model.ChatCompletions``),
so CrewAI takes its native function-calling path (the calls of one response run in a
thread pool); nothing else is faked. The refused refund raises inside the tool: CrewAI
hands the model "Error executing tool: …". Multi-turn memory is CrewAI's crew-chat idiom
(``inputs["crew_chat_messages"]``: the previous user/assistant texts appended to the task
description); ``multi_turn`` runs inside ``mlflow.tracing.context(session_id=...)`` (MLflow's
documented way to give the traces of a scope a session); the one-shot scenarios run
without session id.

Instrumentation: ``mlflow.crewai.autolog()`` with its defaults (inputs and outputs of every
span are recorded; there is no other content switch), no other autolog. MLflow patches
``Crew.kickoff``, ``Task.execute_sync``, ``Agent.execute_task``, ``crewai.LLM.call``, the
executor's memory save and, for native function calling, the executor's
``_handle_native_tool_calls``. With CrewAI's defaults none of the last three runs: the
native provider (``OpenAICompletion``) is no ``crewai.LLM``, and Agents inside Crews use
the ``AgentExecutor`` (a Flow), not the deprecated ``CrewAgentExecutor``; so each turn is
three spans (``Crew.kickoff`` → ``Task.execute_sync`` → the agent, named by its role), the
calls only inside the task's output (its ``messages``). Checked, not captured: with
``Agent(executor_class="CrewAgentExecutor")`` a TOOL span per model response appears,
named after and holding only its first call (MLflow reads ``tool_calls[0]``); still no
model span. Export exactly as ``mlflow_langgraph.py``: MLflow's own
tracer provider, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the ``received_otlp.receiver``
route of the loopback server and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so
MLflow installs only its ``OtelSpanProcessor`` (no tracking-store processor, no MLflow
server; ``MLFLOW_TRACKING_URI`` is a SQLite file under /tmp that tracing never writes).
MLflow's provider is force-flushed after every user turn, so each turn arrives as its own
export. ``MLFLOW_DISABLE_TELEMETRY`` / ``DO_NOT_TRACK`` keep MLflow's usage telemetry off
and CrewAI's variables of ``crewai_crew.py`` keep CrewAI's own telemetry and tracing off;
every other ``OTEL_*`` / ``MLFLOW_*`` / ... variable is removed first.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "LANGSMITH_", "LANGCHAIN_", "DATABRICKS_", "OPENAI_", "CREWAI_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver
CREWAI_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",  # CrewAI's anonymous telemetry (its own provider)
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",  # CrewAI AMP tracing, and its first-run prompt
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # no PyPI look-up from the console formatter
}
os.environ.update(CREWAI_ENV)  # not OTEL_SDK_DISABLED: it would disable MLflow's provider too

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-crewai-mlflow"
FOLDER = common.TRACES / "crewai-mlflow"
PACKAGES = (
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "crewai",
    "crewai-core",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
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
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-crewai-capture-"))
os.environ.update(
    {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{SERVER.url}{received_otlp.TRACES_PATH}",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_SERVICE_NAME": SERVICE,
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=acceptance-test",
        "MLFLOW_TRACKING_URI": f"sqlite:///{_STORE / 'mlflow.db'}",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
        "NO_PROXY": "127.0.0.1,localhost",
    }
)

import mlflow  # noqa: E402
import mlflow.crewai  # noqa: E402
import mlflow.tracing.provider  # noqa: E402
from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.events.event_bus import crewai_event_bus  # noqa: E402
from crewai.tools import tool  # noqa: E402

mlflow.crewai.autolog()

_script = common.active_script


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


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
    session = scenario.session_id
    crew = make_crew()
    history: list[dict[str, str]] = []
    MODEL.requests.clear()
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        inputs: dict[str, Any] = {"customer_message": text}
        if history:  # CrewAI's crew-chat idiom (crewai.utilities.crew_chat)
            inputs["crew_chat_messages"] = json.dumps(history)
        with mlflow.tracing.context(session_id=session) if session else _Nothing():
            output = crew.kickoff(inputs=inputs)
        assert isinstance(output, CrewOutput)  # not a streaming crew
        finals.append(output.raw or None)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": output.raw}]
        crewai_event_bus.flush()
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    tool_messages_sent = [
        message["content"]
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
        session_id=session,
        extra={
            "telemetry_env": CREWAI_ENV,
            "tool_messages_in_last_request": tool_messages_sent,
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(Received.content_types))
            + ") from MLflow's OtelSpanProcessor with opentelemetry-exporter-otlp-proto-http",
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


NOTES = (
    "CrewAI Crew (one Agent, one Task, @tool functions) with CrewAI's native OpenAI provider "
    "over a scripted loopback Chat Completions server (native function calling: calls of one "
    "response run in a thread pool), traced by MLflow Tracing (mlflow.crewai.autolog) on "
    "MLflow's own tracer provider, exported by MLflow's OtelSpanProcessor over OTLP/HTTP "
    "protobuf (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to a loopback receiver (the .jsonl holds "
    "each received request); the refused refund raises: the model gets 'Error executing "
    "tool: ...'; multi_turn history through inputs['crew_chat_messages'] inside "
    "mlflow.tracing.context(session_id=...); see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
