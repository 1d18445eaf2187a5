"""Capture a hand-written LiteLLM tool loop traced by OpenInference's LiteLLM instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-litellm-openinference
    /tmp/cap-litellm-openinference/bin/pip install litellm \
        openinference-instrumentation-litellm opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-litellm-openinference/bin/python \
        tests/golden/capture/litellm_openinference.py [scenario ...]'

Captured with litellm 1.110.2, openai 3.57.0, openinference-instrumentation-litellm 0.1.51,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2, protobuf 7.36.2
(Python 3.12.1), in a network namespace with only loopback up. Writes
``tests/golden/traces/litellm-openinference/``.

No agent framework: the loop of ``litellm_otel_loop.py``. The application's own plain-Python
loop calls ``litellm.completion(model="openai/scripted-support-model", api_base=<loopback>/v1,
api_key=dummy, tools=<the five JSON-schema function tools>, max_retries=0)`` (non-streaming,
LiteLLM's OpenAI provider and the real ``openai`` client against a loopback HTTP server in this
process that scripts the answers, ``scripted_model.ChatCompletions``), appends the assistant
message (``model_dump(exclude_none=True)``), runs each requested call in order (sequentially,
also the two calls of ``parallel_calls``) and appends one ``role: tool`` message per call (the
JSON result, or ``{"error": "RefundWindowExpired: ..."}`` for the refused refund), until the
model answers with text. Multi-turn memory is the message list kept across turns.

Instrumentation: ``openinference.instrumentation.litellm.LiteLLMInstrumentor().instrument(
tracer_provider=...)`` as its README shows, its defaults (inputs, outputs and messages
recorded: OpenInference's content capture is on unless hidden by ``OPENINFERENCE_HIDE_*``):
it replaces ``litellm.completion`` (and the other entry points) with a wrapper that starts
one LLM span per call. Each user turn runs under one span the application starts itself, the
way OpenInference's session docs group a turn: named after the agent, ``music_store_support``
(tracer ``music_store.web``), ``openinference.span.kind`` ``AGENT``, ``agent.name``,
``input.value`` (the user's text), ``output.value`` (the answer); in ``multi_turn`` also
``session.id`` on that span and ``using_session(session_id)`` around the turn (so
OpenInference copies ``session.id`` onto its LLM spans). No tool spans: the loop's tools are
plain functions. LiteLLM's model-cost-map download is off (``LITELLM_LOCAL_MODEL_COST_MAP=True``)
and ``litellm.telemetry = False``; no LiteLLM callback is configured.

Export: common's in-memory ``BatchRecorder`` on the SDK provider, flushed after every user turn
(one export batch per turn); every ``OTEL_*``, ``OPENAI_*`` and ``LITELLM_*`` variable is
removed first (nothing is sent anywhere).
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
for _name in [n for n in os.environ if n.startswith(("OTEL_", "OPENAI_", "LITELLM_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
CAPTURE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_PROXY": "127.0.0.1,localhost"}
os.environ.update(CAPTURE_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.litellm import LiteLLMInstrumentor  # noqa: E402
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-litellm-openinference"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
LiteLLMInstrumentor().instrument(tracer_provider=PROVIDER)

import litellm  # noqa: E402

litellm.telemetry = False

FOLDER = common.TRACES / "litellm-openinference"
PACKAGES = (
    "litellm",
    "openai",
    "openinference-instrumentation-litellm",
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
BASE_URL = f"{SERVER.url}/v1"

TOOLS: list[Any] = [  # OpenAI function tool params
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


def agent_loop(messages: list[Any], text: str) -> str | None:
    """The plain-Python tool loop over ``litellm.completion`` for one user message."""
    messages.append({"role": "user", "content": text})
    while True:
        response = litellm.completion(
            model=f"openai/{common.MODEL_NAME}",
            api_base=BASE_URL,
            api_key="sk-offline",
            messages=messages,
            tools=TOOLS,
            max_retries=0,
        )
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content if isinstance(message.content, str) else None
        for call in message.tool_calls:
            content = run_tool(call.function.name or "", call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


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
    "hand-written tool loop over litellm.completion (LiteLLM's OpenAI provider over a scripted "
    "Chat Completions loopback server) traced by openinference-instrumentation-litellm "
    "(defaults: content on): one LLM span 'completion' per call under the application's turn "
    "span 'music_store_support' (openinference.span.kind AGENT, agent.name, input.value, "
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
