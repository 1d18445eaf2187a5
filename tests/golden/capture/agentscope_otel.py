"""Capture an AgentScope ``ReActAgent`` traced by AgentScope's own OpenTelemetry tracing.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agentscope-otel
    /tmp/cap-agentscope-otel/bin/pip install 'agentscope==1.0.21' \
        opentelemetry-exporter-otlp-proto-http
    # agentscope 1.0.21 requires mcp>=1.13 but imports its streamablehttp_client, gone in
    # mcp 2.x (which pip picks); it imports SQLAlchemy's asyncio extension (needs greenlet)
    # and tqdm without requiring either
    /tmp/cap-agentscope-otel/bin/pip install "mcp<2" greenlet tqdm
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-agentscope-otel/bin/python \
        tests/golden/capture/agentscope_otel.py [scenario ...]'

Captured with agentscope 1.0.21 (the newest 1.x; PyPI serves 2.0.11 as the newest),
openai 3.57.0 (on httpx2 2.16.2), opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-http / -exporter-otlp-proto-common 1.45.2,
opentelemetry-semantic-conventions 0.66b2, protobuf 7.36.2, mcp 1.30.0, greenlet 3.5.6,
tqdm 4.70.1, Python 3.12.1, in a network namespace with only loopback up.
Writes ``tests/golden/traces/agentscope-otel/``.

The agent: a real ``agentscope.agent.ReActAgent`` named ``music_store_support`` with
``common.SYSTEM_PROMPT`` as ``sys_prompt``, an ``InMemoryMemory``, the
``OpenAIChatFormatter``, ``parallel_tool_calls=True`` (the calls of one response run
concurrently, ``asyncio.gather``), and a ``Toolkit`` holding the five store tools
registered with ``register_tool_function`` (AgentScope builds each schema from the
signature and the Google-style docstring: common's descriptions; each returns a
``ToolResponse`` whose text block is the result as JSON). The model is AgentScope's
``OpenAIChatModel(model_name, api_key, stream=False, client_args={"base_url": ...})``
(the real ``openai.AsyncOpenAI`` client) against the scripted Chat Completions endpoint
of a loopback server in this process (``scripted_model.ChatCompletions``). The refused
refund raises inside the tool; AgentScope's ``Toolkit`` catches it and hands the model a
tool result ``"Error: RefundWindowExpired: ..."`` (no exception escapes). One
``await agent(Msg("user", text, "user"))`` per user turn; ``multi_turn`` is the same
agent object (its memory) for every turn.

Instrumentation, as AgentScope's tracing docs show: ``agentscope.init(project=...,
name=..., tracing_url=<OTLP/HTTP traces endpoint>)`` once; AgentScope then builds the
global ``TracerProvider`` with a ``BatchSpanProcessor`` over the OTLP/HTTP protobuf
``OTLPSpanExporter`` and traces its agents, models, formatters and toolkits itself (no
content switch: prompts, completions, tool arguments and results are always recorded).
The session: AgentScope writes its ``run_id`` as ``gen_ai.conversation.id`` on every span;
``multi_turn`` passes ``agentscope.init(run_id=<session>)`` (in that scenario's context),
the other scenarios keep the run id AgentScope generates at import (one per process).
``OTEL_SERVICE_NAME`` names the service (AgentScope's provider takes the SDK's default
resource). Where it goes: the exporter's endpoint is ``received_otlp.receiver`` on the
same loopback server as the model; the provider is force-flushed after each user turn,
and the ``.jsonl`` keeps the export requests as received.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "OPENAI_", "DASHSCOPE_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
SERVICE = "music-store-support-agentscope"
os.environ["OTEL_SERVICE_NAME"] = SERVICE
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
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
    {MODEL.PATH: MODEL, received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export)}
)
BASE_URL = f"{SERVER.url}/v1"
TRACING_URL = f"{SERVER.url}{received_otlp.TRACES_PATH}"

import agentscope  # noqa: E402
from agentscope.agent import ReActAgent  # noqa: E402
from agentscope.formatter import OpenAIChatFormatter  # noqa: E402
from agentscope.memory import InMemoryMemory  # noqa: E402
from agentscope.message import Msg, TextBlock  # noqa: E402
from agentscope.model import OpenAIChatModel  # noqa: E402
from agentscope.tool import Toolkit, ToolResponse  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402

agentscope.init(
    project="music-store", name=common.AGENT_NAME, logging_level="WARNING", tracing_url=TRACING_URL
)
_provider = trace.get_tracer_provider()
assert isinstance(_provider, TracerProvider)
PROVIDER: TracerProvider = _provider

FOLDER = common.TRACES / "agentscope-otel"
PACKAGES = (
    "agentscope",
    "openai",
    "httpx2",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-semantic-conventions",
    "protobuf",
)

_script = common.active_script


def _respond(tool: str, **args: Any) -> ToolResponse:
    result = _script().call(tool, **args)  # a StoreError propagates: the Toolkit catches it
    return ToolResponse(content=[TextBlock(type="text", text=json.dumps(result))])


def lookup_track(track_name: str) -> ToolResponse:
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name (str): The exact track name.
    """
    return _respond("lookup_track", track_name=track_name)


def lookup_album(album_title: str) -> ToolResponse:
    """Look up an album by its title.

    Args:
        album_title (str): The album title.
    """
    return _respond("lookup_album", album_title=album_title)


def lookup_artist(artist_name: str) -> ToolResponse:
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name (str): The artist's name.
    """
    return _respond("lookup_artist", artist_name=artist_name)


def lookup_invoice(customer_id: int, invoice_id: int) -> ToolResponse:
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id (int): The customer's id.
        invoice_id (int): The invoice id.
    """
    return _respond("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id)


def refund(invoice_id: int, track_id: int, reason: str) -> ToolResponse:
    """Refund one purchased track of an invoice.

    Args:
        invoice_id (int): The invoice id.
        track_id (int): The track to refund.
        reason (str): Why the customer wants the refund.
    """
    return _respond("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)


def make_agent() -> ReActAgent:
    toolkit = Toolkit()
    for func in (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund):
        toolkit.register_tool_function(func)
    model = OpenAIChatModel(
        model_name=common.MODEL_NAME,
        api_key="sk-offline",
        stream=False,
        client_args={"base_url": BASE_URL},
    )
    return ReActAgent(
        name=common.AGENT_NAME,
        sys_prompt=common.SYSTEM_PROMPT,
        model=model,
        formatter=OpenAIChatFormatter(),
        toolkit=toolkit,
        memory=InMemoryMemory(),
        parallel_tool_calls=True,
    )


NOTES = (
    "AgentScope ReActAgent music_store_support (Toolkit with the five store tools, "
    "OpenAIChatModel over a scripted loopback Chat Completions server, parallel_tool_calls) "
    "traced by AgentScope's own OpenTelemetry tracing: agentscope.init(tracing_url=<loopback "
    "OTLP/HTTP receiver>); multi_turn: the same agent (its memory) and "
    "agentscope.init(run_id=<session>) (gen_ai.conversation.id); see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    if session_id is not None:
        agentscope.init(run_id=session_id, logging_level="WARNING")  # this context only
    agent = make_agent()
    PROVIDER.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        try:
            reply = await agent(Msg("user", text, "user"))
        except Exception as exc:
            run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
            finals.append(None)
        else:
            finals.append(reply.get_text_content())
        PROVIDER.force_flush()
        turn_traces.extend(
            t for t in received_otlp.ids_of(Received.requests[before:]) if t not in turn_traces
        )
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    last = MODEL.requests[-1].get("messages") if MODEL.requests else []
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
            "service_name": SERVICE,
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
        PROVIDER.shutdown()
    finally:
        SERVER.shutdown()


if __name__ == "__main__":
    main()
