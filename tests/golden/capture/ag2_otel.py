"""Capture AG2 (the AutoGen 0.2 fork) with its own OpenTelemetry instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-ag2
    /tmp/cap-ag2/bin/pip install "ag2[openai]==0.14.0" \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-ag2/bin/python tests/golden/capture/ag2_otel.py [scenario ...]

Captured with ag2 0.14.0 (the last release with the ``autogen`` package: ag2 1.x ships a
new ``ag2`` API without ``autogen.ConversableAgent``), openai 2.54.0, opentelemetry-sdk /
-api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2. Writes
``tests/golden/traces/ag2-otel/``. The script is ``ag2_otel.py`` (neither ``autogen.py``
nor ``ag2.py``, which would shadow the packages).

Real ``autogen.AssistantAgent`` named ``music_store_support`` (the system prompt as
``system_message``) proposing the tools, and a ``UserProxyAgent`` named ``customer``
(``human_input_mode="NEVER"``, no code execution) executing them: each tool is a plain
function registered with ``autogen.register_function(f, caller=assistant,
executor=customer)``. The model is AG2's ``OpenAIWrapper`` over the real ``openai.OpenAI``
client (``LLMConfig`` with ``api_type="openai"``, ``base_url`` at a loopback HTTP server in
this process that scripts the Chat Completions answers, ``cache_seed=None`` so AG2's disk
cache is off); nothing else is faked. One ``customer.initiate_chat(assistant,
message=text)`` per user turn; the customer ends the chat when the assistant answers in
text (``is_termination_msg``: an assistant message without tool calls). The calls of one
response run one after the other (the sync ``generate_tool_calls_reply`` loop). The refused
refund raises inside the tool; AG2's ``execute_function`` catches it and sends
``"Error: <exception>"`` to the model as the tool message. ``multi_turn``: the same two
agents, turns 2 and 3 with ``clear_history=False`` (AG2's documented way to continue a
chat); each ``initiate_chat`` gets a fresh random ``chat_id`` (``gen_ai.conversation.id``),
so no id common to the three turns reaches any span.

Instrumentation: ``autogen.opentelemetry`` (``instrument_agent`` on both agents,
``instrument_llm_wrapper(capture_messages=True)``), tracer
``opentelemetry.instrumentation.ag2``. AG2 has no telemetry of its own to turn off.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-ag2")
trace.set_tracer_provider(PROVIDER)

from autogen import (  # noqa: E402
    AssistantAgent,
    LLMConfig,
    UserProxyAgent,
    register_function,
)
from autogen.opentelemetry import instrument_agent, instrument_llm_wrapper  # noqa: E402

instrument_llm_wrapper(tracer_provider=PROVIDER, capture_messages=True)

FOLDER = common.TRACES / "ag2-otel"
PACKAGES = (
    "ag2",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


def lookup_track(track_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund)


def _is_final(message: dict[str, Any]) -> bool:
    """The assistant answered in text (no tool calls): the customer ends the chat."""
    return not message.get("tool_calls") and bool(message.get("content"))


def make_agents() -> tuple[AssistantAgent, UserProxyAgent]:
    llm_config = LLMConfig(
        {
            "api_type": "openai",
            "model": common.MODEL_NAME,
            "api_key": "sk-offline",
            "base_url": BASE_URL,
            "max_retries": 0,
        },
        cache_seed=None,
    )
    assistant = AssistantAgent(
        name=common.AGENT_NAME,
        system_message=common.SYSTEM_PROMPT,
        description="Customer support of the Tunes & Co music store.",
        llm_config=llm_config,
    )
    customer = UserProxyAgent(
        name="customer",
        human_input_mode="NEVER",
        code_execution_config=False,
        is_termination_msg=_is_final,
    )
    for tool in TOOLS:
        register_function(
            tool,
            caller=assistant,
            executor=customer,
            name=tool.__name__,
            description=common.TOOL_DESCRIPTIONS[tool.__name__],
        )
    instrument_agent(assistant, tracer_provider=PROVIDER)
    instrument_agent(customer, tracer_provider=PROVIDER)
    return assistant, customer


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    assistant, customer = make_agents()
    RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    conversation_ids: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        result = customer.initiate_chat(
            assistant, message=text, clear_history=(turn == 0), silent=True
        )
        conversation_ids.append(str(result.chat_id))
        last = result.chat_history[-1] if result.chat_history else {}
        if last.get("name") != common.AGENT_NAME or not _is_final(last):
            run_errors.append(f"turn {turn}: chat ended on {last!r}")
        content = last.get("content")
        finals.append(content if isinstance(content, str) else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    tool_messages_sent = [
        message.get("content")
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
        session_id=None,  # no id common to the turns reaches any span
        run_errors=run_errors,
        extra={
            "tool_messages_in_last_request": tool_messages_sent,
            "messages_in_last_request": len(
                (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
            ),
            "model_requests": len(MODEL.requests),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = "see NOTES.md"


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
