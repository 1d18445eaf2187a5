"""Capture a hand-written OpenAI-client tool loop traced by Logfire's ``instrument_openai``.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-openai-client-logfire
    /tmp/cap-openai-client-logfire/bin/pip install logfire openai opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-openai-client-logfire/bin/python \
        tests/golden/capture/openai_client_logfire.py [scenario ...]'

Captured with logfire 5.4.0 (logfire-sdk 5.4.0), openai 3.57.0 (its HTTP client httpx2
2.16.2), opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2,
opentelemetry-instrumentation / -semantic-conventions 0.66b2, protobuf 7.36.2, Python 3.12.1,
in a network namespace with only loopback up. Writes
``tests/golden/traces/openai-client-logfire/``.

No agent framework: the loop of ``openai_client_laminar.py`` / ``openai_client_elastic.py``.
The user's own plain-Python while-loop calls ``client.chat.completions.create``
(non-streaming, the real ``openai`` client against a loopback HTTP server in this process
that scripts the answers, ``scripted_model.ChatCompletions``) with the five tools and the
system prompt, appends the assistant message (``model_dump(exclude_none=True)``), runs each
``tool_call`` in order (sequentially, also the two calls of ``parallel_calls``) and appends
one ``tool`` message per call, until the model answers without tool calls. The refused refund
raises in the tool (through its ``@logfire.instrument`` wrapper); the loop catches it and
sends ``"Error: RefundWindowExpired: ..."`` back as the tool message. Multi-turn memory is the
message list kept across turns.

Instrumentation, as Logfire's docs show (OpenAI integration, manual tracing, baggage):

* ``logfire.configure(send_to_logfire=False, console=False, service_name=...,
  environment=..., additional_span_processors=[BatchSpanProcessor(recorder)])``: Logfire
  builds and installs its own ``TracerProvider``; the recorder is one more processor on it
  (behind Logfire's scrubbing wrapper), defaults otherwise (scrubbing on, baggage copied to
  attributes).
* ``logfire.instrument_openai(client)`` on the loop's client, its default ``version=2``
  (GenAI semantic-convention attributes ``gen_ai.input.messages`` / ``gen_ai.output.messages``
  ...). Logfire has no content switch for it: prompts and completions are always recorded
  (subject only to scrubbing, which redacted nothing here).
* each user turn runs in ``with logfire.span("music_store_support", user_input=...)`` (the
  documented manual span, named after the agent, the user's text as its one attribute);
* each tool function is decorated ``@logfire.instrument(record_return=True)`` (the documented
  function decorator: the arguments become attributes, the return value ``return``; a raised
  exception is recorded on the span);
* ``multi_turn``: the session id is put on every span of each turn the way Logfire documents
  for ids shared across a trace, ``with logfire.set_baggage(session_id=...)`` around the turn
  (Logfire copies baggage to the attributes of every span started inside it).

Export: common's in-memory ``BatchRecorder`` behind a ``BatchSpanProcessor`` on Logfire's
provider, flushed after every user turn. No token, nothing sent anywhere: every ``OTEL_*``,
``LOGFIRE_*`` and ``OPENAI_*`` variable is removed first.
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
for _name in [n for n in os.environ if n.startswith(("OTEL_", "LOGFIRE_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind

import common  # noqa: E402
import logfire  # noqa: E402
import openai  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

RECORDER = common.BatchRecorder()
PROCESSOR = BatchSpanProcessor(
    RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
)
logfire.configure(
    send_to_logfire=False,
    console=False,
    service_name="music-store-support-openai-client",
    environment="acceptance-test",
    additional_span_processors=[PROCESSOR],
)

FOLDER = common.TRACES / "openai-client-logfire"
PACKAGES = (
    "logfire",
    "logfire-sdk",
    "openai",
    "httpx2",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)

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


# ------------------------------------------------------------------ the tools (decorated)


@logfire.instrument(record_return=True)
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@logfire.instrument(record_return=True)
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@logfire.instrument(record_return=True)
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@logfire.instrument(record_return=True)
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@logfire.instrument(record_return=True)
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS: dict[str, Any] = {
    "lookup_track": lookup_track,
    "lookup_album": lookup_album,
    "lookup_artist": lookup_artist,
    "lookup_invoice": lookup_invoice,
    "refund": refund,
}


def run_tool(name: str, arguments: str) -> str:
    """The application's tool dispatch: the content of the ``tool`` message for one call."""
    try:
        return json.dumps(TOOLS[name](**json.loads(arguments)))
    except common.StoreError as exc:
        return f"Error: {exc}"


# ------------------------------------------------------------------ the agent loop


class SupportAgent:
    """The hand-written agent: the conversation so far and one ``run`` per user turn."""

    def __init__(self) -> None:
        self.client = openai.OpenAI(api_key="sk-offline", base_url=BASE_URL, max_retries=0)
        logfire.instrument_openai(self.client)
        self.messages: list[Any] = [{"role": "system", "content": common.SYSTEM_PROMPT}]

    def run(self, user_input: str) -> str | None:
        """One user turn under a Logfire span named after the agent."""
        with logfire.span(common.AGENT_NAME, user_input=user_input):
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
    """Logfire's documented baggage: ``session_id`` on every span started inside."""
    if session_id:
        with logfire.set_baggage(session_id=session_id):
            yield
    else:
        yield


# ------------------------------------------------------------------ capture

NOTES = (
    "hand-written Chat Completions agent loop (openai client over a scripted loopback "
    "server) traced by Pydantic Logfire 5.4.0: logfire.configure(send_to_logfire=False, "
    "console=False, additional_span_processors=[BatchSpanProcessor(recorder)]), "
    "logfire.instrument_openai(client) (version 2: gen_ai.input/output.messages), one "
    "logfire.span('music_store_support', user_input=...) per turn, "
    "@logfire.instrument(record_return=True) on each tool; multi_turn: "
    "logfire.set_baggage(session_id=...) around each turn. See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    PROCESSOR.force_flush()
    RECORDER.batches.clear()
    MODEL.requests.clear()
    agent = SupportAgent()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        with session(session_id):
            finals.append(agent.run(text))
        PROCESSOR.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    tool_messages_sent = [
        message["content"]
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
        session_id=session_id,
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        logfire.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
