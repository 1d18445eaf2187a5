"""Capture LlamaIndex ``FunctionAgent`` traced by Langtrace (langtrace-python-sdk).

Not run in CI. Run it in a venv of its own (never evald's), offline (loopback only)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-llamaindex-langtrace
    /tmp/cap-llamaindex-langtrace/bin/pip install llama-index-core llama-index-llms-openai \
        langtrace-python-sdk opentelemetry-exporter-otlp-proto-http
    /tmp/cap-llamaindex-langtrace/bin/pip install llama-index \
        "llama-index-llms-openai-like<0.8" importlib_metadata "setuptools<81"
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-llamaindex-langtrace/bin/python tests/golden/capture/llamaindex_langtrace.py \
        [scenario ...]'

Captured with langtrace-python-sdk 3.8.21, trace-attributes 7.2.1, llama-index 0.14.25,
llama-index-core 0.14.25, llama-index-workflows 2.26.1, llama-index-instrumentation 0.6.0,
llama-index-llms-openai 0.7.10, llama-index-llms-openai-like 0.7.2, openai 2.54.0,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2,
opentelemetry-instrumentation 0.66b2, protobuf 7.36.2, importlib_metadata 10.2.0, setuptools
80.10.2, Python 3.12.1. The ``llama-index`` meta package is installed because Langtrace
instruments LlamaIndex only when the distribution ``llama-index`` is installed (its
``init`` checks that name and reads its version); it pulls llama-index-llms-openai back to
0.7.10, hence llama-index-llms-openai-like 0.7.2. (langtrace imports ``importlib_metadata``
and ``pkg_resources`` without declaring them: installed by hand.)
Writes ``tests/golden/traces/llamaindex-langtrace/``.

The agent is the one of ``llamaindex_function_agent.py``: ``FunctionAgent(name=
"music_store_support", tools=<five FunctionTool.from_defaults>, llm=OpenAILike(...),
system_prompt=..., streaming=False)`` with the real ``openai`` client pointed at the scripted
Chat Completions loopback server (``scripted_model.ChatCompletions``). The refused refund
raises; the agent turns it into a ToolOutput with ``is_error=True`` whose content (the
exception text) goes to the model. Multi-turn memory: one ``Context(agent)`` reused across
the turns, and the conversation in one ``ChatMemoryBuffer`` passed as
``agent.run(memory=...)`` (llama-index-workflows 2.26 drops the agent's memory from a reused
``Context``, as ``llamaindex_mlflow.py`` found: with the context alone a turn's request holds
only that turn).

Instrumentation, as Langtrace's docs show (``langtrace.init`` before importing the
framework; every instrumentation whose package is installed: llama-index, openai,
sqlalchemy ...): ``langtrace.init(custom_remote_exporter=<in-memory BatchRecorder>,
service_name=..., api_key="offline")``, which installs its OWN global ``TracerProvider``
(LangtraceSampler) with a ``BatchSpanProcessor`` around the given exporter (the script
flushes it after each turn). Langtrace's LlamaIndex instrumentation wraps only query
engines, retrievers, extractors, readers and chat engines (``query``, ``retrieve``, ``chat``
...), not the agent workflow or tools; the model calls are traced by its OpenAI
instrumentation. Content capture: ``TRACE_PROMPT_COMPLETION_DATA=true`` (Langtrace's
switch; also its default). Each turn runs inside Langtrace's documented
``inject_additional_attributes(fn, {...})``: ``langtrace.span.name`` =
``music_store_support`` (its custom span naming) and, in ``multi_turn``, ``session.id``.
That helper attaches the baggage and never detaches it, so each turn runs in an asyncio
task of its own (a copied context). Each turn is one call of an ``async`` function decorated
with Langtrace's documented ``@with_langtrace_root_span("music_store_support")`` (its way to
group a request's spans in one trace; without it every model call was a trace of its own,
seen in a first run). Phone-home off: ``LANGTRACE_ERROR_REPORTING=False`` (no Sentry),
``OTEL_EXPORTER_OTLP_*`` / ``LANGTRACE_*`` removed, and its SDK-version check
(api.github.com) fails offline under ``unshare -rn``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "LANGTRACE_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
ENV = {
    "LANGTRACE_ERROR_REPORTING": "False",  # no Sentry
    "TRACE_PROMPT_COMPLETION_DATA": "true",  # Langtrace's content switch (on)
}
os.environ.update(ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-llamaindex-langtrace"
RECORDER = common.BatchRecorder()

from langtrace_python_sdk import (  # noqa: E402
    inject_additional_attributes,
    langtrace,
    with_langtrace_root_span,
)

langtrace.init(custom_remote_exporter=RECORDER, service_name=SERVICE, api_key="offline")
PROVIDER: Any = trace.get_tracer_provider()
assert hasattr(PROVIDER, "force_flush"), "Langtrace did not set an SDK tracer provider"

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.memory import ChatMemoryBuffer  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

FOLDER = common.TRACES / "llamaindex-langtrace"
PACKAGES = (
    "langtrace-python-sdk",
    "trace-attributes",
    "llama-index",
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
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


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    RECORDER.batches.clear()
    PROVIDER.force_flush()
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
            "the scripted Chat Completions server, traced by Langtrace (langtrace.init, every "
            "instrumentation it has for the installed packages: its llama-index one wraps no "
            "agent or tool method, so only the openai client's calls are spans); refund raises "
            "-> ToolOutput(is_error=True); multi-turn via one Context reused and one "
            "ChatMemoryBuffer passed as agent.run(memory=...); each turn inside "
            "inject_additional_attributes({'langtrace.span.name': 'music_store_support'"
            "[, 'session.id': ...]}) and Langtrace's "
            "with_langtrace_root_span('music_store_support'); see NOTES.md for what is recorded"
        ),
        session_id=scenario.session_id,
        extra={"env": ENV},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


@with_langtrace_root_span(common.AGENT_NAME)
async def run_turn(agent: FunctionAgent, text: str, ctx: Context, memory: ChatMemoryBuffer) -> Any:
    """One user turn under Langtrace's documented root span (one trace per turn)."""
    return await agent.run(user_msg=text, ctx=ctx, memory=memory)


async def run_turns(
    agent: FunctionAgent,
    scenario: common.Scenario,
    script: common.Script,
    finals: list[str | None],
    turn_traces: list[str],
) -> None:
    attributes: dict[str, str] = {"langtrace.span.name": common.AGENT_NAME}
    if scenario.session_id:
        attributes["session.id"] = scenario.session_id
    ctx = Context(agent)
    memory = ChatMemoryBuffer.from_defaults(llm=agent.llm)  # the conversation, across turns
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)

        async def in_task(text: str = text) -> Any:
            # a task of its own: the baggage Langtrace attaches stays in its context
            return await inject_additional_attributes(
                lambda: run_turn(agent, text, ctx, memory), dict(attributes)
            )

        result = await asyncio.create_task(in_task())
        finals.append(result.response.content or None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
