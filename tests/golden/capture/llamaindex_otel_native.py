"""Capture LlamaIndex FunctionAgent + LlamaIndex's own OpenTelemetry span handler
(``llama-index-observability-otel``).

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-llamaotel
    /tmp/cap-llamaotel/bin/pip install llama-index-core llama-index-llms-openai \
        llama-index-llms-openai-like llama-index-observability-otel \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-llamaotel/bin/python tests/golden/capture/llamaindex_otel_native.py [scenario ...]

Versions captured: llama-index-core 0.14.25, llama-index-workflows 2.26.1,
llama-index-instrumentation 0.5.0 (llama-index-observability-otel 0.7.0 requires <0.6),
llama-index-llms-openai 0.8.3, llama-index-llms-openai-like 0.8.1, openai 2.54.0,
llama-index-observability-otel 0.7.0, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-common 1.45.2, opentelemetry-semantic-conventions 0.66b2,
protobuf 7.36.2 (Python 3.12.1). Writes ``tests/golden/traces/llamaindex-otel-native/``.

The agent of ``llamaindex_function_agent.py`` (the OpenInference capture); only the
instrumentation differs. ``LlamaIndexOpenTelemetry(tracer_provider=PROVIDER, ...)
.start_registering()`` adds the package's ``OTelCompatibleSpanHandler`` and
``OTelCompatibleEventHandler`` to LlamaIndex's root dispatcher: every dispatcher span
becomes an OTel span (tracer ``llamaindex.opentelemetry.tracer`` from the global provider,
which is the capture's ``PROVIDER``), every dispatcher event a span event on the open
span it belongs to. The class insists on a ``span_exporter`` and adds a processor for it
to the given provider: it gets the SDK's ``InMemorySpanExporter`` (a sink nobody reads);
the capture's own batch processor on ``PROVIDER`` writes the folder, as in every capture.

Session id: the package documents none; it records LlamaIndex's ``instrument_tags`` (the
dispatcher's own tag mechanism) as span attributes (``llamaindex.<key>`` for a key
without a dot). ``multi_turn`` runs each turn inside
``instrument_tags({"session_id": ...})``, as a LlamaIndex user would tag a run.

The model is llama-index's ``OpenAILike`` with the real ``openai`` client, pointed at the
scripted Chat Completions loopback server; ``FunctionAgent(streaming=False)``. The refused
refund raises; the agent turns it into a ToolOutput with ``is_error=True``. Multi-turn
memory: one ``Context(agent)`` reused across the turns. Each turn's ``run_id`` (a documented
``run`` argument, recorded as ``llamaindex.run_id``) is ``<scenario>-<turn>`` instead of a
random nanoid, so that a re-capture compares equal. ``OTEL_EXPORTER_OTLP*`` /
``OPENAI_*`` removed from the environment.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

PROVIDER, RECORDER = common.make_provider("music-store-support-llamaindex")
trace.set_tracer_provider(PROVIDER)

from llama_index.observability.otel import LlamaIndexOpenTelemetry  # noqa: E402

LlamaIndexOpenTelemetry(
    tracer_provider=PROVIDER,
    span_exporter=InMemorySpanExporter(),
    span_processor="simple",
    service_name_or_resource="music-store-support-llamaindex",
).start_registering()

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.tools import BaseTool, FunctionTool  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402
from llama_index_instrumentation.dispatcher import instrument_tags  # noqa: E402

FOLDER = common.TRACES / "llamaindex-otel-native"
PACKAGES = (
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
    "llama-index-observability-otel",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-semantic-conventions",
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
        run_id = f"{scenario.name}-{turn}"  # (else a random nanoid: re-captures would differ)
        result: Any
        if scenario.session_id:
            with instrument_tags({"session_id": scenario.session_id}):
                result = await agent.run(user_msg=text, ctx=ctx, run_id=run_id)
        else:
            result = await agent.run(user_msg=text, ctx=ctx, run_id=run_id)
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
            "the scripted Chat Completions server + llama-index-observability-otel "
            "(LlamaIndex's own OTel span/event handlers); refund raises -> "
            "ToolOutput(is_error=True); multi-turn via one Context reused, session id as "
            "instrument_tags({'session_id': ...}) -> llamaindex.session_id"
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
