"""Capture OpenLIT on a LlamaIndex ``FunctionAgent`` (``llamaindex_function_agent.py``'s agent).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-llamaindex-openlit
    /tmp/cap-llamaindex-openlit/bin/pip install llama-index-core llama-index-llms-openai \
        llama-index-llms-openai-like openlit opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-llamaindex-openlit/bin/python \
        tests/golden/capture/llamaindex_openlit.py [scenario ...]'

Captured with openlit 1.45.0, llama-index 0.14.25 (the meta-package: OpenLIT's llama_index
instrumentor requires the ``llama-index`` distribution, it is skipped without it),
llama-index-core 0.14.25, llama-index-workflows 2.26.1, llama-index-instrumentation 0.6.0,
llama-index-llms-openai 0.7.10 and llama-index-llms-openai-like 0.8.0 (the versions
``llama-index`` 0.14.25 allows), openai 2.54.0, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-common 1.45.1, opentelemetry-instrumentation(-httpx) 0.66b1, protobuf
7.36.2 (Python 3.12.1). Writes ``tests/golden/traces/llamaindex-openlit/``.

The same agent as ``llamaindex_function_agent.py`` (the OpenInference capture); only the
instrumentation differs. The model is llama-index's ``OpenAILike`` (the plain ``OpenAI`` class
refuses the unknown model name) with the real ``openai`` client, pointed at the scripted Chat
Completions loopback server; ``FunctionAgent(streaming=False)``. Tools are
``FunctionTool.from_defaults`` of typed functions; the refused refund raises and the agent
turns it into a ToolOutput with ``is_error=True`` (the model is sent ``str(exception)``).
Multi-turn memory: one ``Context(agent)`` and one ``ChatMemoryBuffer`` passed to every
``run`` (LlamaIndex 0.14 drops the memory it keeps in the context between runs).

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds) except
``disable_metrics=True``, ``collect_gpu_stats=False``, ``capture_message_content=True``, no
``otlp_endpoint``, and ``pricing_json`` = an empty local file (otherwise it downloads its price
list from GitHub). OpenLIT reuses the SDK ``TracerProvider`` / ``LoggerProvider`` set globally
first (the script asserts they are still the global ones). Its GenAI events go to our logger
provider and are written as ``<scenario>.logs.jsonl`` / ``.logs.pb``. ``OTEL_EXPORTER_OTLP_*``
and ``OPENLIT_*`` variables are removed first: nothing is sent anywhere.
OpenLIT records nothing of the agent or its tools here (its llama_index instrumentor wraps
``LLM.chat``/``achat`` of the base class, which ``OpenAI`` overrides, and no agent or tool
method): only its ``openai`` instrumentor's ``chat`` spans (+ httpx ``POST``), each a trace
of its own. Each turn is therefore wrapped in OpenLIT's documented ``openlit.start_trace(
"support_turn")`` (one CLIENT span, no attributes), as the client-level captures wrap theirs
in an application span. No session id: OpenLIT has no session mechanism for LlamaIndex or
Chat Completions (``gen_ai.conversation.id`` only from its LangGraph / ADK / Agents SDK
instrumentors), so ``multi_turn`` is three unrelated traces (labels: ``session_id: null``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENLIT_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-llamaindex-openlit"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

import openlit  # noqa: E402

_PRICING = Path(tempfile.mkdtemp(prefix="openlit-pricing-")) / "pricing.json"
_PRICING.write_text("{}", encoding="utf-8")
openlit.init(
    service_name=SERVICE,
    environment="acceptance-test",
    capture_message_content=True,
    disable_metrics=True,
    collect_gpu_stats=False,
    pricing_json=str(_PRICING),
)
assert trace.get_tracer_provider() is PROVIDER, "OpenLIT replaced the tracer provider"
assert _logs.get_logger_provider() is LOG_PROVIDER, "OpenLIT replaced the logger provider"

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.memory import ChatMemoryBuffer  # noqa: E402
from llama_index.core.tools import BaseTool, FunctionTool  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

FOLDER = common.TRACES / "llamaindex-openlit"
PACKAGES = (
    "openlit",
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-instrumentation-httpx",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


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


def make_agent() -> FunctionAgent:
    llm = OpenAILike(
        model=common.MODEL_NAME,
        api_base=BASE_URL,
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
        streaming=False,
    )


async def run_turns(
    agent: FunctionAgent,
    scenario: common.Scenario,
    script: common.Script,
    finals: list[str | None],
    turn_traces: list[str],
) -> None:
    ctx = Context(agent)
    # the chat history across turns: LlamaIndex 0.14 drops the memory it keeps in ``ctx``
    # when it serializes the context after a run (UnserializableKeyWarning: memory), so a
    # reused Context alone starts every turn afresh; a memory passed to ``run`` is kept
    memory = ChatMemoryBuffer.from_defaults(token_limit=30000)
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        result: Any = await run_one(agent, text, ctx, memory)
        finals.append(result.response.content or None)
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))


async def run_one(agent: FunctionAgent, text: str, ctx: Context, memory: ChatMemoryBuffer) -> Any:
    # OpenLIT's documented grouping of calls into one trace (a CLIENT span, no attributes):
    # without it every model request is a one-span trace of its own (nothing records the agent)
    with openlit.start_trace("support_turn"):
        return await agent.run(user_msg=text, ctx=ctx, memory=memory)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    agent = make_agent()
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    asyncio.run(run_turns(agent, scenario, script, finals, turn_traces))
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
        session_id=scenario.session_id if SESSION_RECORDED else None,
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


SESSION_RECORDED = False
NOTES = (
    "LlamaIndex FunctionAgent (streaming=False) + OpenAILike over the scripted Chat Completions "
    "server, traced by OpenLIT (openlit.init reusing the global SDK providers). OpenLIT records "
    "no agent or tool span for a FunctionAgent: per turn one trace under openlit.start_trace("
    "'support_turn') with one 'chat <model>' span per model request (openai instrumentor; + "
    "httpx POST child) and one log record each. Input history drops the assistant messages "
    "that hold only tool calls (tool answers kept, with ids); tool results are Python reprs; "
    "the refused refund is only its str(exception) in the next request's tool message. No "
    "session id recorded; multi_turn keeps history via one ChatMemoryBuffer"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
