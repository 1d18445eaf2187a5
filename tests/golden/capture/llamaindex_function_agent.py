"""Capture LlamaIndex FunctionAgent + openinference-instrumentation-llama-index.

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-llamaindex
    /tmp/cap-llamaindex/bin/pip install llama-index-core llama-index-llms-openai \
        llama-index-llms-openai-like openinference-instrumentation-llama-index \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-llamaindex/bin/python tests/golden/capture/llamaindex_function_agent.py

The model is llama-index's ``OpenAILike`` (the subclass of ``llama_index.llms.openai.OpenAI``
meant for OpenAI-compatible servers; the plain ``OpenAI`` class refuses the unknown model
name in ``metadata``: context-window lookup raises) with the real ``openai`` client, pointed
at the scripted Chat Completions loopback server. ``FunctionAgent(streaming=False)`` (the
scripted server refuses streams). Tools are ``FunctionTool.from_defaults`` of typed
functions. The refused refund raises; the agent turns it into a ToolOutput with
``is_error=True`` whose content (the exception text) goes to the model. Multi-turn memory:
one ``Context(agent)`` reused across the turns. Session id via ``using_session()``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import scripted_model
from opentelemetry import trace

PROVIDER, RECORDER = common.make_provider("music-store-support-llamaindex")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor  # noqa: E402

LlamaIndexInstrumentor().instrument(tracer_provider=PROVIDER)

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

FOLDER = common.TRACES / "llamaindex-openinference"
PACKAGES = (
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
    "openai",
    "openinference-instrumentation-llama-index",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
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


TOOLS = [
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
        if scenario.session_id:
            with using_session(scenario.session_id):
                result = await agent.run(user_msg=text, ctx=ctx)
        else:
            result = await agent.run(user_msg=text, ctx=ctx)
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
            "the scripted Chat Completions server + openinference-instrumentation-llama-index; "
            "refund raises -> ToolOutput(is_error=True); multi-turn via one Context reused"
        ),
        session_id=scenario.session_id,
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
