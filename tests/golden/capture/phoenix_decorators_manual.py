"""Capture a hand-written agent loop instrumented manually with Phoenix's OpenInference decorators.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-phoenix
    /tmp/cap-phoenix/bin/pip install arize-phoenix-otel openinference-instrumentation-openai \
        openai opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-phoenix/bin/python \
        tests/golden/capture/phoenix_decorators_manual.py [scenario ...]'

Captured with arize-phoenix-otel 0.17.2, openinference-instrumentation 0.1.72,
openinference-instrumentation-openai 0.1.66, openinference-semantic-conventions 0.1.42,
openai 3.57.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto-http / -proto
1.45.2, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/phoenix-decorators-manual/``.

No agent framework: the user's own plain-Python while-loop calls
``client.chat.completions.create`` (non-streaming) with the five tools and the system prompt,
appends the assistant message, runs each ``tool_call`` in order (sequentially, also the two
calls of ``parallel_calls``) and appends one ``tool`` message per call, until the model answers
without tool calls. The refused refund raises in the tool (through the ``@tracer.tool``
wrapper); the loop catches it and sends ``"Error: RefundWindowExpired: ..."`` back as the tool
message.

Instrumentation, as Phoenix's "Using Tracing Helpers" docs show: ``tracer_provider =
register(endpoint=<loopback>/v1/traces, project_name=..., batch=True, auto_instrument=True)``
(auto_instrument turns on the installed openinference-instrumentation-openai: one LLM span per
``chat.completions.create``), ``tracer = tracer_provider.get_tracer(__name__)``,
``@tracer.agent(name="music_store_support")`` on the agent's method running one user turn
(``SupportAgent.run(user_input)``; the bound method's signature has no ``self``), and
``@tracer.tool`` on each tool function (name = function name, description = docstring,
parameters = JSON schema inferred from the signature). No ``@tracer.chain``: the docs use it for
generic steps, and this loop has none besides the model call and the tools. The session id
(multi_turn only) is set the documented way, ``with using_session(session_id=...)`` around each
turn's ``agent.run`` call (context attributes: every span started inside gets ``session.id``).

Export: Phoenix's own OTLP/HTTP protobuf exporter (``register``'s ``BatchSpanProcessor``) sends
to a receiver route of the same loopback server that scripts the model; the files are written
from a second processor on the same provider (``add_span_processor(...,
replace_default_processor=False)``, common's in-memory ``BatchRecorder``, flushed per turn),
and each scenario checks that Phoenix's exporter sent the same spans
(``phoenix_export_identical``). ``OTEL_EXPORTER_OTLP_*``, ``PHOENIX_*`` and ``OPENAI_*``
variables are removed first.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_EXPORTER_OTLP", "PHOENIX_", "OPENAI_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

SERVICE = "music-store-support-phoenix-decorators"
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
RECEIVED: list[ExportTraceServiceRequest] = []  # what Phoenix's exporter sent
_LOCK = threading.Lock()


def _keep(request: ExportTraceServiceRequest, content_type: str) -> None:
    with _LOCK:
        RECEIVED.append(request)


SERVER = scripted_model.LoopbackServer(
    {MODEL.PATH: MODEL, received_otlp.TRACES_PATH: received_otlp.receiver(_keep)}
)
BASE_URL = f"{SERVER.url}/v1"

from openinference.instrumentation import using_session  # noqa: E402
from phoenix.otel import register  # noqa: E402

PROVIDER = register(
    endpoint=f"{SERVER.url}{received_otlp.TRACES_PATH}",
    project_name=SERVICE,
    batch=True,
    auto_instrument=True,
    resource=Resource.create(
        {"service.name": SERVICE, "deployment.environment.name": "acceptance-test"}
    ),
)
RECORDER = common.BatchRecorder()
PROVIDER.add_span_processor(
    BatchSpanProcessor(
        RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
    ),
    replace_default_processor=False,
)
tracer = PROVIDER.get_tracer(__name__)

import openai  # noqa: E402

FOLDER = Path(os.environ.get("CAPTURE_OUT") or common.TRACES) / "phoenix-decorators-manual"
PACKAGES = (
    "arize-phoenix-otel",
    "openinference-instrumentation",
    "openinference-instrumentation-openai",
    "openinference-semantic-conventions",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
    "protobuf",
)

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


@tracer.tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tracer.tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tracer.tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tracer.tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tracer.tool
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

    def __init__(self) -> None:
        self.client = openai.OpenAI(api_key="sk-offline", base_url=BASE_URL, max_retries=0)
        self.messages: list[Any] = [{"role": "system", "content": common.SYSTEM_PROMPT}]

    @tracer.agent(name=common.AGENT_NAME)
    def run(self, user_input: str) -> str | None:
        """One user turn: ask the model until it answers without tool calls."""
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


def _span_record(span: Any) -> tuple[Any, ...]:
    return (format(span.context.span_id, "016x"), span.name, len(span.attributes or {}))


def _received_record(span: Any) -> tuple[Any, ...]:
    return (span.span_id.hex(), span.name, len(span.attributes))


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    MODEL.requests.clear()
    PROVIDER.force_flush()
    with _LOCK:
        RECEIVED.clear()
    agent = SupportAgent()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        if session is None:
            finals.append(agent.run(text))
        else:
            with using_session(session_id=session):
                finals.append(agent.run(text))
        PROVIDER.force_flush()  # both processors export
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    ours = sorted(_span_record(s) for s in RECORDER.spans)
    with _LOCK:
        sent = sorted(_received_record(s) for r in RECEIVED for s in received_otlp.all_spans(r))
        sent_batches = len(RECEIVED)
    identical = ours == sent
    if not identical:
        print(f"{name}: Phoenix's exporter sent other spans than the provider", file=sys.stderr)
    tool_messages_sent = [
        message["content"]
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        extra={
            "tool_messages_in_last_request": tool_messages_sent,
            "phoenix_export_identical": identical,
            "phoenix_export_requests": sent_batches,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "hand-written Chat Completions agent loop (openai client over a scripted loopback server), "
    "instrumented by hand with Phoenix's OpenInference decorators (tracer.agent on the per-turn "
    "run, tracer.tool on each tool) and openinference-instrumentation-openai via "
    "register(auto_instrument=True); session id via using_session (multi_turn). Phoenix's "
    "OTLP/HTTP exporter sent to a loopback receiver (same spans). See NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
