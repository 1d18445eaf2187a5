"""Capture a hand-written Google GenAI tool loop traced by OpenInference (google-genai).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-google-genai-openinference
    /tmp/cap-google-genai-openinference/bin/pip install google-genai \
        openinference-instrumentation-google-genai opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-google-genai-openinference/bin/python \
        tests/golden/capture/google_genai_openinference.py [scenario ...]'

Captured with google-genai 3.6.1, openinference-instrumentation-google-genai 1.4.14,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2,
opentelemetry-instrumentation / -semantic-conventions 0.66b2, protobuf 7.36.2, Python 3.12.1,
in a network namespace with only loopback up. Writes
``tests/golden/traces/google-genai-openinference/``.

No agent framework: the user's own plain-Python loop calls ``client.models.generate_content``
(non-streaming) with the system instruction and the store's five tools declared as
``FunctionDeclaration``s (name, description, ``parameters_json_schema`` from ``common``), and
automatic function calling OFF (``AutomaticFunctionCallingConfig(disable=True)``; the
declarations carry no Python callables anyway). The loop appends the model's content to the
conversation, runs each ``function_call`` part in order (sequentially, also the two calls of
``parallel_calls``) and sends one ``function_response`` part per call back in one ``user``
content (``{"result": <value>}``, the shape the SDK's own AFC sends), until the model answers
with text. The refused refund raises ``StoreError`` in the tool; the loop catches it and sends
``{"error": "RefundWindowExpired: ..."}`` (Gemini's documented ``error`` key of a function
response). Multi-turn memory is the conversation (list of ``Content``) kept across turns.

The model is scripted by a loopback HTTP server in this process speaking the Gemini Developer
API (``POST /v1beta/models/{model}:generateContent``: ``scripted_model.GeminiGenerateContent``),
as ``google_genai_afc.py``: the client is pointed at it with ``http_options.base_url`` and a
dummy API key, and ``api_version="v1beta"`` (google-genai 3.x defaults to ``v1``), so the
SDK's real HTTP client path runs. The scripted ``functionCall`` parts
carry no ``id`` (the Gemini Developer API usually sends none), so the loop's
``function_response`` parts carry none either.

Instrumentation: ``openinference.instrumentation.google_genai.GoogleGenAIInstrumentor()
.instrument(tracer_provider=...)`` with its defaults (OpenInference's ``TraceConfig``: inputs,
outputs and messages recorded; content capture is on unless hidden). Each user turn runs under
one span the application starts itself, the way OpenInference's docs show a manual agent span:
named after the agent, ``music_store_support`` (tracer ``music_store.web``),
``openinference.span.kind`` ``AGENT``, ``agent.name``, ``input.value`` (the user's text),
``output.value`` (the answer); in ``multi_turn`` also ``session.id`` on that span and
``using_session(session_id)`` around the turn (so OpenInference copies ``session.id`` onto its
LLM spans). No tool spans: the instrumentation wraps the SDK's model calls only, and the loop's
tool execution is plain Python.

Export: common's in-memory ``BatchRecorder`` on the SDK provider, flushed after every user turn;
every ``OTEL_*``, ``GOOGLE_*`` and ``GEMINI_*`` variable is removed first (nothing is sent
anywhere).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "GOOGLE_", "GEMINI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-google-genai-openinference"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)

from google import genai  # noqa: E402
from google.genai import types  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor  # noqa: E402
from openinference.semconv.trace import (  # noqa: E402
    OpenInferenceSpanKindValues,
    SpanAttributes,
)

GoogleGenAIInstrumentor().instrument(tracer_provider=PROVIDER)

FOLDER = common.TRACES / "google-genai-openinference"
TRACER = trace.get_tracer("music_store.web")  # the application's own tracer
PACKAGES = (
    "google-genai",
    "openinference-instrumentation-google-genai",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
    "protobuf",
)
MODEL = "gemini-2.5-flash"  # what the application asks for; the server answers as MODEL_NAME

_script = common.active_script
MODEL_ENDPOINT = scripted_model.GeminiGenerateContent()  # .requests: every body received
SERVER = MODEL_ENDPOINT.serve()
BASE_URL = SERVER.url

TOOL = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name=name,
            description=common.TOOL_DESCRIPTIONS[name],
            parameters_json_schema={
                "type": "object",
                "properties": properties,
                "required": list(properties),
            },
        )
        for name, properties in common.TOOL_PARAMETERS.items()
    ]
)


def run_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The application's tool dispatch: the ``response`` of one ``function_response`` part."""
    try:
        return {"result": _script().call(name, **args)}
    except common.StoreError as exc:
        return {"error": str(exc)}


class SupportAgent:
    """The hand-written agent: the conversation so far and one ``run`` per user turn."""

    def __init__(self) -> None:
        self.client = genai.Client(
            api_key="offline-dummy-key",
            http_options=types.HttpOptions(base_url=BASE_URL, api_version="v1beta"),
        )
        self.config = types.GenerateContentConfig(
            system_instruction=common.SYSTEM_PROMPT,
            tools=[TOOL],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        self.contents: list[types.Content] = []

    def loop(self, user_input: str) -> str | None:
        self.contents.append(types.Content(role="user", parts=[types.Part(text=user_input)]))
        while True:
            response = self.client.models.generate_content(
                model=MODEL, contents=self.contents, config=self.config
            )
            content = response.candidates[0].content if response.candidates else None
            assert content is not None
            self.contents.append(content)
            calls = response.function_calls or []
            if not calls:
                return response.text
            parts = []
            for call in calls:
                assert call.name is not None
                result = run_tool(call.name, dict(call.args or {}))
                parts.append(
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call.id, name=call.name, response=result
                        )
                    )
                )
            self.contents.append(types.Content(role="user", parts=parts))

    def run(self, user_input: str, session_id: str | None) -> str | None:
        """One user turn under the application's AGENT span named after the agent."""
        attributes: dict[str, Any] = {
            SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.AGENT.value,
            SpanAttributes.AGENT_NAME: common.AGENT_NAME,
            SpanAttributes.INPUT_VALUE: user_input,
        }
        if session_id:
            attributes[SpanAttributes.SESSION_ID] = session_id
        with (
            session(session_id),
            TRACER.start_as_current_span(common.AGENT_NAME, attributes=attributes) as span,
        ):
            answer = self.loop(user_input)
            if answer is not None:
                span.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
            return answer


@contextlib.contextmanager
def session(session_id: str | None) -> Iterator[None]:
    """OpenInference's documented session context (multi_turn only)."""
    if session_id:
        with using_session(session_id):
            yield
    else:
        yield


NOTES = (
    "hand-written google-genai tool loop (client.models.generate_content, five "
    "FunctionDeclarations, automatic function calling off, the loop runs each function_call and "
    "sends function_response parts back; scripted Gemini Developer API loopback server, "
    "functionCall parts without id) traced by openinference-instrumentation-google-genai "
    "(defaults, content on): one LLM span per model request under the application's turn span "
    "'music_store_support' (openinference.span.kind AGENT, agent.name, input.value, "
    "output.value; session.id and using_session in multi_turn); no tool spans; the refused "
    "refund is only the function_response {'error': 'RefundWindowExpired: ...'}. See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    RECORDER.batches.clear()
    MODEL_ENDPOINT.requests.clear()
    agent = SupportAgent()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        finals.append(agent.run(text, session_id))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    errors_sent = [
        part["functionResponse"]["response"]
        for body in MODEL_ENDPOINT.requests[-1:]
        for content in body.get("contents") or []
        for part in content.get("parts") or []
        if "error" in (part.get("functionResponse") or {}).get("response", {})
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session_id,
        extra={"function_error_responses_in_last_request": errors_sent},
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
