"""Capture a hand-written Anthropic-client tool loop traced by Logfire's ``instrument_anthropic``.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-anthropic-client-logfire
    /tmp/cap-anthropic-client-logfire/bin/pip install logfire anthropic opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-anthropic-client-logfire/bin/python \
        tests/golden/capture/anthropic_client_logfire.py [scenario ...]'

Captured with logfire 5.4.0 (logfire-sdk 5.4.0), anthropic 2.14.0 (its HTTP client httpx2
2.16.2), opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2,
opentelemetry-instrumentation / -semantic-conventions 0.66b2, protobuf 7.36.2, Python 3.12.1,
in a network namespace with only loopback up. Writes
``tests/golden/traces/anthropic-client-logfire/``.

No agent framework: the loop of ``anthropic_client_openinference.py``. The user's own
plain-Python while-loop calls ``client.messages.create`` (non-streaming, the real
``anthropic.Anthropic`` client against a loopback HTTP server in this process that scripts
the answers, ``scripted_model.AnthropicMessages``) with the five tools (``name`` /
``description`` / ``input_schema``) and the system prompt in ``system=``, appends the
assistant's ``response.content``, runs each ``tool_use`` block in order (sequentially, also
the two calls of ``parallel_calls``) and appends ONE user message holding a ``tool_result``
block per call (Anthropic's tool-use guide), until ``stop_reason`` is not ``tool_use``. The
refused refund raises in the tool (through its ``@logfire.instrument`` wrapper); the loop
catches it and sends ``{"type": "tool_result", "is_error": true, "content":
"RefundWindowExpired: ..."}``. Multi-turn memory is the message list kept across turns.

Instrumentation, as Logfire's docs show (Anthropic integration, manual tracing, baggage),
set up as ``openai_client_logfire.py`` does:

* ``logfire.configure(send_to_logfire=False, console=False, service_name=...,
  environment=..., additional_span_processors=[BatchSpanProcessor(recorder)])``: Logfire
  builds and installs its own (global) ``TracerProvider``; the recorder is one more
  processor on it, defaults otherwise (scrubbing on, baggage copied to attributes).
* ``logfire.instrument_anthropic(client)`` on the loop's client, its defaults. Logfire has
  no content switch: prompts and completions are always recorded (subject to scrubbing).
* anthropic 2.x's own OpenTelemetry spans (its ``open_telemetry`` client option, on by
  default with the global tracer provider) are left at the SDK's default, as a user gets
  them: whatever it records under Logfire's provider is in the capture.
* each user turn runs in ``with logfire.span("music_store_support", user_input=...)``;
* each tool function is decorated ``@logfire.instrument(record_return=True)``;
* ``multi_turn``: ``with logfire.set_baggage(session_id=...)`` around each turn.

Export: common's in-memory ``BatchRecorder`` behind a ``BatchSpanProcessor`` on Logfire's
provider, flushed after every user turn. No token, nothing sent anywhere: every ``OTEL_*``,
``LOGFIRE_*`` and ``ANTHROPIC_*`` variable is removed first.
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
for _name in [n for n in os.environ if n.startswith(("OTEL_", "LOGFIRE_", "ANTHROPIC_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind

import anthropic  # noqa: E402
import common  # noqa: E402
import logfire  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

RECORDER = common.BatchRecorder()
PROCESSOR = BatchSpanProcessor(
    RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
)
logfire.configure(
    send_to_logfire=False,
    console=False,
    service_name="music-store-support-anthropic-client",
    environment="acceptance-test",
    additional_span_processors=[PROCESSOR],
)

FOLDER = common.TRACES / "anthropic-client-logfire"
PACKAGES = (
    "logfire",
    "logfire-sdk",
    "anthropic",
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

MODEL = scripted_model.AnthropicMessages()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = SERVER.url

TOOL_SCHEMAS: list[Any] = [  # Anthropic tool params
    {
        "name": name,
        "description": common.TOOL_DESCRIPTIONS[name],
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": list(properties),
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


def run_tool(block: Any) -> dict[str, Any]:
    """The application's tool dispatch: the ``tool_result`` block for one ``tool_use`` block."""
    try:
        result = TOOLS[block.name](**dict(block.input))
    except common.StoreError as exc:
        return {
            "type": "tool_result",
            "tool_use_id": block.id,
            "content": str(exc),
            "is_error": True,
        }
    return {"type": "tool_result", "tool_use_id": block.id, "content": json.dumps(result)}


# ------------------------------------------------------------------ the agent loop


class SupportAgent:
    """The hand-written agent: the conversation so far and one ``run`` per user turn."""

    def __init__(self) -> None:
        self.client = anthropic.Anthropic(
            api_key="sk-ant-offline", base_url=BASE_URL, max_retries=0
        )
        logfire.instrument_anthropic(self.client)
        self.messages: list[Any] = []  # Anthropic message params

    def run(self, user_input: str) -> str | None:
        """One user turn under a Logfire span named after the agent."""
        with logfire.span(common.AGENT_NAME, user_input=user_input):
            self.messages.append({"role": "user", "content": user_input})
            while True:
                response = self.client.messages.create(
                    model=common.MODEL_NAME,
                    max_tokens=1024,
                    system=common.SYSTEM_PROMPT,
                    messages=self.messages,
                    tools=TOOL_SCHEMAS,
                )
                self.messages.append({"role": "assistant", "content": response.content})
                if response.stop_reason != "tool_use":
                    return "".join(b.text for b in response.content if b.type == "text") or None
                results = [run_tool(b) for b in response.content if b.type == "tool_use"]
                self.messages.append({"role": "user", "content": results})


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
    "hand-written Messages-API agent loop (anthropic client over a scripted loopback "
    "server) traced by Pydantic Logfire 5.4.0: logfire.configure(send_to_logfire=False, "
    "console=False, additional_span_processors=[BatchSpanProcessor(recorder)]), "
    "logfire.instrument_anthropic(client), one logfire.span('music_store_support', "
    "user_input=...) per turn, @logfire.instrument(record_return=True) on each tool; the "
    "refused refund goes back as a tool_result with is_error: true; multi_turn: "
    "logfire.set_baggage(session_id=...) around each turn. See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "toolu")
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
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session_id,
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
