"""Capture a hand-written Mistral-client tool loop traced by OpenInference's Mistral instrumentor.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mistral-client-openinference
    /tmp/cap-mistral-client-openinference/bin/pip install mistralai \
        openinference-instrumentation-mistralai opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-proto protobuf
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-mistral-client-openinference/bin/python \
        tests/golden/capture/mistral_client_openinference.py [scenario ...]'

Captured with mistralai 3.7.0, openinference-instrumentation-mistralai 2.2.2,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2, protobuf 7.36.2
(Python 3.12.1), in a network namespace with only loopback up. Writes
``tests/golden/traces/mistral-client-openinference/``.

No agent framework: the loop of ``litellm_openinference.py`` / ``openai_client_elastic.py`` on
Mistral's Python SDK, written as Mistral's function-calling docs show it. The application's
own plain-Python loop calls ``client.chat.complete(model=..., messages=..., tools=<the five
JSON-schema function tools>)`` (non-streaming; ``Mistral(api_key=dummy, server_url=<loopback>)``
against a loopback HTTP server in this process that scripts the answers: Mistral's chat API
is Chat-Completions-shaped, ``POST /v1/chat/completions``, so the shared
``scripted_model.ChatCompletions`` answers it unchanged), appends the response's
``AssistantMessage`` object itself (as the docs do), runs each requested call in order
(sequentially, also the two calls of ``parallel_calls``) and appends one ``role: tool``
message per call (``name``, ``tool_call_id`` and the JSON result, or
``{"error": "RefundWindowExpired: ..."}`` for the refused refund), until the model answers
with text. Multi-turn memory is the message list kept across turns.

Instrumentation: ``openinference.instrumentation.mistralai.MistralAIInstrumentor().instrument(
tracer_provider=...)`` as its README shows, its defaults (inputs, outputs and messages
recorded: OpenInference's content capture is on unless hidden by ``OPENINFERENCE_HIDE_*``):
it wraps ``Chat.complete`` (and the stream/async/agents entry points) and starts one LLM span
``MistralClient.chat`` per request. Each user turn runs under one span the application starts
itself, the way OpenInference's session docs group a turn: named after the agent,
``music_store_support`` (tracer ``music_store.web``), ``openinference.span.kind`` ``AGENT``,
``agent.name``, ``input.value`` (the user's text), ``output.value`` (the answer); in
``multi_turn`` also ``session.id`` on that span and ``using_session(session_id)`` around the
turn (so OpenInference copies ``session.id`` onto its LLM spans). No tool spans: the loop's
tools are plain functions.

Export: common's in-memory ``BatchRecorder`` on the SDK provider, flushed after every user turn
(one export batch per turn); every ``OTEL_*`` and ``MISTRAL_*`` variable is removed first
(nothing is sent anywhere).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "MISTRAL_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
CAPTURE_ENV = {"NO_PROXY": "127.0.0.1,localhost"}
os.environ.update(CAPTURE_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.mistralai import MistralAIInstrumentor  # noqa: E402
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-mistral-openinference"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
MistralAIInstrumentor().instrument(tracer_provider=PROVIDER)

from mistralai.client import Mistral  # noqa: E402

FOLDER = common.TRACES / "mistral-client-openinference"
PACKAGES = (
    "mistralai",
    "openinference-instrumentation-mistralai",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)
TRACER = trace.get_tracer("music_store.web")  # the application's own tracer

_script = common.active_script

MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = SERVER.url  # the SDK adds /v1/chat/completions

TOOLS: list[Any] = [  # Mistral function tool params (the Chat Completions shape)
    {
        "type": "function",
        "function": {
            "name": name,
            "description": common.TOOL_DESCRIPTIONS[name],
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }
    for name, properties in common.TOOL_PARAMETERS.items()
]


def run_tool(name: str, arguments: str) -> str:
    """The application's tool dispatch: the JSON content of the ``role: tool`` message."""
    args = json.loads(arguments)
    try:
        result = _script().call(name, **args)
    except common.StoreError as exc:
        return json.dumps({"error": str(exc)})
    return json.dumps(result)


CLIENT = Mistral(api_key="offline", server_url=BASE_URL)


def agent_loop(messages: list[Any], text: str) -> str | None:
    """The plain-Python tool loop over ``client.chat.complete`` for one user message."""
    messages.append({"role": "user", "content": text})
    while True:
        response = CLIENT.chat.complete(
            model=common.MODEL_NAME, messages=messages, tools=TOOLS, tool_choice="auto"
        )
        message = response.choices[0].message
        assert message is not None  # (non-streaming: always a message)
        messages.append(message)  # the AssistantMessage itself, as Mistral's docs do
        if not message.tool_calls:
            return message.content if isinstance(message.content, str) else None
        for call in message.tool_calls:
            arguments = call.function.arguments
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            messages.append(
                {
                    "role": "tool",
                    "name": call.function.name,
                    "tool_call_id": call.id,
                    "content": run_tool(call.function.name, arguments),
                }
            )


@contextlib.contextmanager
def session(session_id: str | None) -> Iterator[None]:
    """OpenInference's documented session context (multi_turn only)."""
    if session_id:
        with using_session(session_id):
            yield
    else:
        yield


def run_turn(messages: list[Any], text: str, session_id: str | None) -> str | None:
    """One user turn under the application's span named after the agent."""
    attributes: dict[str, Any] = {
        SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.AGENT.value,
        SpanAttributes.AGENT_NAME: common.AGENT_NAME,
        SpanAttributes.INPUT_VALUE: text,
    }
    if session_id:
        attributes[SpanAttributes.SESSION_ID] = session_id
    with (
        session(session_id),
        TRACER.start_as_current_span(common.AGENT_NAME, attributes=attributes) as span,
    ):
        answer = agent_loop(messages, text)
        if answer is not None:
            span.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
        return answer


NOTES = (
    "hand-written tool loop over Mistral's client.chat.complete (mistralai SDK over a scripted "
    "Chat Completions loopback server) traced by openinference-instrumentation-mistralai "
    "(defaults: content on): one LLM span 'MistralClient.chat' per call under the application's "
    "turn span 'music_store_support' (openinference.span.kind AGENT, agent.name, input.value, "
    "output.value; session.id and using_session in multi_turn); no tool spans; the refused "
    'refund is only the tool message {"error": "RefundWindowExpired: ..."}. See NOTES.md'
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    RECORDER.batches.clear()
    MODEL.requests.clear()
    messages: list[Any] = [{"role": "system", "content": common.SYSTEM_PROMPT}]
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        finals.append(run_turn(messages, text, session_id))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    last = (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session_id,
        extra={
            "env": CAPTURE_ENV,
            "tool_messages_in_last_request": [
                m.get("content") for m in last if m.get("role") == "tool"
            ],
            "model_requests": len(MODEL.requests),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
