"""Capture a pydantic-ai ``Agent`` traced by ``mlflow.pydantic_ai.autolog()`` over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-pydantic-ai-mlflow
    /tmp/cap-pydantic-ai-mlflow/bin/pip install mlflow==3.17.2 'pydantic-ai-slim[openai]' \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-pydantic-ai-mlflow/bin/python \
        tests/golden/capture/pydantic_ai_mlflow.py [scenario ...]'

Captured with mlflow / mlflow-skinny / mlflow-tracing 3.17.2, pydantic-ai-slim /
pydantic-graph 2.68.0, openai 3.57.0 (httpx2 2.16.2), opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/pydantic-ai-mlflow/``.

The agent is the one of ``pydantic_ai_openinference.py``: a real ``pydantic_ai.Agent`` (name
``music_store_support``, the system prompt as ``instructions``) with ``@agent.tool_plain``
tools and ``OpenAIChatModel`` over ``OpenAIProvider(base_url=loopback, api_key=dummy)`` (the
real ``openai.AsyncOpenAI`` client) against the scripted Chat Completions route of a loopback
server in this process (``scripted_model.ChatCompletions``); nothing else is faked. The refused
refund raises pydantic-ai's ``ToolFailed`` with the store's message. ``multi_turn`` passes
``message_history=result.all_messages()`` and runs every turn inside
``mlflow.tracing.context(session_id=...)`` (MLflow 3's documented way to give the traces of a
scope a session: trace metadata ``mlflow.trace.session``, which the OTLP export leaves out);
as in ``pydantic_ai_openinference.py`` the first run also gets pydantic-ai's own
``conversation_id=<session id>`` (inherited from the history afterwards), which reaches the
spans only inside pydantic-ai's message dumps (``conversation_id`` of each request message).
The one-shot scenarios run without either (pydantic-ai then makes up a conversation id).

pydantic-ai's own instrumentation: the brief asked for it off (``instrument=False``). With
pydantic-ai 2.x, MLflow's autolog (``mlflow/pydantic_ai/autolog_v2.py``) records the model
and tool spans by patching pydantic-ai's ``Instrumentation`` capability
(``wrap_model_request``, ``wrap_tool_execute``) and its patched ``Agent.__init__`` sets
``agent.instrument = True`` when the user left it unset; with ``agent.instrument = False``
only ``Agent.run`` is recorded (checked: one span per turn, no model or tool span). So the
agent is built as MLflow's docs show (no ``instrument`` set). pydantic-ai's own OTel spans then
go to the global tracer provider, which nobody sets here (a no-op ``ProxyTracerProvider``):
they are not exported (the script asserts every exported span is MLflow's, scope
``mlflow.tracing.provider``), so only MLflow's spans are read.

Instrumentation and export exactly as ``llamaindex_mlflow.py``: ``mlflow.pydantic_ai.autolog()``
with its defaults (no other autolog), MLflow's own tracer provider,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the ``received_otlp.receiver`` route of the loopback
server and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so MLflow installs only its
``OtelSpanProcessor`` (no tracking-store processor, no MLflow server; ``MLFLOW_TRACKING_URI``
is a SQLite file under /tmp that tracing never writes). MLflow's content capture has no switch:
inputs and outputs are always recorded. ``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV`` (translate to
GenAI semantic conventions at export) is left at its default (off). MLflow's provider is
force-flushed after every user turn, so each turn arrives as its own export.
``MLFLOW_DISABLE_TELEMETRY`` / ``DO_NOT_TRACK`` keep usage telemetry off; every other
``OTEL_*`` / ``MLFLOW_*`` / ``OPENAI_*`` ... variable is removed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "LANGSMITH_", "LANGCHAIN_", "DATABRICKS_", "OPENAI_", "LOGFIRE_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-pydantic-ai-mlflow"
FOLDER = common.TRACES / "pydantic-ai-mlflow"
PACKAGES = (
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "pydantic-ai-slim",
    "pydantic-graph",
    "openai",
    "httpx2",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
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


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-pydantic-ai-capture-"))
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
import mlflow.pydantic_ai  # noqa: E402
import mlflow.tracing.provider  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.exceptions import ToolFailed  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

mlflow.pydantic_ai.autolog()

_script = common.active_script
INSTRUMENT_OFF = "--instrument-off" in sys.argv  # the check described in the docstring


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


def _call(tool: str, **args: Any) -> dict[str, Any]:
    try:
        return dict(_script().call(tool, **args))
    except common.StoreError as exc:
        raise ToolFailed(str(exc)) from exc


def make_agent() -> Agent[None, str]:
    provider = OpenAIProvider(base_url=BASE_URL, api_key="sk-offline")
    model = OpenAIChatModel(common.MODEL_NAME, provider=provider)
    agent: Agent[None, str] = Agent(
        model, name=common.AGENT_NAME, instructions=common.SYSTEM_PROMPT
    )
    if INSTRUMENT_OFF:
        agent.instrument = False

    @agent.tool_plain
    def lookup_track(track_name: str) -> dict[str, Any]:
        """Look up a track in the catalogue by its exact name.

        Args:
            track_name: The exact track name.
        """
        return _call("lookup_track", track_name=track_name)

    @agent.tool_plain
    def lookup_album(album_title: str) -> dict[str, Any]:
        """Look up an album by its title.

        Args:
            album_title: The album title.
        """
        return _call("lookup_album", album_title=album_title)

    @agent.tool_plain
    def lookup_artist(artist_name: str) -> dict[str, Any]:
        """Look up an artist and the albums the store sells by them.

        Args:
            artist_name: The artist's name.
        """
        return _call("lookup_artist", artist_name=artist_name)

    @agent.tool_plain
    def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
        """Fetch an invoice of a customer (lines reference track ids).

        Args:
            customer_id: The customer's id.
            invoice_id: The invoice id.
        """
        return _call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id)

    @agent.tool_plain
    def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
        """Refund one purchased track of an invoice.

        Args:
            invoice_id: The invoice id.
            track_id: The track to refund.
            reason: Why the customer wants the refund.
        """
        return _call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)

    return agent


async def run_turns(
    agent: Agent[None, str],
    scenario: common.Scenario,
    script: common.Script,
    finals: list[str | None],
    turn_traces: list[str],
    *,
    run_errors: list[str],
) -> None:
    history: list[Any] | None = None
    session = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        scope = mlflow.tracing.context(session_id=session) if session else contextlib.nullcontext()
        with scope:
            try:
                if history is None:
                    result = await agent.run(text, conversation_id=session)
                else:
                    result = await agent.run(text, message_history=history)
            except Exception as exc:
                run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
                finals.append(None)
            else:
                finals.append(result.output)
                if session:
                    history = result.all_messages()
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    agent = make_agent()
    MODEL.requests.clear()
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    asyncio.run(run_turns(agent, scenario, script, finals, turn_traces, run_errors=run_errors))
    scopes = {
        scope_spans.scope.name
        for request in Received.requests
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
    }
    assert scopes <= {"mlflow.tracing.provider"}, f"spans not from MLflow: {scopes}"
    last = MODEL.requests[-1].get("messages") if MODEL.requests else []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        run_errors=run_errors,
        extra={
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(Received.content_types))
            + ") from MLflow's OtelSpanProcessor with opentelemetry-exporter-otlp-proto-http",
        },
    )
    if INSTRUMENT_OFF:
        for request in Received.requests:
            print(received_otlp.tree_text(request), file=sys.stderr)
        return
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "pydantic-ai Agent (OpenAIChatModel over a scripted loopback Chat Completions server) "
    "traced by MLflow Tracing (mlflow.pydantic_ai.autolog) on MLflow's own tracer provider, "
    "exported by MLflow's OtelSpanProcessor over OTLP/HTTP protobuf "
    "(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to a loopback receiver (the .jsonl holds each "
    "received request); pydantic-ai's own spans go to the unset global provider (not "
    "exported); refund raises ToolFailed; multi-turn via message_history inside "
    "mlflow.tracing.context(session_id=...); see NOTES.md"
)


def main() -> None:
    for name in common.selected([a for a in sys.argv[1:] if not a.startswith("--")]):
        run(name)
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
