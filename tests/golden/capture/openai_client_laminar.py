"""Capture a hand-written OpenAI-client tool loop traced by Laminar's Python SDK (``lmnr``).

Not run in CI. Run it in a venv of its own (never evald's); the venv of
``langgraph_laminar.py`` serves (its LangChain/LangGraph instrumentors are loaded too, but
nothing here calls LangChain)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-lmnr2
    /tmp/cap-lmnr2/bin/pip install 'lmnr[langchain]' langchain langgraph langchain-openai
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-lmnr2/bin/python \
        tests/golden/capture/openai_client_laminar.py [scenario ...]'

Captured with lmnr 0.8.1, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto 1.45.1, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/openai-client-laminar/``.

No agent framework: the loop of ``phoenix_decorators_manual.py``. The user's own
plain-Python while-loop calls ``client.chat.completions.create`` (non-streaming, the real
``openai`` client against a loopback HTTP server in this process that scripts the answers,
``scripted_model.ChatCompletions``) with the five tools and the system prompt, appends the
assistant message, runs each ``tool_call`` in order (sequentially, also the two calls of
``parallel_calls``) and appends one ``tool`` message per call, until the model answers
without tool calls. The refused refund raises in the tool (through its ``@observe``
wrapper); the loop catches it and sends ``"Error: RefundWindowExpired: ..."`` back as the
tool message.

Instrumentation, as Laminar's docs show: ``Laminar.initialize()`` with its defaults (every
instrument it finds; here Laminar's own fork of the OpenAI instrumentation: one
``openai.chat`` span per ``chat.completions.create``), ``@observe(name="music_store_support")``
on the agent's method running one user turn, ``@observe(span_type="TOOL")`` on each tool
function (span named after the function; its arguments and return value recorded as
``lmnr.span.input`` / ``lmnr.span.output``). The session id (multi_turn only) is set the
documented way, ``Laminar.set_trace_session_id(session id)`` inside the observed turn. No
project key: Laminar exports with its own ``LaminarSpanExporter`` to
``OTEL_EXPORTER_OTLP_ENDPOINT``, the ``received_otlp.receiver`` route of the same loopback
server, OTLP/HTTP protobuf (gzip); ``Laminar.flush()`` after every user turn. Every
``OTEL_*`` / ``LMNR_*`` / ``OPENAI_*`` variable is removed first.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "LMNR_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "openai-client-laminar"
PACKAGES = (
    "lmnr",
    "openai",
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

import openai  # noqa: E402
from lmnr import Laminar, observe  # noqa: E402

# service.name is Laminar's own (sys.argv[0]): initialize() has no parameter for it.
Laminar.initialize(project_api_key=None)

_script = common.active_script

TOOL_SCHEMAS: list[Any] = [  # Chat Completions tool params
    {
        "type": "function",
        "function": {
            "name": name,
            "description": common.TOOL_DESCRIPTIONS[name],
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
            },
        },
    }
    for name, properties in common.TOOL_PARAMETERS.items()
]


# ------------------------------------------------------------------ the tools (decorated)


@observe(span_type="TOOL")
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@observe(span_type="TOOL")
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@observe(span_type="TOOL")
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@observe(span_type="TOOL")
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@observe(span_type="TOOL")
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS: dict[str, Any] = {
    "lookup_track": lookup_track,
    "lookup_album": lookup_album,
    "lookup_artist": lookup_artist,
    "lookup_invoice": lookup_invoice,
    "refund": refund,
}


def run_tool(name: str, arguments: str) -> str:
    """The application's tool dispatch: the content of the ``tool`` message for one call."""
    try:
        return json.dumps(TOOLS[name](**json.loads(arguments)))
    except common.StoreError as exc:
        return f"Error: {exc}"


# ------------------------------------------------------------------ the agent loop


class SupportAgent:
    """The hand-written agent: the conversation so far and one ``run`` per user turn."""

    def __init__(self, session_id: str | None) -> None:
        self.client = openai.OpenAI(api_key="sk-offline", base_url=BASE_URL, max_retries=0)
        self.messages: list[Any] = [{"role": "system", "content": common.SYSTEM_PROMPT}]
        self.session_id = session_id

    @observe(name=common.AGENT_NAME)
    def run(self, user_input: str) -> str | None:
        """One user turn: ask the model until it answers without tool calls."""
        if self.session_id:
            Laminar.set_trace_session_id(self.session_id)
        self.messages.append({"role": "user", "content": user_input})
        while True:
            response = self.client.chat.completions.create(
                model=common.MODEL_NAME, messages=self.messages, tools=TOOL_SCHEMAS
            )
            message = response.choices[0].message
            self.messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                assert call.type == "function"  # (no custom tools declared)
                content = run_tool(call.function.name, call.function.arguments)
                self.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


# ------------------------------------------------------------------ capture

NOTES = (
    "hand-written Chat Completions agent loop (openai client over a scripted loopback server), "
    "traced by Laminar's Python SDK (lmnr 0.8.1): Laminar.initialize() with its defaults and "
    "no project key (its OpenAI instrumentation: one openai.chat span per request), "
    "@observe(name='music_store_support') on the per-turn run, @observe(span_type='TOOL') on "
    "each tool; multi_turn: Laminar.set_trace_session_id inside the observed turn. Exported by "
    "Laminar's LaminarSpanExporter over OTLP/HTTP protobuf to a loopback receiver; "
    "Laminar.flush() after every turn. See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    assert Laminar.flush()
    Received.requests = []
    MODEL.requests.clear()
    agent = SupportAgent(session_id)
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        finals.append(agent.run(text))
        assert Laminar.flush(), "Laminar's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
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
        session_id=session_id,
        extra={"tool_messages_in_last_request": tool_messages_sent},
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
