"""Capture a Semantic Kernel (Python) HandoffOrchestration through SK's own OpenTelemetry.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-sk-handoff
    /tmp/cap-sk-handoff/bin/pip install semantic-kernel opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-sk-handoff/bin/python tests/golden/capture/semantic_kernel_handoff.py [scenario ...]

Captured with semantic-kernel 1.45.0, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2 (Python 3.12.1). Writes
``tests/golden/traces/semantic-kernel-handoff/``.

Real ``semantic_kernel.agents.HandoffOrchestration`` over an ``InProcessRuntime`` with two real
``ChatCompletionAgent``s sharing one ``OpenAIChatCompletion`` service (a real
``openai.AsyncOpenAI`` client pointed at a loopback server in this process): ``triage`` (first
member, no plugin; handoff ``triage -> music_store_support``) and ``music_store_support`` (the
``MusicStore`` plugin of ``@kernel_function`` tools). SK adds its ``Handoff`` plugin to each
agent's kernel (``Handoff-transfer_to_<agent>`` per connection, ``Handoff-complete_task``) and a
filter that ends the agent's function-calling loop after a ``Handoff`` function. The handoff
actors call ``agent.invoke_stream``, so the scripted model answers as a Chat Completions
*stream* (SSE), written here (``scripted_model`` only scripts non-streaming answers).

Routing (this script, per turn): a request whose system message is the triage prompt is
answered with ``Handoff-transfer_to_music_store_support`` (once per turn); the store agent's
requests follow the scenario's script, its tools called as ``MusicStore-<tool>``; its final
text ends the turn (no human-response function: SK's actor then completes the task itself,
the orchestration's result being ``"Task is completed with summary: No handoff agent name
provided ..."``; the answer recorded as the final response is the store agent's final message,
from the orchestration's ``agent_response_callback``). ``llm_calls_per_turn`` counts every
model request, the triage agent's included. ``multi_turn``: each turn is one
``orchestration.invoke`` whose task is the conversation so far (earlier user messages and the
store agent's answers) plus the new user message; SK documents no session id for agents or
orchestrations, so none reaches the telemetry (``session_id`` null in the labels).

Instrumentation: SK's own, switched on by ``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_
DIAGNOSTICS`` and ``..._SENSITIVE``; the message events go through Python ``logging`` and an
OTel ``LoggingHandler`` (filter ``semantic_kernel``), written as ``<scenario>.logs.jsonl``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402
from opentelemetry.sdk._logs import LoggingHandler  # noqa: E402

SERVICE = "music-store-support-semantic-kernel-handoff"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)


def attach_log_handler() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
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
from semantic_kernel.agents import (  # noqa: E402
    ChatCompletionAgent,
    HandoffOrchestration,
    OrchestrationHandoffs,
)
from semantic_kernel.agents.runtime import InProcessRuntime  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.contents import AuthorRole, ChatMessageContent  # noqa: E402
from semantic_kernel.functions import kernel_function  # noqa: E402

FOLDER = common.TRACES / "semantic-kernel-handoff"
PLUGIN = "MusicStore"
TRIAGE_NAME = "triage"
TRIAGE_PROMPT = (
    "You are the triage agent of Tunes & Co, a digital music store. Hand every question about "
    "tracks, albums, artists, invoices or refunds over to the store agent."
)
HANDOFF_TOOL = f"Handoff-transfer_to_{common.AGENT_NAME}"
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


class Router:
    """Per-turn routing of the scripted model (tell the agents apart by the system prompt)."""

    def __init__(self) -> None:
        self.turn = -1
        self.triage_calls = 0
        self.store_calls = 0
        self.log: list[tuple[int, str, list[str]]] = []  # (turn, agent, declared tools)

    def start_turn(self, turn: int) -> None:
        self.turn, self.triage_calls, self.store_calls = turn, 0, 0

    def answer(
        self, body: dict[str, Any]
    ) -> tuple[str, list[tuple[str, str, dict[str, Any]]], str | None]:
        """``(response id, tool calls as (id, name, args), final text or None)``."""
        messages = body.get("messages") or []
        system = next(
            (m.get("content") for m in messages if m.get("role") in ("system", "developer")), None
        )
        tools = sorted(t["function"]["name"] for t in body.get("tools") or [])
        script = _script()
        if system == TRIAGE_PROMPT:
            if HANDOFF_TOOL not in tools:
                raise RuntimeError(f"triage request with tools {tools}")
            if self.triage_calls or self.store_calls:
                raise RuntimeError("the triage agent was asked twice in one turn")
            self.triage_calls += 1
            script.llm_calls[script.turn] += 1
            self.log.append((self.turn, TRIAGE_NAME, tools))
            call_id = f"call_{script.scenario.name[:6]}_{self.turn}h"
            return (
                f"chatcmpl_{script.scenario.name}_{self.turn}h",
                [(call_id, HANDOFF_TOOL, {})],
                None,
            )
        if system != common.SYSTEM_PROMPT:
            raise RuntimeError(f"request of an unknown agent: {system!r}")
        if not self.triage_calls:
            raise RuntimeError("the store agent was asked before the handoff")
        self.store_calls += 1
        self.log.append((self.turn, common.AGENT_NAME, tools))
        calls, final = script.next_response()
        qualified = []
        for call_id, name, args in calls:
            full = f"{PLUGIN}-{name}"
            assert full in tools, (full, tools)
            qualified.append((call_id, full, args))
        return f"chatcmpl_{script.scenario.name}_{self.turn}{script.step}", qualified, final


ROUTER = Router()


class StreamingChatCompletions(scripted_model.ModelEndpoint):
    """Chat Completions answered as an SSE stream (SK's handoff actors stream)."""

    PATH = r".*/chat/completions"
    CONTENT_TYPE = "text/event-stream"

    def __init__(self) -> None:
        super().__init__(lambda body: body)

    def __call__(self, request: scripted_model.Request) -> scripted_model.Reply:
        body = request.json()
        if not body.get("stream"):
            raise scripted_model.NotScripted(400, "only streams are scripted here")
        self.requests.append(body)
        response_id, calls, final = ROUTER.answer(body)
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
            return {
                "id": response_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": common.MODEL_NAME,
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
                ],
            }

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""}, None)]
        if calls:
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": k,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                            for k, (call_id, name, args) in enumerate(calls)
                        ]
                    },
                    None,
                )
            )
            events.append(chunk({}, "tool_calls"))
        else:
            events.append(chunk({"content": final}, None))
            events.append(chunk({}, "stop"))
        prompt_tokens = 50 + 10 * len(body.get("messages") or [])
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 12,
            "total_tokens": prompt_tokens + 12,
        }
        events.append({**chunk({}, None), "choices": [], "usage": usage})
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        return scripted_model.Reply(text.encode(), self.CONTENT_TYPE)


MODEL = StreamingChatCompletions()
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


def make_agents() -> tuple[ChatCompletionAgent, ChatCompletionAgent]:
    client = AsyncOpenAI(api_key="sk-offline", base_url=BASE_URL)
    service = OpenAIChatCompletion(ai_model_id=common.MODEL_NAME, async_client=client)
    triage = ChatCompletionAgent(
        service=service,
        name=TRIAGE_NAME,
        description="Triage agent of the Tunes & Co music store.",
        instructions=TRIAGE_PROMPT,
    )
    store = ChatCompletionAgent(
        service=service,
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        instructions=common.SYSTEM_PROMPT,
        plugins=[MusicStore()],
    )
    return triage, store


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    triage, store = make_agents()
    responses: list[ChatMessageContent] = []

    def on_response(message: ChatMessageContent) -> None:
        responses.append(message)

    orchestration = HandoffOrchestration(
        members=[triage, store],
        handoffs=OrchestrationHandoffs().add(
            triage, store, "Transfer to the store agent for catalogue, invoice and refund requests."
        ),
        agent_response_callback=on_response,
    )
    runtime = InProcessRuntime()
    runtime.start()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    results: list[str] = []
    turn_traces: list[str] = []
    history: list[ChatMessageContent] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        ROUTER.start_turn(turn)
        before = len(RECORDER.spans)
        responses.clear()
        history.append(ChatMessageContent(role=AuthorRole.USER, content=text))
        task: Any = list(history) if len(history) > 1 else history[0]
        result = await orchestration.invoke(task=task, runtime=runtime)
        value = await result.get(timeout=60)
        await runtime.stop_when_idle()
        runtime.start()
        results.append(str(getattr(value, "content", value)))
        answers = [m for m in responses if m.name == common.AGENT_NAME and m.content]
        final = answers[-1].content if answers else None
        finals.append(final or None)
        history.append(
            ChatMessageContent(
                role=AuthorRole.ASSISTANT, name=common.AGENT_NAME, content=final or ""
            )
        )
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    await runtime.stop_when_idle()
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=None,  # SK documents no session id for agents/orchestrations
        extra={
            "model_requests": [
                {"turn": t, "agent": agent, "tools_declared": tools}
                for t, agent, tools in ROUTER.log
            ],
            "orchestration_results": results,
        },
    )
    ROUTER.log.clear()
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


NOTES = (
    "Semantic Kernel HandoffOrchestration (InProcessRuntime): ChatCompletionAgent 'triage' "
    "hands off via SK's Handoff plugin (Handoff-transfer_to_music_store_support) to "
    "ChatCompletionAgent 'music_store_support' (plugin MusicStore); OpenAIChatCompletion "
    "streaming from a scripted loopback Chat Completions server; SK's own instrumentation "
    "(..._OTEL_DIAGNOSTICS(_SENSITIVE)=true), its logging events as OTLP log records. "
    "See NOTES.md."
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
