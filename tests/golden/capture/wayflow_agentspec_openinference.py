"""Capture an Open Agent Spec agent run by WayFlow, traced by OpenInference's agentspec package.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-wayflow-agentspec-openinference
    /tmp/cap-wayflow-agentspec-openinference/bin/pip install wayflowcore pyagentspec \
        openinference-instrumentation-agentspec opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-wayflow-agentspec-openinference/bin/python \
        tests/golden/capture/wayflow_agentspec_openinference.py [scenario ...]'

Captured with openinference-instrumentation-agentspec 0.1.15, openinference-instrumentation
0.1.72, openinference-semantic-conventions 0.1.42, pyagentspec 26.3.1, wayflowcore 26.3.1,
opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto
1.45.2, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/wayflow-agentspec-openinference/``.

The agent is an Open Agent Spec (``pyagentspec``) ``Agent`` named ``music_store_support``
(the store's system prompt, the five store tools as ``ServerTool``s with their descriptions,
one typed input property per argument and one object output ``result``) whose LLM is an
``OpenAiCompatibleConfig`` (Chat Completions) pointed at the scripted loopback server. It is
loaded by WayFlow's Agent Spec loader (``wayflowcore.agentspec.AgentSpecLoader`` with a
``tool_registry`` mapping each tool name to its Python function, which runs the store of
``common.py``) and run by WayFlow's own agent loop with its own OpenAI-compatible client
(``OpenAICompatibleModel``; its agent loop always streams, so the scripted answers are
sent as Chat Completions server-sent events, ``StreamingChatCompletions`` here): one
``Conversation`` per scenario (``agent.start_conversation(conversation_id=...)``, the
scenario's session id in ``multi_turn``), each user turn ``append_user_message`` +
``execute()``, the same conversation continued across the turns of ``multi_turn``.
The instrumentor's one Agent Spec ``Trace`` lasts as long as the process: every span of
every scenario has the same trace id and ``session.id``, and its ``RootSpan`` (every
turn's parent) is exported only at ``uninstrument()``, after the last scenario was
written, so no file holds it (see the folder's NOTES.md).

Instrumentation, as the instrumentor's README and WayFlow's Agent Spec tracing guide show: a
``TracerProvider`` with a ``BatchSpanProcessor`` over ``OTLPSpanExporter`` (OTLP/HTTP
protobuf) to the loopback receiver, then ``AgentSpecInstrumentor().instrument(
tracer_provider=...)`` — which starts one process-wide Agent Spec ``Trace`` whose span
processors wrap the provider's (``mask_sensitive_information`` left at its default, False:
content on) — and WayFlow's ``AgentSpecEventListener`` registered around each execution
(``register_event_listeners``), which turns WayFlow's events into Agent Spec Tracing spans
and events. ``force_flush`` after every user turn; the loopback ``received_otlp.receiver``
keeps each export request as sent. Every ``OTEL_*`` / ``OPENAI_*`` variable is removed first.
"""

from __future__ import annotations

import json
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
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

FOLDER = common.TRACES / "wayflow-agentspec-openinference"
SERVICE = "music-store-support-wayflow-agentspec-openinference"
PACKAGES = (
    "openinference-instrumentation-agentspec",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "pyagentspec",
    "wayflowcore",
    "httpx",
    "opentelemetry-sdk",
    "opentelemetry-api",
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


def sse_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """A scripted Chat Completions response as the ``chat.completion.chunk`` events of a
    stream (as ``genkit_agent.py``): the message (role, content, tool calls with ids, names
    and whole arguments), then the finish reason, then the usage."""
    choice = response["choices"][0]
    message = choice["message"]
    delta: dict[str, object] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": k, **call} for k, call in enumerate(message["tool_calls"])]
    base = {
        "id": response["id"],
        "object": "chat.completion.chunk",
        "created": response["created"],
        "model": response["model"],
    }
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**base, "choices": [], "usage": response["usage"]},
    ]


class StreamingChatCompletions(scripted_model.ChatCompletions):
    """``scripted_model.ChatCompletions`` that also answers ``stream: true`` requests as
    server-sent events carrying the same scripted response (WayFlow's agent loop always
    streams its model requests: ``stream_generate_async``)."""

    def __call__(self, request: scripted_model.Request) -> scripted_model.Reply:
        body = request.json()
        if not body.get("stream"):
            return super().__call__(request)
        self.requests.append(body)
        events = "".join(
            f"data: {json.dumps(chunk)}\n\n" for chunk in sse_chunks(self.answer(body))
        )
        return scripted_model.Reply(
            (events + "data: [DONE]\n\n").encode(), content_type="text/event-stream"
        )


MODEL = StreamingChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: MODEL,
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

from openinference.instrumentation.agentspec import AgentSpecInstrumentor  # noqa: E402
from pyagentspec.agent import Agent as SpecAgent  # noqa: E402
from pyagentspec.llms import OpenAiCompatibleConfig  # noqa: E402
from pyagentspec.property import (  # noqa: E402
    DictProperty,
    IntegerProperty,
    Property,
    StringProperty,
)
from pyagentspec.tools import ServerTool as SpecServerTool  # noqa: E402
from wayflowcore.agentspec import AgentSpecLoader  # noqa: E402
from wayflowcore.agentspec.tracing import AgentSpecEventListener  # noqa: E402
from wayflowcore.events.eventlistener import register_event_listeners  # noqa: E402
from wayflowcore.executors.executionstatus import UserMessageRequestStatus  # noqa: E402

PROVIDER = TracerProvider(
    resource=Resource.create(
        {"service.name": SERVICE, "deployment.environment.name": "acceptance-test"}
    )
)
PROVIDER.add_span_processor(
    BatchSpanProcessor(
        OTLPSpanExporter(endpoint=f"{SERVER.url}{received_otlp.TRACES_PATH}"),
        schedule_delay_millis=60_000,
        max_queue_size=8192,
        max_export_batch_size=4096,
    )
)
AgentSpecInstrumentor().instrument(tracer_provider=PROVIDER)

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


FUNCTIONS = {
    f.__name__: f for f in (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund)
}
_PROPERTY = {"string": StringProperty, "integer": IntegerProperty}


def spec_tool(name: str) -> SpecServerTool:
    inputs: list[Property] = [
        _PROPERTY[schema["type"]](title=arg, description=schema["description"])
        for arg, schema in common.TOOL_PARAMETERS[name].items()
    ]
    return SpecServerTool(
        name=name,
        description=common.TOOL_DESCRIPTIONS[name],
        inputs=inputs,
        outputs=[DictProperty(title="result", value_type=Property(json_schema={}))],
    )


def spec_agent() -> SpecAgent:
    return SpecAgent(
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        llm_config=OpenAiCompatibleConfig(
            name="scripted-llm", model_id=common.MODEL_NAME, url=f"{SERVER.url}/v1"
        ),
        system_prompt=common.SYSTEM_PROMPT,
        tools=[spec_tool(name) for name in FUNCTIONS],
    )


NOTES = (
    "Open Agent Spec Agent (pyagentspec) loaded and run by WayFlow (wayflowcore's "
    "AgentSpecLoader, OpenAiCompatibleConfig over the scripted Chat Completions server, "
    "ServerTools from a tool_registry), traced by openinference-instrumentation-agentspec "
    "(AgentSpecInstrumentor().instrument(tracer_provider=...)) with WayFlow's "
    "AgentSpecEventListener registered around each execute(); OTLP/HTTP protobuf to a "
    "loopback receiver, force_flush after every turn. One Conversation per scenario, "
    "continued across multi_turn's turns; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = AgentSpecLoader(tool_registry=dict(FUNCTIONS)).load_component(spec_agent())
    # the application names its conversation by the scenario's session id (multi_turn only)
    conversation = agent.start_conversation(conversation_id=scenario.session_id)
    assert PROVIDER.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        conversation.append_user_message(text)
        with register_event_listeners([AgentSpecEventListener()]):
            status = conversation.execute()
        if not isinstance(status, UserMessageRequestStatus):
            raise SystemExit(f"{name}: turn {turn} ended with {status!r}")
        last = conversation.get_last_message()
        finals.append(last.content if last is not None else None)
        assert PROVIDER.force_flush(), "the OTLP export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    last_request = MODEL.requests[-1].get("messages") if MODEL.requests else []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
        extra={
            "tool_messages_in_last_request": [
                m.get("content") for m in last_request or [] if m.get("role") == "tool"
            ],
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        AgentSpecInstrumentor().uninstrument()
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
