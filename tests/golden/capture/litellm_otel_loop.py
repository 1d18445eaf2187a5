"""Capture a hand-written tool loop seen only through LiteLLM's own OpenTelemetry callback.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-litellm
    /tmp/cap-litellm/bin/pip install litellm opentelemetry-sdk opentelemetry-api \
        opentelemetry-exporter-otlp-proto-http opentelemetry-exporter-otlp-proto-common
    unshare -n sh -c 'ip link set lo up; \
        /tmp/cap-litellm/bin/python tests/golden/capture/litellm_otel_loop.py [scenario ...]'

Captured with litellm 1.110.2, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2
(Python 3.12.1). Writes ``tests/golden/traces/litellm-otel/``.

No agent framework: the application's own plain-Python loop calls
``litellm.completion(model="openai/scripted-support-model", api_base=<loopback>/v1,
tools=...)`` with the five tools as JSON-schema function tools, runs the tool calls of each
response in plain Python (no tool spans; the calls of one response one after the other),
appends the assistant message and one ``role: tool`` message per call, until the model
answers with text. The refused refund is returned to the model as the tool message
``{"error": "RefundWindowExpired: ..."}``. Multi-turn memory is the message list kept
across turns.

Tracing is LiteLLM's legacy ``"otel"`` callback (``litellm.callbacks = ["otel"]``,
``litellm/integrations/opentelemetry.py``), configured by its documented environment
variables: ``OTEL_EXPORTER=otlp_http`` and ``OTEL_ENDPOINT`` = the ``received_otlp.receiver``
route of the loopback server (LiteLLM builds its own TracerProvider, BatchSpanProcessor and
OTLP/HTTP protobuf exporter, and sets it as the global provider), ``OTEL_SERVICE_NAME``.
Each user turn runs under one plain span of the application, ``agent turn`` (its tracer
comes from that global provider): one trace per turn. Since LiteLLM 1.81 a call made under an
active span writes its attributes onto that parent span and creates no span of its own (the
last call of a turn overwriting the earlier ones); ``USE_OTEL_LITELLM_REQUEST_SPAN=true``
(documented) restores one ``litellm_request`` span per call, as children of the turn span.
The callback is instantiated by LiteLLM's own factory before the first turn (the same
object ``litellm.callbacks = ["otel"]`` resolves to), so that the global provider exists
when the first turn span starts. Content capture: LiteLLM's default (``message_logging``
on, no ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``). ``multi_turn``: the three
calls carry ``litellm_session_id`` (LiteLLM's documented session grouping parameter).
LiteLLM's model-cost-map download is off (``LITELLM_LOCAL_MODEL_COST_MAP=True``) and
``litellm.telemetry = False``; the capture ran in a network namespace with only loopback up.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_")]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-litellm"
FOLDER = common.TRACES / "litellm-otel"
PACKAGES = (
    "litellm",
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
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"
CAPTURE_ENV = {
    "OTEL_EXPORTER": "otlp_http",
    "OTEL_ENDPOINT": f"{SERVER.url}{received_otlp.TRACES_PATH}",
    "OTEL_SERVICE_NAME": SERVICE,
    "OTEL_ENVIRONMENT_NAME": "acceptance-test",
    "USE_OTEL_LITELLM_REQUEST_SPAN": "true",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "NO_PROXY": "127.0.0.1,localhost",
}
os.environ.update(CAPTURE_ENV)

import litellm  # noqa: E402
from litellm.litellm_core_utils.litellm_logging import (  # noqa: E402
    _init_custom_logger_compatible_class,
)
from opentelemetry import trace  # noqa: E402

litellm.telemetry = False
litellm.callbacks = ["otel"]
OTEL_LOGGER = _init_custom_logger_compatible_class(
    "otel", internal_usage_cache=None, llm_router=None
)
TRACER = trace.get_tracer("music_store.agent")  # the application's own tracer


def _flush() -> None:
    provider = trace.get_tracer_provider()
    force_flush = getattr(provider, "force_flush", None)
    assert force_flush is not None, f"no SDK provider: {provider!r}"
    force_flush()


_script = common.active_script

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


def agent_turn(messages: list[Any], text: str, session: str | None) -> str | None:
    """One user turn of the plain-Python agent loop, under the application's own span."""
    extra: dict[str, Any] = {"litellm_session_id": session} if session else {}
    with TRACER.start_as_current_span("agent turn"):
        messages.append({"role": "user", "content": text})
        while True:
            response = litellm.completion(
                model=f"openai/{common.MODEL_NAME}",
                api_base=BASE_URL,
                api_key="sk-offline",
                messages=messages,
                tools=TOOLS,
                max_retries=0,
                **extra,
            )
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                _wait_for_logging()
                return message.content if isinstance(message.content, str) else None
            for call in message.tool_calls:
                content = run_tool(call.function.name or "", call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


def _wait_for_logging() -> None:
    """LiteLLM runs its success callbacks on a background thread after ``completion``
    returns: let them end their spans before the turn span ends and the batch is flushed."""
    time.sleep(0.5)


NOTES = (
    "plain-Python tool loop over litellm.completion (no agent or tool spans), traced by "
    "LiteLLM's legacy 'otel' callback exported over OTLP/HTTP to a loopback receiver; one "
    "application span 'agent turn' (no attributes) per user turn, with one litellm_request "
    "span per model call (USE_OTEL_LITELLM_REQUEST_SPAN=true; INTERNAL, scope litellm) and "
    "under it a raw_gen_ai_request span (llm.openai.* = Python reprs of the request and "
    "response). gen_ai.input.messages holds the whole history (semconv parts, but the "
    "assistant's requests as OpenAI-style tool_calls beside empty text parts and tool "
    "results as role tool + tool_call_id + text parts); gen_ai.output.messages DROPS the "
    "requested calls (parts: []), which appear only as gen_ai.completion.<k>.function_call."
    "{name,arguments} (k = call index, no ids) and in the raw span's repr. The refused "
    'refund is the tool message {"error": "RefundWindowExpired: ..."}; no span status '
    "anywhere. No session id on any span (litellm_session_id is sent in multi_turn but the "
    "v1 callback records none), no agent name. See NOTES.md."
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    messages: list[Any] = [{"role": "system", "content": common.SYSTEM_PROMPT}]
    MODEL.requests.clear()
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        finals.append(agent_turn(messages, text, session))
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=None,  # LiteLLM's v1 otel callback records no session id anywhere
        extra={
            "env": CAPTURE_ENV | {"OTEL_ENDPOINT": "http://127.0.0.1:<port>/v1/traces"},
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(Received.content_types))
            + ") from LiteLLM's BatchSpanProcessor with opentelemetry-exporter-otlp-proto-http",
            "model_requests": len(MODEL.requests),
            "litellm_session_id_sent": session,
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    SERVER.shutdown()


if __name__ == "__main__":
    main()
