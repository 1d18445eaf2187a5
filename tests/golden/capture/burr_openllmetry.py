"""Capture a Burr application through Burr's OpenTelemetry bridge + OpenLLMetry's OpenAI.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-burr
    /tmp/cap-burr/bin/pip install burr openai opentelemetry-instrumentation-openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-burr/bin/python tests/golden/capture/burr_openllmetry.py [scenario ...]'

Captured with burr (apache-burr) 0.42.0, openai 3.57.0, opentelemetry-instrumentation-openai
0.62.4, opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-instrumentation 0.66b2,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1. Writes ``tests/golden/traces/burr-openllmetry/``.

A real Burr ``Application`` (a state machine) built with ``ApplicationBuilder``: actions
``human_input`` (appends the user's text to the chat history), ``call_model`` (one Chat
Completions request with the real ``openai.OpenAI`` client against a loopback server in
this process that scripts the answers), ``run_tools`` (runs every tool call of the last
response, each inside a ``__tracer(<tool name>)`` span, Burr's documented visibility API,
and appends the ``tool`` messages) and ``answer`` (takes the final text); transitions
``call_model -> run_tools`` while the last response requested tools, ``run_tools ->
call_model``, ``call_model -> answer``, ``answer -> human_input``. One
``app.run(halt_after=["answer"], inputs={"user_input": text})`` per user turn. Tracing is
Burr's ``OpenTelemetryBridge()`` lifecycle hook (``with_hooks``) plus OpenLLMetry's
``OpenAIInstrumentor`` (installed through Burr's own ``init_instruments("openai")``) on
the global provider; the bridge records no attributes of its own. The refused refund
raises in the tool; ``run_tools`` catches it and sends ``<type>: <message>`` to the model as
the tool message. ``multi_turn`` is one Application with ``with_identifiers(app_id=<session
id>)`` (Burr's notion of a session) run three times; nothing in either tracer writes the
app id on a span. Burr has no telemetry (removed per ASF policy); no traceloop-sdk is
installed (``TRACELOOP_TELEMETRY=false`` anyway).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere
os.environ["TRACELOOP_TELEMETRY"] = "false"
os.environ["TRACELOOP_TRACE_CONTENT"] = "true"  # the default, stated

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-burr")
trace.set_tracer_provider(PROVIDER)

import openai  # noqa: E402  (init_instruments instruments imported modules only)
from burr.core import Application, ApplicationBuilder, State, action, default, expr  # noqa: E402
from burr.integrations.opentelemetry import OpenTelemetryBridge, init_instruments  # noqa: E402
from burr.visibility import TracerFactory  # noqa: E402

init_instruments("openai")

FOLDER = common.TRACES / "burr-openllmetry"
PACKAGES = (
    "burr",
    "apache-burr",
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


@action(reads=["chat_history"], writes=["chat_history"])
def human_input(state: State, user_input: str) -> State:
    return state.append(chat_history={"role": "user", "content": user_input})


@action(reads=["chat_history"], writes=["chat_history", "pending_tool_calls", "reply"])
def call_model(state: State) -> State:
    messages = [{"role": "system", "content": common.SYSTEM_PROMPT}, *state["chat_history"]]
    response = CLIENT.chat.completions.create(
        model=common.MODEL_NAME,
        messages=messages,
        tools=TOOLS,  # type: ignore[arg-type]
    )
    message = response.choices[0].message
    calls = [
        {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
        for c in message.tool_calls or []
        if c.type == "function"
    ]
    entry: dict[str, Any] = {"role": "assistant", "content": message.content}
    if calls:
        entry["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in calls
        ]
    return state.append(chat_history=entry).update(pending_tool_calls=calls, reply=message.content)


@action(reads=["chat_history", "pending_tool_calls"], writes=["chat_history", "pending_tool_calls"])
def run_tools(state: State, __tracer: TracerFactory) -> State:
    for call in state["pending_tool_calls"]:
        with __tracer(call["name"]):
            try:
                content = json.dumps(
                    common.active_script().call(call["name"], **json.loads(call["arguments"]))
                )
            except common.StoreError as exc:
                content = f"{type(exc).__name__}: {exc}"
        state = state.append(
            chat_history={"role": "tool", "tool_call_id": call["id"], "content": content}
        )
    return state.update(pending_tool_calls=[])


@action(reads=["reply"], writes=["final_answer"])
def answer(state: State) -> State:
    return state.update(final_answer=state["reply"])


def make_app(app_id: str | None) -> Application[Any]:
    builder = (
        ApplicationBuilder()
        .with_actions(human_input, call_model, run_tools, answer)
        .with_transitions(
            ("human_input", "call_model", default),
            ("call_model", "run_tools", expr("len(pending_tool_calls) > 0")),
            ("call_model", "answer", default),
            ("run_tools", "call_model", default),
            ("answer", "human_input", default),
        )
        .with_state(chat_history=[], pending_tool_calls=[], reply=None, final_answer=None)
        .with_entrypoint("human_input")
        .with_hooks(OpenTelemetryBridge())
    )
    if app_id is not None:
        builder = builder.with_identifiers(app_id=app_id)
    return builder.build()


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    app = make_app(scenario.session_id)
    RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        _, _, state = app.run(halt_after=["answer"], inputs={"user_input": text})
        final = state["final_answer"]
        finals.append(final if isinstance(final, str) else None)
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
            "burr_app_id": app.uid,
            "tool_messages_in_last_request": tool_messages_sent,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "Burr Application (actions human_input, call_model, run_tools, answer) traced by Burr's "
    "OpenTelemetryBridge hook (scope burr.integrations.opentelemetry: a `run` span per "
    "app.run, a child span per action named after the action, a child per __tracer span "
    "named after the tool; no attributes at all) + OpenLLMetry's OpenAIInstrumentor "
    "(openai.chat CLIENT spans with gen_ai.* prompt/completion attributes) under "
    "call_model. See NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
