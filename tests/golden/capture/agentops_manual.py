"""Capture a hand-written agent loop instrumented with the AgentOps SDK.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agentops
    /tmp/cap-agentops/bin/pip install agentops openai
    # agentops 0.4.21's exporter subclasses OTLPSpanExporter and reads its private
    # ``_headers`` / ``_session``, gone in opentelemetry-exporter-otlp-proto-http 1.45
    # (every export fails: "'AuthenticatedOTLPExporter' object has no attribute
    # '_headers'"): pin the last OpenTelemetry release that has them.
    /tmp/cap-agentops/bin/pip install opentelemetry-api==1.44.0 opentelemetry-sdk==1.44.0 \
        opentelemetry-exporter-otlp-proto-http==1.44.0 \
        opentelemetry-exporter-otlp-proto-common==1.44.0 opentelemetry-proto==1.44.0 \
        opentelemetry-instrumentation==0.65b0 opentelemetry-semantic-conventions==0.65b0
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-agentops/bin/python tests/golden/capture/agentops_manual.py [scenario ...]'

Captured with agentops 0.4.21, openai 3.57.0, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-http / -exporter-otlp-proto-common 1.44.0, opentelemetry-instrumentation
/ -semantic-conventions 0.65b0, protobuf 7.36.2, wrapt 1.17.3, Python 3.12.1.
Writes ``tests/golden/traces/agentops-manual/``.

No agent framework: a plain Python loop sends the chat history to the real ``openai.OpenAI``
client (Chat Completions, against a loopback server in this process that scripts the
answers), executes every tool call of the response in order, appends the ``tool`` messages
and asks again until the model answers in text. It is instrumented the way AgentOps' docs
show for custom agents ("Tracking agents", "Decorators"): ``agentops.init(...,
auto_start_session=False)``, one ``@trace`` function per user interaction (``support_turn``),
inside it an ``@agent(name=...)`` class instantiated per turn whose ``@operation`` method
runs the loop, and ``@tool`` on each tool function; the OpenAI instrumentation that
``agentops.init`` enables (``instrument_llm_calls`` default) records the chat calls. The
refused refund raises in the tool (through the ``@tool`` wrapper); the loop catches it and
sends ``<type>: <message>`` to the model as the tool message.

Where it goes: AgentOps exports OTLP/HTTP protobuf to ``exporter_endpoint`` (documented init
setting, default ``https://otlp.agentops.ai/v1/traces``) with a bearer JWT it fetches from
``endpoint`` + ``/v3/auth/token`` with the API key. Both point at the loopback server here:
``/v1/traces`` is ``received_otlp.receiver`` and ``/v3/auth/token`` a tiny stub answering a
fake token (a dummy UUID API key), so the SDK runs its normal authenticated path. A custom
``exporter=`` / ``processor=`` is accepted by ``init`` but not used by 0.4.21's tracer setup.
The metrics exporter's endpoint is fixed (``https://otlp.agentops.ai/v1/metrics``): run in a
network namespace with only loopback up, it cannot leave the machine. AgentOps has no session
id across traces (a trace *is* its session); ``multi_turn`` keeps one history across three
turns and calls the documented ``agentops.update_trace_metadata({"session_id": ...})``
inside each turn's trace.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "AGENTOPS_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
AGENTOPS_ENV = {"AGENTOPS_LOGGING_TO_FILE": "false"}  # else it writes ./agentops.log
os.environ.update(AGENTOPS_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

EXPORTS: list[ExportTraceServiceRequest] = []
AUTH_REQUESTS: list[dict[str, Any]] = []


def _keep(request: ExportTraceServiceRequest, content_type: str) -> None:
    EXPORTS.append(request)


def _auth(request: scripted_model.Request) -> scripted_model.Reply:
    AUTH_REQUESTS.append(request.json())
    return scripted_model.Reply.json(
        {"token": "offline-jwt-token", "project_id": "offline-project"}
    )


MODEL = scripted_model.ChatCompletions()
SERVER = scripted_model.LoopbackServer(
    {
        MODEL.PATH: MODEL,
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep),
        r"/v3/auth/token": _auth,
    }
)

import agentops  # noqa: E402
import openai  # noqa: E402
from agentops.sdk.core import tracer as agentops_tracer  # noqa: E402
from agentops.sdk.decorators import agent, operation, tool, trace  # noqa: E402

AGENTOPS_INIT = {
    "api_key": str(uuid.UUID(int=0x0FF11E)),  # a dummy key of the documented UUID shape
    "endpoint": SERVER.url,
    "exporter_endpoint": f"{SERVER.url}{received_otlp.TRACES_PATH}",
    "auto_start_session": False,  # as the docs for @trace say
    "export_flush_interval": 60_000,  # export when a trace ends (the SDK flushes then)
    "log_level": "WARNING",
}
agentops.init(**AGENTOPS_INIT)  # type: ignore[arg-type]

FOLDER = common.TRACES / "agentops-manual"
PACKAGES = (
    "agentops",
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

CLIENT = openai.OpenAI(api_key="sk-offline", base_url=f"{SERVER.url}/v1", max_retries=0)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": common.TOOL_DESCRIPTIONS[name],
            "parameters": {
                "type": "object",
                "properties": common.TOOL_PARAMETERS[name],
                "required": list(common.TOOL_PARAMETERS[name]),
            },
        },
    }
    for name in common.TOOL_PARAMETERS
]


@tool(name="lookup_track")
def lookup_track(track_name: str) -> dict[str, Any]:
    return dict(common.active_script().call("lookup_track", track_name=track_name))


@tool(name="lookup_album")
def lookup_album(album_title: str) -> dict[str, Any]:
    return dict(common.active_script().call("lookup_album", album_title=album_title))


@tool(name="lookup_artist")
def lookup_artist(artist_name: str) -> dict[str, Any]:
    return dict(common.active_script().call("lookup_artist", artist_name=artist_name))


@tool(name="lookup_invoice")
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    return dict(
        common.active_script().call(
            "lookup_invoice", customer_id=customer_id, invoice_id=invoice_id
        )
    )


@tool(name="refund")
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    return dict(
        common.active_script().call(
            "refund", invoice_id=invoice_id, track_id=track_id, reason=reason
        )
    )


FUNCTIONS = {
    "lookup_track": lookup_track,
    "lookup_album": lookup_album,
    "lookup_artist": lookup_artist,
    "lookup_invoice": lookup_invoice,
    "refund": refund,
}


@agent(name=common.AGENT_NAME)
class SupportAgent:
    """The music store's support agent: a plain tool loop over Chat Completions."""

    def __init__(self, client: openai.OpenAI) -> None:
        self.client = client

    @operation(name="answer")
    def answer(self, history: list[dict[str, Any]], user_input: str) -> str | None:
        history.append({"role": "user", "content": user_input})
        while True:
            response = self.client.chat.completions.create(
                model=common.MODEL_NAME,
                messages=[{"role": "system", "content": common.SYSTEM_PROMPT}, *history],  # type: ignore[list-item]
                tools=TOOLS,  # type: ignore[arg-type]
            )
            message = response.choices[0].message
            calls = [c for c in message.tool_calls or [] if c.type == "function"]
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in calls
                ]
            history.append(entry)
            if not calls:
                return message.content
            for call in calls:
                try:
                    content = json.dumps(
                        FUNCTIONS[call.function.name](**json.loads(call.function.arguments))
                    )
                except common.StoreError as exc:
                    content = f"{type(exc).__name__}: {exc}"
                history.append({"role": "tool", "tool_call_id": call.id, "content": content})


@trace(name="support_turn")
def support_turn(history: list[dict[str, Any]], text: str, session_id: str | None) -> str | None:
    if session_id is not None:
        agentops.update_trace_metadata({"session_id": session_id})
    support = SupportAgent(CLIENT)
    return support.answer(history, text)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    EXPORTS.clear()
    MODEL.requests.clear()
    history: list[dict[str, Any]] = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(EXPORTS)
        finals.append(support_turn(history, text, scenario.session_id))
        assert agentops_tracer.provider is not None
        agentops_tracer.provider.force_flush()  # the trace's end flushed already; nothing may lag
        turn_traces.extend(
            t for t in received_otlp.ids_of(EXPORTS[before:]) if t not in turn_traces
        )
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
        session_id=scenario.session_id,
        extra={
            "agentops_env": AGENTOPS_ENV,
            "agentops_init": {k: v for k, v in AGENTOPS_INIT.items() if k != "api_key"},
            "auth_requests": len(AUTH_REQUESTS),
            "tool_messages_in_last_request": tool_messages_sent,
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, list(EXPORTS))


NOTES = (
    "Hand-written loop (openai.OpenAI Chat Completions over a scripted loopback server) "
    "instrumented with the AgentOps SDK as its docs show: @trace support_turn per user turn, "
    "@agent class SupportAgent (span from __init__ to __del__), @operation answer, @tool per "
    "tool; AgentOps' own OpenAI instrumentation records the chat calls; exported OTLP/HTTP to "
    "a loopback receiver (exporter_endpoint) after a loopback auth stub gave a JWT; session id "
    "via agentops.update_trace_metadata in multi_turn. See NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    SERVER.shutdown()


if __name__ == "__main__":
    main()
