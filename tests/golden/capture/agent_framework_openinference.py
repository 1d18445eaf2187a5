"""Capture Microsoft Agent Framework traced by OpenInference's agent-framework processor.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agent-framework-openinference
    /tmp/cap-agent-framework-openinference/bin/pip install agent-framework-core==1.23.0 \
        agent-framework-openai openinference-instrumentation-agent-framework \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-agent-framework-openinference/bin/python \
        tests/golden/capture/agent_framework_openinference.py [scenario ...]'

Captured with openinference-instrumentation-agent-framework 0.1.13,
openinference-semantic-conventions 0.1.42, agent-framework-core 1.23.0,
agent-framework-openai 1.17.0, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto 1.45.2,
opentelemetry-semantic-conventions 0.66b2, protobuf 7.36.2, Python 3.12.1, in a network
namespace with only loopback up. Writes ``tests/golden/traces/agent-framework-openinference/``.

The agent is that of ``ms_agent_framework.py``: a real ``agent_framework.Agent`` (the former
``ChatAgent``; name ``music_store_support``) with the store's five ``@tool`` functions and an
``OpenAIChatCompletionClient`` (Chat Completions API, real ``openai.AsyncOpenAI`` client)
pointed at the scripted loopback server; one ``agent.run`` per user turn; ``multi_turn``
keeps the conversation in one ``AgentSession`` (``agent.create_session(session_id=...)``).

Instrumentation: openinference-instrumentation-agent-framework 0.1.13 has no
``AgentFrameworkInstrumentor``: it is a ``SpanProcessor``
(``AgentFrameworkToOpenInferenceProcessor``) that rewrites the framework's own GenAI spans
when they end (adds ``openinference.span.kind``, ``llm.*`` / ``tool.*`` / ``input.value`` /
``output.value`` / flattened ``llm.input_messages.*``, keeps the ``gen_ai.*`` keys, sets
status OK on every span not in ERROR). So the framework's own instrumentation must be on:
set up exactly as the package README's "With Phoenix or Arize AX" block shows — a
``TracerProvider`` with the processor added first, then a ``BatchSpanProcessor`` (the README
shows ``SimpleSpanProcessor``; batched here so that one turn is one export) over
``OTLPSpanExporter(endpoint=<loopback>/v1/traces)`` (OTLP/HTTP protobuf), set as the global
provider, then ``enable_instrumentation(enable_sensitive_data=True)`` (content on). No logger
provider is set (the README sets none), so the framework's GenAI message log events go
nowhere. ``force_flush`` after every user turn; the loopback ``received_otlp.receiver``
keeps each export request as sent. Every ``OTEL_*`` / ``OPENAI_*`` variable is removed
first.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

FOLDER = common.TRACES / "agent-framework-openinference"
SERVICE = "music-store-support-agent-framework-openinference"
PACKAGES = (
    "openinference-instrumentation-agent-framework",
    "openinference-semantic-conventions",
    "agent-framework-core",
    "agent-framework-openai",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "opentelemetry-semantic-conventions",
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
        scripted_model.ChatCompletions.PATH: MODEL,
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
BASE_URL = f"{SERVER.url}/v1"

from agent_framework import Agent, tool  # noqa: E402
from agent_framework.observability import enable_instrumentation  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from openinference.instrumentation.agent_framework import (  # noqa: E402
    AgentFrameworkToOpenInferenceProcessor,
)

PROVIDER = TracerProvider(
    resource=Resource.create(
        {"service.name": SERVICE, "deployment.environment.name": "acceptance-test"}
    )
)
PROVIDER.add_span_processor(AgentFrameworkToOpenInferenceProcessor())
PROVIDER.add_span_processor(
    BatchSpanProcessor(
        OTLPSpanExporter(endpoint=f"{SERVER.url}{received_otlp.TRACES_PATH}"),
        schedule_delay_millis=60_000,
        max_queue_size=8192,
        max_export_batch_size=4096,
    )
)
trace.set_tracer_provider(PROVIDER)
enable_instrumentation(enable_sensitive_data=True)

_script = common.active_script


@tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_agent() -> tuple[OpenAIChatCompletionClient, Agent]:
    client = OpenAIChatCompletionClient(
        model=common.MODEL_NAME, api_key="sk-offline", base_url=BASE_URL
    )
    return client, Agent(
        client=client,
        instructions=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )


NOTES = (
    "Microsoft Agent Framework Agent + OpenAIChatCompletionClient (scripted Chat Completions "
    "server) with the framework's own instrumentation (enable_instrumentation("
    "enable_sensitive_data=True)) rewritten by openinference-instrumentation-agent-framework's "
    "AgentFrameworkToOpenInferenceProcessor (added before the exporter's processor), as its "
    "README shows; OTLP/HTTP protobuf to a loopback receiver, force_flush after every turn; "
    "no logger provider. multi_turn: one AgentSession(session_id=...); see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client, agent = make_agent()
    session = agent.create_session(session_id=scenario.session_id) if scenario.session_id else None
    assert PROVIDER.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        response = await agent.run(text, session=session)
        finals.append(response.text or None)
        assert PROVIDER.force_flush(), "the OTLP export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    await client.client.close()  # inside this event loop, not at garbage collection
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
        # the id the application gave its AgentSession; it reaches no span (the framework
        # writes no gen_ai.conversation.id for a local session): SESSION_NOT_RECORDED
        session_id=scenario.session_id,
        extra={
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
