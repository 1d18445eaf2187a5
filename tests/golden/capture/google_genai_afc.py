"""Capture the Google GenAI SDK's automatic function calling (OTel GenAI instrumentation).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-genai
    /tmp/cap-genai/bin/pip install "opentelemetry-instrumentation-google-genai[instruments]" \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-genai/bin/python tests/golden/capture/google_genai_afc.py [--chat] [scenario ...]

(The ``[instruments]`` extra matters: without it pip picks google-genai 3.x, which the
instrumentation's ``instrumentation_dependencies()`` (``google-genai>=1.32.0,<3``) refuses,
so ``instrument()`` silently does nothing.) Captured with google-genai 2.34.0,
opentelemetry-instrumentation-google-genai 1.3b0, opentelemetry-util-genai 1.3b0,
opentelemetry-sdk / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2.

Writes ``tests/golden/traces/google-genai-afc-otel/``, or
with ``--chat`` ``google-genai-afc-chat-otel/`` (every scenario through ``client.chats``).

No agent framework: a plain ``genai.Client`` whose ``generate_content`` gets the store's
tools as Python functions, so the SDK's automatic function calling (AFC) runs them itself
and loops until the model answers with text. ``GoogleGenAiSdkInstrumentor().instrument()``
(OpenTelemetry contrib) wraps ``Models.generate_content`` and the tool functions. Each user
turn is one plain root span ``support_turn`` (no GenAI attributes, as a web handler's span
would be). ``multi_turn`` keeps the conversation in one ``client.chats`` session
(``chat.send_message`` per turn); the other scenarios call ``client.models.generate_content``
(with ``--chat``: a fresh ``client.chats`` session each, ``chat.send_message``).

The two paths trace differently (google-genai 2.34.0): ``Models.generate_content`` runs the
AFC loop inside the one instrumented call, so a turn has ONE ``generate_content`` span (input:
the user message; output: the final text) whose children are ``execute_tool`` spans (the
instrumentation wraps the tool functions it finds in the config). ``Chat.send_message`` runs
the AFC loop itself, calling ``generate_content`` with AFC disabled once per model request
and invoking the original (unwrapped) functions: one ``generate_content`` span per model
request, tool calls / results only in ``gen_ai.output.messages`` / ``gen_ai.input.messages``
(ids synthesised by the instrumentation as ``<tool>_<index in message>``), and NO
``execute_tool`` spans.

The model is scripted by a loopback HTTP server in this process speaking the Gemini
Developer API (``POST /v1beta/models/{model}:generateContent``:
``scripted_model.GeminiGenerateContent``); the client is pointed at
it with ``http_options.base_url`` and a dummy API key, so the SDK's real HTTP client path
runs. The scripted ``functionCall`` parts carry no ``id`` (the Gemini Developer API usually
sends none; the SDK's AFC would not echo it back anyway). The refused refund raises
``StoreError`` inside the tool: the SDK's AFC catches it and sends the model
``{"error": "<message>"}`` as the function response.

Content capture: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_AND_EVENT``.
opentelemetry-util-genai 1.3b0 accepts only NO_CONTENT / SPAN_ONLY / EVENT_ONLY /
SPAN_AND_EVENT: ``true`` is rejected with a warning and means NO_CONTENT. The
instrumentation itself sets ``OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT=true``, so every
inference also emits a ``gen_ai.client.inference.operation.details`` log record; those go to
an SDK ``LoggerProvider`` and are written as ``<scenario>.logs.jsonl`` / ``.logs.pb``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
CONTENT_ENV = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT"}
os.environ.update(CONTENT_ENV)

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-google-genai"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

from google import genai  # noqa: E402
from google.genai import types  # noqa: E402
from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor  # noqa: E402

GoogleGenAiSdkInstrumentor().instrument(tracer_provider=PROVIDER, logger_provider=LOG_PROVIDER)
assert GoogleGenAiSdkInstrumentor().is_instrumented_by_opentelemetry, "instrumentation skipped"

CHAT = "--chat" in sys.argv
FOLDER = common.TRACES / ("google-genai-afc-chat-otel" if CHAT else "google-genai-afc-otel")
TRACER = trace.get_tracer("music_store.web")  # the application's own (web handler) tracer
PACKAGES = (
    "google-genai",
    "opentelemetry-instrumentation-google-genai",
    "opentelemetry-util-genai",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)
MODEL = "gemini-2.5-flash"  # what the application asks for; the server answers as MODEL_NAME

_script = common.active_script
MODEL_ENDPOINT = scripted_model.GeminiGenerateContent()  # .requests: every body received
SERVER = MODEL_ENDPOINT.serve()
BASE_URL = SERVER.url


def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]


def make_client() -> genai.Client:
    return genai.Client(
        api_key="offline-dummy-key",
        http_options=types.HttpOptions(base_url=BASE_URL),
    )


def make_config() -> types.GenerateContentConfig:
    return types.GenerateContentConfig(system_instruction=common.SYSTEM_PROMPT, tools=list(TOOLS))


NOTES_COMMON = (
    "google-genai automatic function calling (Python functions as tools, the SDK runs them) "
    "under opentelemetry-instrumentation-google-genai, content capture SPAN_AND_EVENT (also one "
    "gen_ai.client.inference.operation.details log record per generate_content span); one plain "
    "root span 'support_turn' per user turn; the scripted functionCall parts carry no id; no "
    "session id in any span. "
)
NOTES_MODELS = NOTES_COMMON + (
    "client.models.generate_content: ONE generate_content span covers the whole AFC loop of a "
    "turn (input = the user message, output = the final text; the model's function calls are in "
    "no message), execute_tool spans are its children (arguments/results as "
    "gen_ai.tool.call.arguments/result, no call id). The refused refund raises: execute_tool "
    "status ERROR, error.type 'common.StoreError', no result; the SDK sends the model "
    "{'error': 'Failed to invoke function refund ... because of error RefundWindowExpired: ...'}."
)
NOTES_CHAT = NOTES_COMMON + (
    "client.chats / chat.send_message: the Chat runs the AFC loop, one generate_content span per "
    "model request, NO execute_tool spans (the chat calls the unwrapped functions); tool calls "
    "and results only as tool_call / tool_call_response parts of gen_ai.output.messages / "
    "gen_ai.input.messages, ids synthesised as '<tool>_<index in message>' (not unique across "
    "steps or turns). The refused refund raises: only visible as a tool_call_response "
    "{'error': 'Failed to invoke function refund ... RefundWindowExpired: ...'} in the next "
    "request's input messages; no span has status ERROR."
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client = make_client()
    chat = (
        client.chats.create(model=MODEL, config=make_config())
        if CHAT or name == "multi_turn"
        else None
    )
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL_ENDPOINT.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        with TRACER.start_as_current_span("support_turn"):
            if chat is not None:
                response = chat.send_message(text)
            else:
                response = client.models.generate_content(
                    model=MODEL, contents=text, config=make_config()
                )
        finals.append(response.text or None)
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    errors_sent = [
        part["functionResponse"]["response"]
        for body in MODEL_ENDPOINT.requests
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
        notes=NOTES_CHAT if chat is not None else NOTES_MODELS,
        session_id=None,
        run_errors=run_errors,
        extra={
            "content_capture_env": CONTENT_ENV,
            "function_error_responses_sent_to_model": errors_sent,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
