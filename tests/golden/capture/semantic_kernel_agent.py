"""Capture Microsoft Semantic Kernel (Python)'s built-in OpenTelemetry instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-sk
    /tmp/cap-sk/bin/pip install semantic-kernel opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-sk/bin/python tests/golden/capture/semantic_kernel_agent.py [scenario ...]

Captured with semantic-kernel 1.45.0, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2 (Python 3.12.1). Writes
``tests/golden/traces/semantic-kernel/``.

Real ``semantic_kernel.agents.ChatCompletionAgent`` named ``music_store_support`` with one
plugin (``MusicStore``, a class of ``@kernel_function`` methods), its default
``FunctionChoiceBehavior.Auto()`` (automatic function calling), and an
``OpenAIChatCompletion`` service whose real ``openai.AsyncOpenAI`` client points at a loopback
HTTP server in this process that scripts the model's Chat Completions answers; nothing else is
faked. SK declares the tools to the model under their fully qualified names
(``MusicStore-lookup_track``: plugin, ``-``, function), so the scripted model calls them by
those names (the only change to ``scripted_model.chat_completion``'s answer). One
``agent.get_response(messages=..., thread=...)`` per user turn; ``multi_turn`` keeps the
conversation in one ``ChatHistoryAgentThread`` (in-memory history; its ``thread_id`` set to
the scenario's session id, which reaches no span or log record).

Instrumentation: SK's own (``trace_agent_get_response``, ``trace_chat_completion``,
``KernelFunction.invoke``), switched on by the documented environment variables
``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS`` and ``..._SENSITIVE`` (read
when SK is imported), with the global tracer provider set. SK writes the model's message
events (``gen_ai.system.message`` … ``gen_ai.choice``) through Python ``logging``, not the
OTel events API; as SK's telemetry docs show, an OTel ``LoggingHandler`` on the root logger
(level INFO, ``logging.Filter("semantic_kernel")``) turns them, and SK's other INFO logs, into
OTLP log records, written as ``<scenario>.logs.jsonl`` / ``.logs.pb``. A raising tool is
reported to the model as ``"An error occurred while invoking the function
MusicStore-refund: <message>"`` (SK's auto-invocation handler).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere
# SK's documented switches (read by ModelDiagnosticSettings when SK is imported).
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402
from opentelemetry.sdk._logs import LoggingHandler  # noqa: E402

SERVICE = "music-store-support-semantic-kernel"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)


def attach_log_handler() -> None:
    """SK's documented logging setup: an OTel handler on the root logger, SK's loggers only.

    The root logger holds the only reference, so that ``detach_log_handler`` lets it go
    (logging's atexit flush would otherwise start a thread at interpreter shutdown).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the SDK's handler, as SK's docs use
        handler = LoggingHandler(logger_provider=LOG_PROVIDER)
    handler.addFilter(logging.Filter("semantic_kernel"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)


def detach_log_handler() -> None:
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, LoggingHandler)]:
        root.removeHandler(handler)


attach_log_handler()

from openai import AsyncOpenAI  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.functions import kernel_function  # noqa: E402

FOLDER = common.TRACES / "semantic-kernel"
PLUGIN = "MusicStore"
PACKAGES = (
    "semantic-kernel",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)

_script = common.active_script


def sk_chat_completion(body: scripted_model.Body) -> scripted_model.Body:
    """``scripted_model.chat_completion`` calling the tools by the names SK declared."""
    declared = {tool["function"]["name"] for tool in body.get("tools") or []}
    reply = scripted_model.chat_completion(body)
    for call in reply["choices"][0]["message"].get("tool_calls") or []:
        qualified = f"{PLUGIN}-{call['function']['name']}"
        assert qualified in declared, (qualified, declared)
        call["function"]["name"] = qualified
    return reply


MODEL = scripted_model.ChatCompletions(sk_chat_completion)
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


class MusicStore:
    """The store's tools (SK plugin ``MusicStore``)."""

    @kernel_function(description=common.TOOL_DESCRIPTIONS["lookup_track"])
    def lookup_track(self, track_name: Annotated[str, "The exact track name."]) -> dict[str, Any]:
        return dict(_script().call("lookup_track", track_name=track_name))

    @kernel_function(description=common.TOOL_DESCRIPTIONS["lookup_album"])
    def lookup_album(self, album_title: Annotated[str, "The album title."]) -> dict[str, Any]:
        return dict(_script().call("lookup_album", album_title=album_title))

    @kernel_function(description=common.TOOL_DESCRIPTIONS["lookup_artist"])
    def lookup_artist(self, artist_name: Annotated[str, "The artist's name."]) -> dict[str, Any]:
        return dict(_script().call("lookup_artist", artist_name=artist_name))

    @kernel_function(description=common.TOOL_DESCRIPTIONS["lookup_invoice"])
    def lookup_invoice(
        self,
        customer_id: Annotated[int, "The customer's id."],
        invoice_id: Annotated[int, "The invoice id."],
    ) -> dict[str, Any]:
        return dict(
            _script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id)
        )

    @kernel_function(description=common.TOOL_DESCRIPTIONS["refund"])
    def refund(
        self,
        invoice_id: Annotated[int, "The invoice id."],
        track_id: Annotated[int, "The track to refund."],
        reason: Annotated[str, "Why the customer wants the refund."],
    ) -> dict[str, Any]:
        return dict(
            _script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)
        )


def make_agent() -> ChatCompletionAgent:
    client = AsyncOpenAI(api_key="sk-offline", base_url=BASE_URL)
    service = OpenAIChatCompletion(ai_model_id=common.MODEL_NAME, async_client=client)
    return ChatCompletionAgent(
        service=service,
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        instructions=common.SYSTEM_PROMPT,
        plugins=[MusicStore()],
    )


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    thread: ChatHistoryAgentThread | None = (
        ChatHistoryAgentThread(thread_id=scenario.session_id) if scenario.session_id else None
    )
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        response = await agent.get_response(messages=text, thread=thread)
        if scenario.session_id:
            thread = response.thread  # type: ignore[assignment]
        finals.append(response.message.content or None)
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
        session_id=None,  # the thread id reaches no span or log record
        extra={
            "tool_names_declared_to_model": sorted(
                tool["function"]["name"] for tool in MODEL.requests[0].get("tools") or []
            )
            if MODEL.requests
            else [],
            "tool_messages_in_last_request": tool_messages_sent,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


NOTES = (
    "Semantic Kernel ChatCompletionAgent (plugin MusicStore of @kernel_function tools, "
    "FunctionChoiceBehavior.Auto) + OpenAIChatCompletion over a scripted loopback Chat "
    "Completions server; SK's own instrumentation with "
    "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS(_SENSITIVE)=true, and SK's "
    "Python-logging message events turned into OTLP log records by the SDK LoggingHandler "
    "(filter 'semantic_kernel'), as SK's docs show. See NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    detach_log_handler()
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
