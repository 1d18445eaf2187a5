"""Capture a hand-written OpenAI-client tool loop traced by Elastic's EDOT OpenAI instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-openai-client-elastic
    /tmp/cap-openai-client-elastic/bin/pip install openai \
        elastic-opentelemetry-instrumentation-openai openinference-instrumentation-openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-openai-client-elastic/bin/python \
        tests/golden/capture/openai_client_elastic.py [scenario ...]'
    # the second folder, the same loop traced by OpenInference's OpenAI instrumentation:
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-openai-client-elastic/bin/python \
        tests/golden/capture/openai_client_elastic.py --openinference [scenario ...]'

Captured with elastic-opentelemetry-instrumentation-openai 1.2.0, openai 3.57.0,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2,
opentelemetry-instrumentation / -semantic-conventions 0.66b2, protobuf 7.36.2, Python 3.12.1,
in a network namespace with only loopback up; ``--openinference``: openinference-instrumentation-
openai 0.1.66, openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42
(same venv, the Elastic instrumentation not loaded). Writes
``tests/golden/traces/openai-client-elastic/`` or, with ``--openinference``,
``tests/golden/traces/openai-client-openinference/``.

No agent framework: the loop of ``openai_client_laminar.py`` / ``phoenix_decorators_manual.py``.
The user's own plain-Python while-loop calls ``client.chat.completions.create`` (non-streaming,
the real ``openai`` client against a loopback HTTP server in this process that scripts the
answers, ``scripted_model.ChatCompletions``) with the five tools and the system prompt, appends
the assistant message (``model_dump(exclude_none=True)``), runs each ``tool_call`` in order
(sequentially, also the two calls of ``parallel_calls``) and appends one ``tool`` message per
call, until the model answers without tool calls. The refused refund raises in the tool; the
loop catches it and sends ``"Error: RefundWindowExpired: ..."`` back as the tool message.
Multi-turn memory is the message list kept across turns.

Instrumentation:

* default: Elastic's EDOT ``elastic-opentelemetry-instrumentation-openai`` (its README: the
  instrumentor, content capture by ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``,
  which "records more information about prompts as log events"), here set up in code as
  ``OpenAIInstrumentor().instrument(tracer_provider=..., logger_provider=...)`` instead of the
  ``opentelemetry-instrument`` wrapper (same instrumentor, same environment variable, the
  global tracer and logger providers set first, ``instrument()`` without arguments): one
  CLIENT span ``chat <model>`` per request (GenAI 1.29-era keys: ``gen_ai.operation.name``,
  ``gen_ai.request.model``, ``gen_ai.response.id`` ...), the content as OTLP log records, one per
  request message (``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message``) and one ``gen_ai.choice`` per
  response choice, written as ``<scenario>.logs.jsonl`` / ``.logs.pb``. The Elastic docs show
  no tool spans for this instrumentation: none are made.
* ``--openinference``: ``openinference.instrumentation.openai.OpenAIInstrumentor().instrument(
  tracer_provider=...)``, its defaults (inputs and outputs recorded): one LLM span
  ``ChatCompletion`` per request; no log records. The session id (multi_turn only) is set the
  way OpenInference documents it, ``with using_session(session_id)`` around each turn.

Each user turn runs under one span the application starts itself, named after the agent,
``music_store_support`` (the application's tracer ``music_store.web``, no attributes, as a
web handler's span would be): one trace per turn. The Elastic capture has no session concept:
no session id is recorded anywhere (``session_id`` null in its labels).

Export: common's in-memory ``BatchRecorder`` (and ``common_logs.LogBatchRecorder`` for the log
records) on the SDK providers, flushed after every user turn; every ``OTEL_*`` and
``OPENAI_*`` variable is removed first (nothing is sent anywhere).
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
for _name in [n for n in os.environ if n.startswith(("OTEL_", "OPENAI_", "ELASTIC_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
OPENINFERENCE = "--openinference" in sys.argv
CONTENT_ON = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}  # Elastic's README
CAPTURE_ENV: dict[str, str] = {} if OPENINFERENCE else CONTENT_ON
os.environ.update(CAPTURE_ENV)

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry._logs import set_logger_provider  # noqa: E402

SERVICE = (
    "music-store-support-openai-openinference"
    if OPENINFERENCE
    else "music-store-support-openai-elastic"
)
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
# Global providers and a bare ``instrument()``, as the ``opentelemetry-instrument`` wrapper of
# Elastic's docs does. (Passing ``logger_provider=`` does not work with 1.2.0: the instrumentor
# calls ``get_logger(__name__, logger_provider)``, i.e. passes it as the scope *version*, so the
# records go to the global provider with a LoggerProvider object as scope version, which the
# OTLP encoder rejects.)
set_logger_provider(LOG_PROVIDER)

if OPENINFERENCE:
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

    OIInstrumentor().instrument(tracer_provider=PROVIDER)
else:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor as ElasticInstrumentor

    ElasticInstrumentor().instrument()  # the global providers set above

import openai  # noqa: E402

FOLDER = common.TRACES / (
    "openai-client-openinference" if OPENINFERENCE else "openai-client-elastic"
)
PACKAGES = (
    ("openinference-instrumentation-openai", "openinference-instrumentation")
    if OPENINFERENCE
    else ("elastic-opentelemetry-instrumentation-openai",)
) + (
    "openinference-semantic-conventions" if OPENINFERENCE else "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
    "openai",
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

TOOL_SCHEMAS: list[Any] = [  # Chat Completions tool params
    {
        "type": "function",
        "function": {
            "name": name,
            "description": common.TOOL_DESCRIPTIONS[name],
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
            },
        },
    }
    for name, properties in common.TOOL_PARAMETERS.items()
]


def run_tool(name: str, arguments: str) -> str:
    """The application's tool dispatch: the content of the ``tool`` message for one call."""
    try:
        return json.dumps(_script().call(name, **json.loads(arguments)))
    except common.StoreError as exc:
        return f"Error: {exc}"


class SupportAgent:
    """The hand-written agent: the conversation so far and one ``run`` per user turn."""

    def __init__(self) -> None:
        self.client = openai.OpenAI(api_key="sk-offline", base_url=BASE_URL, max_retries=0)
        self.messages: list[Any] = [{"role": "system", "content": common.SYSTEM_PROMPT}]

    def run(self, user_input: str) -> str | None:
        """One user turn under the application's span named after the agent."""
        with TRACER.start_as_current_span(common.AGENT_NAME):
            self.messages.append({"role": "user", "content": user_input})
            while True:
                response = self.client.chat.completions.create(
                    model=common.MODEL_NAME, messages=self.messages, tools=TOOL_SCHEMAS
                )
                message = response.choices[0].message
                self.messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    return message.content
                for call in message.tool_calls:
                    assert call.type == "function"  # (no custom tools declared)
                    content = run_tool(call.function.name, call.function.arguments)
                    self.messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": content}
                    )


@contextlib.contextmanager
def session(session_id: str | None) -> Iterator[None]:
    """OpenInference's documented session context; the Elastic capture has none."""
    if OPENINFERENCE and session_id:
        with using_session(session_id):
            yield
    else:
        yield


NOTES_ELASTIC = (
    "hand-written Chat Completions agent loop (openai client over a scripted loopback server) "
    "under an application span 'music_store_support' per turn (no attributes), traced by "
    "Elastic's elastic-opentelemetry-instrumentation-openai with "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: one CLIENT span 'chat <model>' "
    "per request (metadata only), the content as OTLP log records (<scenario>.logs.jsonl): one "
    "per request message (gen_ai.system/user/assistant/tool.message) and one gen_ai.choice per "
    "response choice, each carrying the chat span's trace/span id; no tool spans; the refused "
    "refund is only the tool message 'Error: RefundWindowExpired: ...'; no session anywhere. "
    "See NOTES.md"
)
NOTES_OPENINFERENCE = (
    "hand-written Chat Completions agent loop (openai client over a scripted loopback server) "
    "under an application span 'music_store_support' per turn (no attributes), traced by "
    "openinference-instrumentation-openai (defaults): one LLM span 'ChatCompletion' per "
    "request with llm.input_messages / llm.output_messages and input.value / output.value; "
    "no tool spans; the refused refund is only the tool message "
    "'Error: RefundWindowExpired: ...'; multi_turn: using_session(session id) around each "
    "turn (session.id on the ChatCompletion spans only: the application's own turn span, "
    "started by a plain OTel tracer, takes no context attributes). See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id if OPENINFERENCE else None
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    agent = SupportAgent()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        with session(session_id):
            finals.append(agent.run(text))
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    tool_messages_sent = [
        message["content"]
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
    extra: dict[str, Any] = {"tool_messages_in_last_request": tool_messages_sent}
    if not OPENINFERENCE:
        extra |= {
            "telemetry_env": CAPTURE_ENV,
            "log_records": len(LOG_RECORDER.records),
            "log_export_batches": len([b for b in LOG_RECORDER.batches if b]),
        }
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES_OPENINFERENCE if OPENINFERENCE else NOTES_ELASTIC,
        session_id=session_id,
        extra=extra,
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    if not OPENINFERENCE:
        common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
        (FOLDER / f"{name}.tree.txt").write_text(
            common_logs.tree_text_with_logs(RECORDER.spans, LOG_RECORDER.records),
            encoding="utf-8",
        )


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        PROVIDER.shutdown()
        LOG_PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
