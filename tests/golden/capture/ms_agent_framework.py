"""Capture Microsoft Agent Framework's built-in OpenTelemetry instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-maf
    /tmp/cap-maf/bin/pip install agent-framework-core agent-framework-openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-maf/bin/python tests/golden/capture/ms_agent_framework.py [scenario ...]

Captured with agent-framework-core 1.23.0, agent-framework-openai 1.17.0, openai 3.54.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2.
(The umbrella package ``agent-framework`` pulls every connector; only core + openai are
needed.) Writes ``tests/golden/traces/ms-agent-framework/``.

Real ``agent_framework.Agent`` (the former ``ChatAgent``) with ``@tool`` functions and an
``OpenAIChatCompletionClient`` (Chat Completions API, real ``openai.AsyncOpenAI`` client)
pointed at a loopback HTTP server in this process that scripts the model's answers; nothing
else is faked. One ``agent.run`` per user turn; ``multi_turn`` keeps the conversation in one
``AgentSession`` (``agent.create_session(session_id=...)``, in-memory history).

Instrumentation: the framework's own (``AgentTelemetryLayer`` / ``ChatTelemetryLayer`` /
function-invocation spans), turned on the documented way for an application that brings its
own providers: set the global tracer and logger providers, then
``enable_sensitive_telemetry()`` (content: messages, function arguments/results). Defaults
otherwise: the framework's default semconv (``gen_ai_latest_experimental`` when
``OTEL_SEMCONV_STABILITY_OPT_IN`` is unset) and ``ENABLE_MESSAGE_EVENTS`` (default true), so
it also emits GenAI message events as OTLP log records, written as
``<scenario>.logs.jsonl`` / ``.logs.pb``. Default function-invocation configuration: a raising
tool is reported to the model as ``"Error: Function failed."`` (``include_detailed_errors``
False).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-ms-agent-framework"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

from agent_framework import Agent, tool  # noqa: E402
from agent_framework.observability import enable_sensitive_telemetry  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402

enable_sensitive_telemetry()

FOLDER = common.TRACES / "ms-agent-framework"
PACKAGES = (
    "agent-framework-core",
    "agent-framework-openai",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


@tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_agent() -> Agent:
    client = OpenAIChatCompletionClient(
        model=common.MODEL_NAME, api_key="sk-offline", base_url=BASE_URL
    )
    return Agent(
        client=client,
        instructions=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    session = agent.create_session(session_id=scenario.session_id) if scenario.session_id else None
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        response = await agent.run(text, session=session)
        finals.append(response.text or None)
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
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
        session_id=None,  # the AgentSession id reaches no span or log record
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


NOTES = (
    "Microsoft Agent Framework Agent + OpenAIChatCompletionClient over a scripted loopback "
    "Chat Completions server; built-in instrumentation (scope agent_framework) with "
    "enable_sensitive_telemetry(), default semconv (latest experimental) and message events. "
    "Spans: invoke_agent <name> (root, INTERNAL; gen_ai.input.messages = this turn's user "
    "message only, gen_ai.output.messages = every message the turn produced: tool calls, tool "
    "responses, final text; usage summed) with children chat <model> (INTERNAL, one per model "
    "request, full history in input messages, tool calls in output messages) and "
    "execute_tool <tool> (siblings of the chat spans, gen_ai.tool.call.id/arguments/result). "
    "Log records (scope agent_framework, one set per chat span, re-sending the whole history): "
    "gen_ai.system.message / user.message / assistant.message / tool.message / choice, bodies "
    "as maps. The refused refund raises: execute_tool status ERROR (description: the "
    "exception repr), error.type 'StoreError', an 'exception' span event with the message, no "
    "result; the model gets 'Error: Function failed.' (include_detailed_errors False), which is "
    "what the invoke_agent output messages and the gen_ai.tool.message log record show. "
    "multi_turn: one AgentSession(session_id=...) with in-memory history; the session id "
    "reaches no span or log record (labelled null), the three invoke_agent spans share only "
    "gen_ai.agent.id (the Agent instance's uuid; one-shot scenarios use a new Agent each)."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
