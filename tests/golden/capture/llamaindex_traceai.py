"""Capture the LlamaIndex FunctionAgent traced by Future AGI's traceAI (``traceAI-llamaindex``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-llamaindex-traceai
    /tmp/cap-llamaindex-traceai/bin/pip install traceAI-llamaindex "llama-index-core<0.13" \
        llama-index-llms-openai llama-index-llms-openai-like opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-llamaindex-traceai/bin/python \
        tests/golden/capture/llamaindex_traceai.py [scenario ...]'

Captured with traceAI-llamaindex 0.1.9, fi-instrumentation-otel 1.1.0, llama-index-core
0.12.52.post1, llama-index-workflows 1.3.0, llama-index-instrumentation 0.6.0,
llama-index-llms-openai 0.4.7, llama-index-llms-openai-like 0.4.0, openai 1.109.1,
opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto
1.45.2, opentelemetry-instrumentation 0.66b2, protobuf 7.36.2, Python 3.12.1, in a network
namespace with only loopback up. Writes ``tests/golden/traces/llamaindex-traceai/``.

Why llama-index-core 0.12, not the 0.14.25 of ``llamaindex-openinference``: traceAI-llamaindex
0.1.9 (the newest; it asks for ``llama-index-core>=0.10.43``) imports
``llama_index.core.base.agent.types`` when instrumenting, a module removed in 0.13.0, so with
0.13+ ``instrument()`` raises ``ModuleNotFoundError``. 0.12.52.post1 is the last 0.12 release
(pip then resolves llama-index-llms-openai 0.4.7 and openai 1.109.1).

The agent, tools, scripted model and memory are those of ``llamaindex_function_agent.py``
(``llamaindex-openinference``): a real ``FunctionAgent`` named
``music_store_support`` with the store's five ``FunctionTool.from_defaults`` tools and
llama-index's ``OpenAILike`` LLM (the ``OpenAI`` subclass for OpenAI-compatible servers, real
``openai`` client) pointed at the scripted Chat Completions loopback server
(``scripted_model.ChatCompletions``). ``FunctionAgent`` of llama-index-core 0.12 always
streams (``astream_chat_with_tools``; 0.12.52 has no ``streaming=False``), so the endpoint here
(``StreamingChatCompletions``, as ``genkit_agent.py``'s) answers ``stream: true`` with the
same scripted response as server-sent ``chat.completion.chunk`` events, one tool call a
chunk as OpenAI streams them. The refused refund raises; the agent turns it into a
``ToolOutput`` with ``is_error=True`` whose content (the exception text) goes to the model.
Multi-turn memory: one ``Context(agent)`` reused across the turns.

Instrumentation, as traceAI's README shows: ``fi_instrumentation.register(project_type=
ProjectType.OBSERVE, project_name=...)`` (traceAI's own ``TracerProvider``, its default
``BatchSpanProcessor`` and ``HTTPSpanExporter``, the default FI semantic convention) and
``LlamaIndexInstrumentor().instrument(tracer_provider=..., config=TraceConfig(...))`` with
every content switch on (``hide_inputs`` / ``hide_outputs`` / ``hide_input_messages`` /
``hide_output_messages`` / ``hide_input_text`` / ``hide_output_text`` False, the defaults).
No key: ``FI_API_KEY`` / ``FI_SECRET_KEY`` are unset (the exporter then sends no auth
header) and ``FI_BASE_URL`` points at the same loopback server, whose
``received_otlp.receiver`` route answers traceAI's fixed path ``/tracer/v1/traces``
(OTLP/HTTP protobuf, as sent). ``force_flush`` on the provider after every user turn; the
``.jsonl`` keeps its export requests as received. Session id:
``fi_instrumentation.using_session(session id)`` around each turn of ``multi_turn``
(traceAI's context attribute). Every ``OTEL_*`` / ``FI_*`` / ``OPENAI_*`` variable is
removed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "FI_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "llamaindex-traceai"
PROJECT = "music-store-support-llamaindex-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceAI-llamaindex",
    "fi-instrumentation-otel",
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
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


def sse_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """A scripted Chat Completions response as the ``chat.completion.chunk`` events of a
    stream, one tool call a chunk as OpenAI streams them (llama-index's stream parser reads
    one tool call per delta): the role and text, each tool call (index, id, name, whole
    arguments), the finish reason, then the usage."""
    choice = response["choices"][0]
    message = choice["message"]
    base = {
        "id": response["id"],
        "object": "chat.completion.chunk",
        "created": response["created"],
        "model": response["model"],
    }
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": message.get("content")}]
    deltas += [
        {"tool_calls": [{"index": k, **call}]}
        for k, call in enumerate(message.get("tool_calls") or [])
    ]
    return [
        *({**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas),
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**base, "choices": [], "usage": response["usage"]},
    ]


class StreamingChatCompletions(scripted_model.ChatCompletions):
    """``scripted_model.ChatCompletions`` that also answers ``stream: true`` requests (as
    server-sent events carrying the same scripted response); non-streaming as before."""

    def __call__(self, request: scripted_model.Request) -> scripted_model.Reply:
        body = request.json()
        if not body.get("stream"):
            return super().__call__(request)
        self.requests.append(body)
        events = "".join(
            f"data: {json.dumps(chunk)}\n\n" for chunk in sse_chunks(self.answer(body))
        )
        return scripted_model.Reply(
            (events + "data: [DONE]\n\n").encode(), content_type="text/event-stream"
        )


MODEL = StreamingChatCompletions()
SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: MODEL,
        TRACEAI_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from fi_instrumentation import TraceConfig, register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from traceai_llamaindex import LlamaIndexInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
LlamaIndexInstrumentor().instrument(
    tracer_provider=PROVIDER,
    config=TraceConfig(
        hide_inputs=False,
        hide_outputs=False,
        hide_input_messages=False,
        hide_output_messages=False,
        hide_input_text=False,
        hide_output_text=False,
    ),
)

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.tools import BaseTool, FunctionTool  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

_script = common.active_script


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


TOOLS: list[BaseTool | Callable[..., Any]] = [
    FunctionTool.from_defaults(
        fn, name=fn.__name__, description=common.TOOL_DESCRIPTIONS[fn.__name__]
    )
    for fn in (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund)
]

NOTES = (
    "LlamaIndex FunctionAgent (llama-index-core 0.12: traceAI-llamaindex 0.1.9 fails on 0.13+) "
    "with OpenAILike over the scripted Chat Completions server (streamed: answered as SSE "
    "chunks), traced by Future AGI's traceAI: "
    "fi_instrumentation.register(project_type=OBSERVE) (its own TracerProvider, "
    "BatchSpanProcessor and HTTPSpanExporter, FI semantic convention) and "
    "traceai_llamaindex.LlamaIndexInstrumentor, every TraceConfig content switch on; exported "
    "over OTLP/HTTP protobuf to a loopback receiver at FI_BASE_URL + /tracer/v1/traces, no "
    "key; force_flush after every turn. refund raises -> ToolOutput(is_error=True). "
    "multi_turn: one Context reused and fi_instrumentation.using_session(session id) around "
    "each turn; see NOTES.md"
)


def make_agent() -> FunctionAgent:
    llm = OpenAILike(
        model=common.MODEL_NAME,
        api_base=f"{SERVER.url}/v1",
        api_key="sk-offline",
        max_retries=0,
        is_chat_model=True,
        is_function_calling_model=True,
        context_window=32000,
        timeout=30,
    )
    return FunctionAgent(
        name=common.AGENT_NAME,
        description="Customer support of Tunes & Co",
        tools=TOOLS,
        llm=llm,
        system_prompt=common.SYSTEM_PROMPT,
    )


async def run_turns(
    agent: FunctionAgent,
    scenario: common.Scenario,
    script: common.Script,
    finals: list[str | None],
    turn_traces: list[str],
) -> None:
    ctx = Context(agent)
    session_id = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        scope = using_session(session_id) if session_id else contextlib.nullcontext()
        with scope:
            result = await agent.run(user_msg=text, ctx=ctx)
        finals.append(result.response.content or None)
        assert PROVIDER.force_flush(), "traceAI's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    assert PROVIDER.force_flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    asyncio.run(run_turns(agent, scenario, script, finals, turn_traces))
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
