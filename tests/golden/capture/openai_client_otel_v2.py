"""Capture the plain OpenAI Python SDK instrumented by opentelemetry-instrumentation-openai-v2.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/venv-openai-v2
    /tmp/venv-openai-v2/bin/pip install openai opentelemetry-instrumentation-openai-v2 \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    # as served: openai 3.54.0 (on httpx2), opentelemetry-instrumentation-openai-v2 2.4b0,
    # opentelemetry-util-genai 1.3b0. The instrumentation does not import with them:
    #   * it imports ``httpx`` (openai 3.x depends on ``httpx2`` only): install httpx;
    #   * it imports ``opentelemetry.util.genai.instruments``, which util-genai 1.2b0+
    #     renamed ``_instruments``: pin the last release that has it, 1.1b0.
    /tmp/venv-openai-v2/bin/pip install httpx "opentelemetry-util-genai==1.1b0"
    /tmp/venv-openai-v2/bin/python tests/golden/capture/openai_client_otel_v2.py [scenario ...]

    # --legacy: the last instrumentation release before util-genai (v1.30.0 conventions,
    # one log record per message, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)
    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/venv-openai-v2-legacy
    /tmp/venv-openai-v2-legacy/bin/pip install openai \
        "opentelemetry-instrumentation-openai-v2==2.3b0" opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common httpx "wrapt<2"
    # (2.3b0 calls wrap_function_wrapper(module=..., name=...), keywords wrapt 2 renamed)
    /tmp/venv-openai-v2-legacy/bin/python tests/golden/capture/openai_client_otel_v2.py --legacy

Versions used: openai 3.54.0, opentelemetry-instrumentation-openai-v2 2.4b0,
opentelemetry-util-genai 1.1b0, opentelemetry-instrumentation / -semantic-conventions
0.66b2, opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2,
httpx 0.28.1, protobuf 7.36.2 (Python 3.12.1); ``--legacy``: the same with
opentelemetry-instrumentation-openai-v2 2.3b0, wrapt 1.17.3 and no util-genai.

Writes ``tests/golden/traces/openai-client-otel-v2/``, or
with ``--legacy`` ``openai-client-otel-v2-legacy/``.

No agent framework: the user's own plain-Python loop calls ``client.chat.completions.create``
with the five tools as JSON-schema function tools, runs the tool calls of each response in
plain Python (no tool spans), appends ``response.choices[0].message`` and one ``role: tool``
message per call (the OpenAI function-calling guide's idiom), until the model answers with
text. The refused refund is reported to the model as the tool message
``{"error": "RefundWindowExpired: ..."}``. Each user turn runs under one plain root span
``support_turn`` (no attributes, as a web handler's span would be): one trace per turn.
Multi-turn memory is the message list kept across turns.

Only the client is instrumented (``OpenAIInstrumentor().instrument(tracer_provider=...,
logger_provider=...)``): one CLIENT span ``chat <model>`` per request, metadata only; the
message content goes out as OTLP log records, captured with an SDK ``LoggerProvider`` and
written as ``<scenario>.logs.jsonl`` / ``.logs.pb``:

* default (2.4b0 + util-genai 1.1b0): util-genai always runs the latest experimental GenAI
  conventions, where ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` is not a
  valid mode (warning, NO_CONTENT); with ``EVENT_ONLY`` one log record per call, event
  ``gen_ai.client.inference.operation.details``, with ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` as structured attributes;
* ``--legacy`` (2.3b0): v1.30.0 conventions with ``...CAPTURE_MESSAGE_CONTENT=true``: one log
  record per request message (``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message``) and per choice (``gen_ai.choice``).

The model is scripted by a loopback HTTP server speaking Chat Completions
(``scripted_model.ChatCompletions``); the real ``openai.OpenAI`` client talks to it (no network).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
LEGACY = "--legacy" in sys.argv
CAPTURE_ENV = (
    # opentelemetry-instrumentation-openai-v2 2.3b0 (its last release without util-genai):
    # v1.30.0 conventions, content as one log record per message.
    {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
    if LEGACY
    # 2.4b0 with util-genai >= 1.0b0 always runs on the latest experimental GenAI conventions
    # (util-genai's ``is_experimental_mode()`` returns True), where ``true`` is not a valid
    # content mode (it falls back to NO_CONTENT); EVENT_ONLY puts the content in log records.
    else {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY",
    }
)
os.environ.update(CAPTURE_ENV)

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-openai"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)

from openai import OpenAI  # noqa: E402
from openai.types.chat import ChatCompletionMessageFunctionToolCall  # noqa: E402
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402

OpenAIInstrumentor().instrument(  # type: ignore[no-untyped-call]
    tracer_provider=PROVIDER, logger_provider=LOG_PROVIDER
)

FOLDER = common.TRACES / ("openai-client-otel-v2-legacy" if LEGACY else "openai-client-otel-v2")
PACKAGES = (
    "openai",
    "opentelemetry-instrumentation-openai-v2",
    "opentelemetry-util-genai",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
    "opentelemetry-sdk",
    "httpx",
    "wrapt",
)
TRACER = trace.get_tracer("music_store.web")  # the application's own tracer


_script = common.active_script


SERVER = scripted_model.ChatCompletions().serve()
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


def support_turn(client: OpenAI, messages: list[Any], text: str) -> str | None:
    """One user turn of the plain-Python agent loop, under the application's root span."""
    with TRACER.start_as_current_span("support_turn"):
        messages.append({"role": "user", "content": text})
        while True:
            response = client.chat.completions.create(
                model=common.MODEL_NAME, messages=messages, tools=TOOLS
            )
            message = response.choices[0].message
            messages.append(message)
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                assert isinstance(call, ChatCompletionMessageFunctionToolCall)  # as scripted
                content = run_tool(call.function.name, call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


NOTES_COMMON = (
    "client-only instrumentation (no agent or tool spans): one plain root span "
    "'support_turn' per user turn (no attributes) with one 'chat <model>' CLIENT span per "
    "request; the refused refund is returned to the model as tool content "
    '{"error": "RefundWindowExpired: ..."} (no span status anywhere); no session id '
    "anywhere (multi_turn history is the message list); no server.address/port (the "
    "instrumentation tests base_url against httpx.URL, openai 3.x uses httpx2)"
)
NOTES_LATEST = NOTES_COMMON + (
    "; 2.4b0 on util-genai 1.1b0 = latest experimental conventions, EVENT_ONLY: spans hold "
    "metadata only; every message (system, user, assistant tool calls with ids and "
    "arguments, tool results with ids, final text) is in ONE log record per chat call, "
    "event gen_ai.client.inference.operation.details, as structured attributes "
    "gen_ai.input.messages / gen_ai.output.messages (empty body), carrying the chat span's "
    "trace/span id (<scenario>.logs.jsonl)"
)
NOTES_LEGACY = NOTES_COMMON + (
    "; 2.3b0 = v1.30.0 conventions with content 'true': spans hold metadata only; one log "
    "record per request message (events gen_ai.system.message, gen_ai.user.message, "
    "gen_ai.assistant.message with body.tool_calls, gen_ai.tool.message with body.id = call "
    "id and body.content) and one gen_ai.choice per response choice, bodies as AnyValue "
    "maps, each carrying the chat span's trace/span id (<scenario>.logs.jsonl)"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client = OpenAI(api_key="sk-offline", base_url=BASE_URL, max_retries=0)
    messages: list[Any] = [{"role": "system", "content": common.SYSTEM_PROMPT}]
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        finals.append(support_turn(client, messages, text))
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES_LEGACY if LEGACY else NOTES_LATEST,
        session_id=None,
        extra={
            "telemetry_env": CAPTURE_ENV,
            "log_records": len(LOG_RECORDER.records),
            "log_export_batches": len([b for b in LOG_RECORDER.batches if b]),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(RECORDER.spans, LOG_RECORDER.records), encoding="utf-8"
    )


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
