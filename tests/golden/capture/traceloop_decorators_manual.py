"""Capture a hand-written agent loop instrumented with traceloop-sdk's decorators.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-traceloop-manual
    V=0.66b0  # pip cannot resolve traceloop-sdk's unpinned contrib instrumentations alone
    /tmp/cap-traceloop-manual/bin/pip install traceloop-sdk==0.62.4 openai==3.57.0 \
        opentelemetry-exporter-otlp-proto-common opentelemetry-instrumentation==$V \
        opentelemetry-instrumentation-logging==$V opentelemetry-instrumentation-redis==$V \
        opentelemetry-instrumentation-threading==$V opentelemetry-instrumentation-requests==$V \
        opentelemetry-instrumentation-sqlalchemy==$V opentelemetry-instrumentation-urllib3==$V
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-traceloop-manual/bin/python tests/golden/capture/traceloop_decorators_manual.py \
        [scenario ...]'

Captured with traceloop-sdk 0.62.4, opentelemetry-instrumentation-openai 0.62.4,
opentelemetry-semantic-conventions-ai 0.5.1, openai 3.57.0, opentelemetry-instrumentation
0.66b0, opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.0, protobuf
7.36.2, Python 3.12.1. Writes ``tests/golden/traces/traceloop-decorators-manual/``.

No agent framework: a plain Python loop (``run_turn``) sends the chat history to the real
``openai.OpenAI`` client (Chat Completions, against a loopback server in this process that
scripts the answers), executes every tool call of the response in order, appends the
``tool`` messages and asks again until the model answers in text. It is instrumented the
way OpenLLMetry's docs show for custom agents: ``Traceloop.init(app_name=...,
processor=BatchSpanProcessor(<in-memory exporter>), disable_batch=False)``, ``@agent`` on
the per-turn run, ``@task`` on the model step (``call_model``), ``@tool`` on each tool
function; the OpenAI instrumentation that ``Traceloop.init`` enables by default records the
chat calls. The refused refund raises in the tool (through the ``@tool`` wrapper); the loop
catches it and sends ``<type>: <message>`` to the model as the tool message. ``multi_turn``
keeps one history across three turns and calls
``Traceloop.set_association_properties({"session_id": ...})`` inside the agent run (the
documented association mechanism). ``TRACELOOP_TELEMETRY=false``; nothing is sent
anywhere (custom processor: no Traceloop endpoint, no metrics, no logs).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "TRACELOOP_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
TRACELOOP_ENV = {
    "TRACELOOP_TELEMETRY": "false",
    "TRACELOOP_TRACE_CONTENT": "true",  # the default, stated
    "TRACELOOP_METRICS_ENABLED": "false",
    "TRACELOOP_LOGGING_ENABLED": "false",
}
os.environ.update(TRACELOOP_ENV)

import common  # noqa: E402
import openai  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from traceloop.sdk import Traceloop  # noqa: E402
from traceloop.sdk.decorators import agent, task, tool  # noqa: E402

RECORDER = common.BatchRecorder()
Traceloop.init(
    app_name="music-store-support-traceloop",
    resource_attributes={"deployment.environment.name": "acceptance-test"},
    processor=BatchSpanProcessor(
        RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
    ),
    disable_batch=False,
)
_provider = trace.get_tracer_provider()
assert isinstance(_provider, TracerProvider)
PROVIDER: TracerProvider = _provider

FOLDER = common.TRACES / "traceloop-decorators-manual"
PACKAGES = (
    "traceloop-sdk",
    "openai",
    "opentelemetry-instrumentation-openai",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-instrumentation",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

MODEL = scripted_model.ChatCompletions()
SERVER = MODEL.serve()
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


@task(name="call_model")
def call_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    response = CLIENT.chat.completions.create(
        model=common.MODEL_NAME,
        messages=messages,  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
    )
    message = response.choices[0].message
    entry: dict[str, Any] = {"role": "assistant", "content": message.content}
    calls = [c for c in message.tool_calls or [] if c.type == "function"]
    if calls:
        entry["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in calls
        ]
    return entry


@agent(name=common.AGENT_NAME)
def run_turn(history: list[dict[str, Any]], user_input: str, session_id: str | None) -> str | None:
    if session_id is not None:
        Traceloop.set_association_properties({"session_id": session_id})
    history.append({"role": "user", "content": user_input})
    while True:
        reply = call_model([{"role": "system", "content": common.SYSTEM_PROMPT}, *history])
        history.append(reply)
        if not reply.get("tool_calls"):
            content = reply.get("content")
            return content if isinstance(content, str) else None
        for call in reply["tool_calls"]:
            function = call["function"]
            try:
                content = json.dumps(
                    FUNCTIONS[function["name"]](**json.loads(function["arguments"]))
                )
            except common.StoreError as exc:
                content = f"{type(exc).__name__}: {exc}"
            history.append({"role": "tool", "tool_call_id": call["id"], "content": content})


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    RECORDER.batches.clear()
    MODEL.requests.clear()
    history: list[dict[str, Any]] = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        finals.append(run_turn(history, text, scenario.session_id))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    tool_messages_sent = [
        message.get("content")
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
        session_id=scenario.session_id,
        extra={
            "telemetry_env": TRACELOOP_ENV,
            "tool_messages_in_last_request": tool_messages_sent,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "Hand-written loop (openai.OpenAI Chat Completions over a scripted loopback server) "
    "instrumented with traceloop-sdk decorators: @agent run_turn (music_store_support.agent), "
    "@task call_model (call_model.task) around each openai.chat span of the OpenAI "
    "instrumentation, @tool per tool (<name>.tool, children of the agent span); session id "
    "through Traceloop.set_association_properties in multi_turn. See NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
