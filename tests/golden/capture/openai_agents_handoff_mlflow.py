"""Capture an OpenAI Agents SDK handoff (triage agent → store agent) traced by MLflow 3.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-oaho-mlflow
    /tmp/cap-oaho-mlflow/bin/pip install openai-agents mlflow opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-oaho-mlflow/bin/python \
        tests/golden/capture/openai_agents_handoff_mlflow.py [scenario ...]'

Captured with openai-agents 0.24.0, openai 3.57.0 (httpx2 2.16.2), mlflow / mlflow-skinny /
mlflow-tracing 3.17.2, opentelemetry-sdk / -api / -exporter-otlp-proto-common /
-exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1, in a network
namespace with only loopback up. Writes
``tests/golden/traces/openai-agents-handoff-mlflow/``.

Two real ``Agent``s, as in ``openai_agents_handoff.py``: a ``triage`` agent with no tools
and ``handoffs=[store_agent]``, and the store agent (``music_store_support``, the five
``@function_tool``s). Every user turn starts at the triage agent (``Runner.run(triage,
...)``); its model call answers with the SDK's handoff tool call
(``transfer_to_music_store_support``), the SDK switches to the store agent, whose model calls
follow the scenario's script; the store agent's final text is the run's answer (the SDK does
not return to the triage agent). The model is the SDK's ``OpenAIChatCompletionsModel`` with a
real ``AsyncOpenAI`` client pointed at a loopback Chat Completions server in this process
(``scripted_model.ChatCompletions`` with this script's router: the two agents' requests are
told apart by their system message and tool list). Multi-turn memory is a ``SQLiteSession``
(in memory) with ``RunConfig(group_id=session id)``; ``multi_turn`` runs inside
``mlflow.tracing.context(session_id=...)`` (MLflow's documented way to give the traces of a
scope a session).

Instrumentation: ``mlflow.openai.autolog()`` with its defaults (MLflow documents it as the
OpenAI Agents SDK tracing switch: it installs MLflow's agents trace processor and also
patches the ``openai`` client). Export exactly as ``mlflow_langgraph.py``: MLflow's own
tracer provider, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the ``received_otlp.receiver``
route of the loopback server, ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so MLflow
installs only its ``OtelSpanProcessor`` (no MLflow server; ``MLFLOW_TRACKING_URI`` is a
SQLite file under /tmp). MLflow's provider is force-flushed after every user turn.
``MLFLOW_DISABLE_TELEMETRY`` / ``DO_NOT_TRACK`` off; every other ``OTEL_*`` / ``MLFLOW_*`` /
``OPENAI_*`` variable is removed first.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "LANGSMITH_", "LANGCHAIN_", "DATABRICKS_", "OPENAI_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-openai-agents-handoff-mlflow"
FOLDER = common.TRACES / "openai-agents-handoff-mlflow"
PACKAGES = (
    "openai-agents",
    "openai",
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-proto",
    "protobuf",
)
WORKFLOW = "music store support turn"
TRIAGE_NAME = "triage"
TRIAGE_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. You cannot look anything "
    "up yourself: hand every customer request over to the music store support agent."
)
HANDOFF_TOOL = f"transfer_to_{common.AGENT_NAME}"  # the SDK's default handoff tool name

_script = common.active_script


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


class Router:
    """Per-turn routing of the scripted model: which agent asked, and what it gets.

    The triage agent's request (its system prompt, the handoff tool as its only tool) is
    answered with the handoff call, once per turn; the store agent's requests follow the
    scenario's script (``common.Script``), so ``llm_step`` counts the store agent's calls.
    ``llm_calls_per_turn`` counts every model request, the triage agent's included.
    """

    def __init__(self) -> None:
        self.turn = -1
        self.triage_calls = 0
        self.store_calls = 0
        self.log: list[tuple[int, str]] = []  # (turn, agent) per model request

    def start_turn(self, turn: int) -> None:
        self.turn, self.triage_calls, self.store_calls = turn, 0, 0

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        tools = sorted(t["function"]["name"] for t in body.get("tools") or [])
        messages = body.get("messages") or []
        system = (
            messages[0].get("content") if messages and messages[0].get("role") == "system" else None
        )
        script = _script()
        if system == TRIAGE_PROMPT:
            if tools != [HANDOFF_TOOL]:
                raise RuntimeError(f"triage request with tools {tools}")
            if self.triage_calls or self.store_calls:
                raise RuntimeError("the triage agent was asked twice in one turn")
            self.triage_calls += 1
            script.llm_calls[script.turn] += 1
            self.log.append((self.turn, TRIAGE_NAME))
            call_id = f"call_{script.scenario.name[:6]}_{self.turn}h"
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": HANDOFF_TOOL, "arguments": "{}"},
                    }
                ],
            }
            return scripted_model.completion(
                body,
                message,
                response_id=f"chatcmpl_{script.scenario.name}_{self.turn}h",
                finish_reason="tool_calls",
            )
        if system != common.SYSTEM_PROMPT:
            raise RuntimeError(f"request of an unknown agent: {system!r}")
        if not self.triage_calls:
            raise RuntimeError("the store agent was asked before the handoff")
        self.store_calls += 1
        self.log.append((self.turn, common.AGENT_NAME))
        return scripted_model.chat_completion(body)


ROUTER = Router()
MODEL = scripted_model.ChatCompletions(ROUTER.answer)
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-capture-"))
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
import mlflow.tracing.provider  # noqa: E402
from agents import (  # noqa: E402
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    SQLiteSession,
    function_tool,
)
from openai import AsyncOpenAI  # noqa: E402

mlflow.openai.autolog()


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


@function_tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@function_tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@function_tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@function_tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@function_tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client = AsyncOpenAI(api_key="sk-offline", base_url=BASE_URL, max_retries=0)
    model = OpenAIChatCompletionsModel(model=common.MODEL_NAME, openai_client=client)
    store_agent = Agent(
        name=common.AGENT_NAME,
        handoff_description="Answers questions about tracks, albums, artists and invoices, "
        "and refunds purchased tracks.",
        instructions=common.SYSTEM_PROMPT,
        model=model,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    triage = Agent(
        name=TRIAGE_NAME, instructions=TRIAGE_PROMPT, model=model, handoffs=[store_agent]
    )
    session_id = scenario.session_id
    session = SQLiteSession(session_id) if session_id else None
    MODEL.requests.clear()
    ROUTER.log.clear()
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    last_agents: list[str] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        ROUTER.start_turn(turn)
        before = len(Received.requests)
        config = RunConfig(workflow_name=WORKFLOW, group_id=session_id)
        with mlflow.tracing.context(session_id=session_id) if session_id else _Nothing():
            result = await Runner.run(triage, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        last_agents.append(result.last_agent.name)
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    await client.close()  # before asyncio.run closes the loop
    notes = (
        "handoff: every turn starts at the triage agent, whose one model call requests "
        f"{HANDOFF_TOOL}; the store agent then runs the scenario and its final text is the "
        "run's answer (no return to the triage agent); llm_calls_per_turn counts the triage "
        "agent's model call too; OpenAIChatCompletionsModel over a loopback Chat Completions "
        "server; traced by mlflow.openai.autolog() (agents processor + openai client patch), "
        "exported by MLflow's OtelSpanProcessor over OTLP/HTTP protobuf; multi_turn: "
        "SQLiteSession, RunConfig(group_id), mlflow.tracing.context(session_id=...); see NOTES.md"
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=notes,
        session_id=session_id,
        tool_error_contains=TOOL_ERROR_CONTAINS,
        extra={
            "agents": [TRIAGE_NAME, common.AGENT_NAME],
            "handoff_tool": HANDOFF_TOOL,
            "model_requests": [[turn, agent] for turn, agent in ROUTER.log],
            "last_agent_per_turn": last_agents,
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(Received.content_types))
            + ") from MLflow's OtelSpanProcessor with opentelemetry-exporter-otlp-proto-http",
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


TOOL_ERROR_CONTAINS = "Error running tool (non-fatal)"  # the SDK redacts the exception


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
