"""Capture LlamaIndex FunctionAgent + Traceloop OpenLLMetry's llamaindex instrumentation.

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-llamaindex-tl
    /tmp/cap-llamaindex-tl/bin/pip install llama-index-core llama-index-llms-openai \
        llama-index-llms-openai-like opentelemetry-instrumentation-llamaindex \
        opentelemetry-instrumentation-openai opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-llamaindex-tl/bin/python tests/golden/capture/llamaindex_traceloop.py [scenario ...]

Versions captured: llama-index-core 0.14.25, llama-index-workflows 2.26.1,
llama-index-instrumentation 0.6.0, llama-index-llms-openai 0.8.3,
llama-index-llms-openai-like 0.8.1, openai 2.54.0, opentelemetry-instrumentation-llamaindex
0.62.4, opentelemetry-instrumentation-openai 0.62.4, opentelemetry-semantic-conventions-ai
0.5.1, opentelemetry-sdk 1.45.2 (Python 3.12.1).

The same agent as ``llamaindex_function_agent.py`` (the OpenInference capture); only the
instrumentation differs. The instrumentors are used directly with the capture's
TracerProvider (no traceloop-sdk: nothing phones home, ``TRACELOOP_TELEMETRY=false`` anyway,
``OTEL_EXPORTER_OTLP*`` removed). ``TRACELOOP_TRACE_CONTENT=true`` (the default) records
content. OpenLLMetry's llamaindex instrumentor hands LLM spans of the class ``OpenAI`` to
opentelemetry-instrumentation-openai; for any other LLM class (here ``OpenAILike``) it records
the model call itself (``OpenAILike.task``, ``gen_ai.*`` attributes) and suppresses the openai
instrumentation below it; both instrumentors are installed, as traceloop-sdk does.

The model is llama-index's ``OpenAILike`` (the plain ``OpenAI`` class refuses the unknown
model name) with the real ``openai`` client, pointed at the scripted Chat Completions
loopback server; ``FunctionAgent(streaming=False)``. The refused refund raises; the agent
turns it into a ToolOutput with ``is_error=True``. Multi-turn memory: one ``Context(agent)``
reused across the turns. No session id: the only documented Traceloop mechanism
(association properties) belongs to traceloop-sdk, not to the instrumentors.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["TRACELOOP_TELEMETRY"] = "false"
os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
for _key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_key]

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-llamaindex")
trace.set_tracer_provider(PROVIDER)

from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor  # noqa: E402
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

OpenAIInstrumentor().instrument(tracer_provider=PROVIDER)
LlamaIndexInstrumentor().instrument(tracer_provider=PROVIDER)  # type: ignore[no-untyped-call]

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.tools import BaseTool, FunctionTool  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

FOLDER = common.TRACES / "llamaindex-traceloop"
PACKAGES = (
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
    "openai",
    "opentelemetry-instrumentation-llamaindex",
    "opentelemetry-instrumentation-openai",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
SERVER = scripted_model.ChatCompletions().serve()
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
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        result: Any = await agent.run(user_msg=text, ctx=ctx)
        finals.append(result.response.content or None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    asyncio.run(run_turns(agent, scenario, script, finals, turn_traces))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=(
            "LlamaIndex FunctionAgent (AgentWorkflow agent, streaming=False) with OpenAILike over "
            "the scripted Chat Completions server + Traceloop opentelemetry-instrumentation-"
            "llamaindex (and -openai, suppressed under OpenAILike); refund raises -> "
            "ToolOutput(is_error=True); multi-turn via one Context reused; no session id "
            "(association properties need traceloop-sdk)"
        ),
        session_id=None,
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
