"""Capture the LlamaIndex FunctionAgent of ``llamaindex_function_agent.py`` traced by Laminar.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-llamaindex-laminar
    /tmp/cap-llamaindex-laminar/bin/pip install 'lmnr[llamaindex]' llama-index-core \
        llama-index-llms-openai llama-index-llms-openai-like \
        opentelemetry-exporter-otlp-proto-common
    # Laminar turns its LlamaIndex instrumentation on only when the ``llama-index``
    # distribution (the meta-package) is installed, as its docs install it; that pins
    # llama-index-llms-openai < 0.8, so openai-like must follow:
    /tmp/cap-llamaindex-laminar/bin/pip install llama-index 'llama-index-llms-openai-like<0.8'
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-llamaindex-laminar/bin/python \
        tests/golden/capture/llamaindex_laminar.py [scenario ...]'

Captured with lmnr 0.8.1 (its ``[llamaindex]`` extra: OpenLLMetry's
opentelemetry-instrumentation-llamaindex 0.62.4), llama-index 0.14.25, llama-index-core
0.14.25, llama-index-workflows 2.26.1, llama-index-instrumentation 0.6.0,
llama-index-llms-openai 0.7.10, llama-index-llms-openai-like 0.7.2, openai 2.54.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common / -proto
1.45.1, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up.
Writes ``tests/golden/traces/llamaindex-laminar/``.

The agent is the one of ``llamaindex_function_agent.py``: ``FunctionAgent(name=
"music_store_support", streaming=False)`` with the five ``FunctionTool``s and
``OpenAILike`` (the real ``openai`` client) pointed at the scripted Chat Completions
loopback server (``scripted_model.ChatCompletions``). The refused refund raises; the agent
turns it into a ToolOutput with ``is_error=True`` whose content goes to the model.
Multi-turn memory: one ``Context(agent)`` reused across the turns.

Instrumentation, as Laminar's docs show: ``Laminar.initialize()`` with its defaults (every
instrument it finds: here OpenLLMetry's LlamaIndex instrumentation, which Laminar enables
when ``llama-index`` and ``opentelemetry-instrumentation-llamaindex`` are installed, and
Laminar's own fork of the OpenAI instrumentation for the ``openai`` client underneath).
Content capture is on (the instrumentation's ``TRACELOOP_TRACE_CONTENT`` defaults to
true; Laminar records ``@observe`` inputs/outputs). Each user turn runs inside the
application's handler ``@observe(name="handle_turn")`` (not named after the agent, so
the agent name can only come from LlamaIndex's spans); the session id (multi_turn only)
is set the documented way, ``Laminar.set_trace_session_id(session id)`` inside it. No
project key: Laminar exports with its own ``LaminarSpanExporter`` to
``OTEL_EXPORTER_OTLP_ENDPOINT``, the ``received_otlp.receiver`` route of the same loopback
server, OTLP/HTTP protobuf; ``Laminar.flush()`` after every user turn. Every ``OTEL_*`` /
``LMNR_*`` / ``OPENAI_*`` / ``TRACELOOP_*`` variable is removed first.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "LMNR_", "OPENAI_", "TRACELOOP_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "llamaindex-laminar"
PACKAGES = (
    "lmnr",
    "opentelemetry-instrumentation-llamaindex",
    "llama-index",
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
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


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {MODEL.PATH: MODEL, received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export)}
)
BASE_URL = f"{SERVER.url}/v1"
os.environ.update(
    {
        "OTEL_EXPORTER_OTLP_ENDPOINT": SERVER.url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "NO_PROXY": "127.0.0.1,localhost",
    }
)

from lmnr import Laminar, observe  # noqa: E402

# service.name is Laminar's own (sys.argv[0]): initialize() has no parameter for it.
Laminar.initialize(project_api_key=None)

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
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


TOOLS: list[Any] = [
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


@observe(name="handle_turn")
async def handle_turn(agent: FunctionAgent, ctx: Context, text: str, session_id: str | None) -> str:
    """The application's handler of one user turn."""
    if session_id:
        Laminar.set_trace_session_id(session_id)
    result: Any = await agent.run(user_msg=text, ctx=ctx)
    return str(result.response.content or "")


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
        before = len(Received.requests)
        finals.append(await handle_turn(agent, ctx, text, scenario.session_id) or None)
        assert Laminar.flush(), "Laminar's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))


NOTES = (
    "LlamaIndex FunctionAgent (AgentWorkflow agent, streaming=False) with OpenAILike over the "
    "scripted Chat Completions server, traced by Laminar (lmnr 0.8.1): Laminar.initialize() "
    "with its defaults and no project key (OpenLLMetry's LlamaIndex instrumentation + "
    "Laminar's OpenAI instrumentation), each turn in @observe(name='handle_turn'); multi_turn: "
    "Laminar.set_trace_session_id inside it. refund raises -> ToolOutput(is_error=True); "
    "multi-turn via one Context reused. Exported by Laminar's LaminarSpanExporter over "
    "OTLP/HTTP protobuf to a loopback receiver; Laminar.flush() after every turn. See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    assert Laminar.flush()
    Received.requests = []
    MODEL.requests.clear()
    agent = make_agent()
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
        Laminar.shutdown()  # type: ignore[no-untyped-call]
        SERVER.shutdown()


if __name__ == "__main__":
    main()
