"""Capture a hand-written Google GenAI tool loop traced by OpenLLMetry (Traceloop).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-google-genai-traceloop
    V=0.66b0  # pip cannot resolve traceloop-sdk's unpinned contrib instrumentations alone
    /tmp/cap-google-genai-traceloop/bin/pip install traceloop-sdk==0.62.4 \
        opentelemetry-instrumentation-google-generativeai==0.62.4 google-genai httpx \
        opentelemetry-exporter-otlp-proto-common opentelemetry-instrumentation==$V \
        opentelemetry-instrumentation-logging==$V opentelemetry-instrumentation-redis==$V \
        opentelemetry-instrumentation-threading==$V opentelemetry-instrumentation-requests==$V \
        opentelemetry-instrumentation-sqlalchemy==$V opentelemetry-instrumentation-urllib3==$V
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-google-genai-traceloop/bin/python \
        tests/golden/capture/google_genai_traceloop.py [scenario ...]'

Captured with google-genai 3.6.1, traceloop-sdk 0.62.4,
opentelemetry-instrumentation-google-generativeai 0.62.4,
opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-instrumentation 0.66b0,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.0, protobuf 7.36.2,
httpx 0.28.1 (traceloop-sdk imports it without requiring it), Python 3.12.1, in a network
namespace with only loopback up. Writes
``tests/golden/traces/google-genai-traceloop/``.

No agent framework: the hand-written loop of ``google_genai_openinference.py``, unchanged:
``client.models.generate_content`` (non-streaming) with the system instruction and the store's
five tools declared as ``FunctionDeclaration``s, automatic function calling OFF; the loop runs
each ``function_call`` part in order (sequentially, also the two calls of ``parallel_calls``)
and sends one ``function_response`` part per call back in one ``user`` content
(``{"result": <value>}``; the refused refund ``{"error": "RefundWindowExpired: ..."}``).
Multi-turn memory is the conversation kept across turns. The model is the scripted Gemini
Developer API loopback server (``scripted_model.GeminiGenerateContent``, ``api_version="v1beta"``,
``functionCall`` parts without ``id``).

Instrumentation, the way OpenLLMetry's docs show: ``Traceloop.init(app_name=...,
processor=BatchSpanProcessor(<in-memory exporter>), disable_batch=False)`` with
``TRACELOOP_TRACE_CONTENT=true`` (prompts and completions recorded), then
``GoogleGenerativeAiInstrumentor().instrument(tracer_provider=...)`` (``Traceloop.init``
has already instrumented ``google.genai`` with the same instrumentor when it is installed; the
explicit call is then a no-op, kept as the instrumentor's own README shows it). Each user turn
is one ``@agent(name="music_store_support")`` function (traceloop-sdk's decorator: one
application span per turn, ``music_store_support.agent``); no ``@tool``/``@task`` spans (the
tool execution is plain Python, as in the OpenInference capture). ``multi_turn`` calls
``Traceloop.set_association_properties({"session_id": ...})`` inside the agent run.
``TRACELOOP_TELEMETRY=false``, metrics and logs off; nothing is sent anywhere (custom
processor: no Traceloop endpoint).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "GOOGLE_", "GEMINI_", "TRACELOOP_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
TRACELOOP_ENV = {
    "TRACELOOP_TELEMETRY": "false",
    "TRACELOOP_TRACE_CONTENT": "true",
    "TRACELOOP_METRICS_ENABLED": "false",
    "TRACELOOP_LOGGING_ENABLED": "false",
}
os.environ.update(TRACELOOP_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from traceloop.sdk import Traceloop  # noqa: E402
from traceloop.sdk.decorators import agent  # noqa: E402

RECORDER = common.BatchRecorder()
Traceloop.init(
    app_name="music-store-support-google-genai-traceloop",
    resource_attributes={"deployment.environment.name": "acceptance-test"},
    processor=BatchSpanProcessor(
        RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
    ),
    disable_batch=False,
)
_provider = trace.get_tracer_provider()
assert isinstance(_provider, TracerProvider)
PROVIDER: TracerProvider = _provider

from google import genai  # noqa: E402
from google.genai import types  # noqa: E402
from opentelemetry.instrumentation.google_generativeai import (  # noqa: E402
    GoogleGenerativeAiInstrumentor,
)

GoogleGenerativeAiInstrumentor().instrument(tracer_provider=PROVIDER)

FOLDER = common.TRACES / "google-genai-traceloop"
PACKAGES = (
    "google-genai",
    "traceloop-sdk",
    "opentelemetry-instrumentation-google-generativeai",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-instrumentation",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
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


@agent(name=common.AGENT_NAME)
def run_turn(agent_: SupportAgent, user_input: str, session_id: str | None) -> str | None:
    """One user turn: traceloop-sdk's agent span (``music_store_support.agent``)."""
    if session_id is not None:
        Traceloop.set_association_properties({"session_id": session_id})
    return agent_.loop(user_input)


NOTES = (
    "hand-written google-genai tool loop (client.models.generate_content, five "
    "FunctionDeclarations, automatic function calling off, the loop runs each function_call and "
    "sends function_response parts back; scripted Gemini Developer API loopback server, "
    "functionCall parts without id) traced by OpenLLMetry's "
    "opentelemetry-instrumentation-google-generativeai (TRACELOOP_TRACE_CONTENT=true) under "
    "traceloop-sdk's @agent(name='music_store_support') span per user turn; session id through "
    "Traceloop.set_association_properties in multi_turn; no tool spans. See NOTES.md"
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
        finals.append(run_turn(agent, text, session_id))
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
        extra={
            "telemetry_env": TRACELOOP_ENV,
            "function_error_responses_in_last_request": errors_sent,
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
