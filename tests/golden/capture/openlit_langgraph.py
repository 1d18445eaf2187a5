"""Capture OpenLIT on a LangGraph agent (LangChain ``create_agent`` + ``ChatOpenAI``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-openlit
    /tmp/cap-openlit/bin/pip install openlit langgraph langchain langchain-openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-openlit/bin/python tests/golden/capture/openlit_langgraph.py [scenario ...]

Captured with openlit 1.45.0, langchain 1.5.2, langchain-core 1.8.3, langchain-openai 1.7.4,
langgraph 1.2.24, langgraph-prebuilt 1.1.3, openai 2.54.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.1, opentelemetry-instrumentation(-httpx) 0.66b1,
protobuf 7.36.2. Writes ``tests/golden/traces/langgraph-openlit/``.

Real ``langchain.agents.create_agent`` graph (LangGraph) with real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an error
``ToolMessage``, LangChain's idiom) and the real ``ChatOpenAI`` (Chat Completions, real
``openai`` client) pointed at a loopback HTTP server in this process that scripts the model's
answers (``scripted_model.ChatCompletions``); nothing else is faked. One ``graph.invoke`` per
user turn. ``multi_turn`` keeps the conversation in a LangGraph checkpointer thread
(``InMemorySaver``, ``configurable.thread_id`` = the session id); the one-shot scenarios run
without checkpointer or thread id.

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds, among them
``langchain``, ``langgraph``, ``openai`` and OpenTelemetry's ``httpx`` client instrumentor)
except: ``disable_metrics=True`` (no meter provider at all), ``collect_gpu_stats=False``,
``capture_message_content=True``, no ``otlp_endpoint``, and ``pricing_json`` = an empty local
file (otherwise it downloads its price list from GitHub). OpenLIT 1.45 has no ``tracer=``
argument any more: it reuses an SDK ``TracerProvider`` / ``LoggerProvider`` already set
globally ("Detected existing ... reusing it"), so ours are set first and it adds no exporter
of its own. Its GenAI events (``disable_events`` default False) go to our logger provider and
are written as ``<scenario>.logs.jsonl`` / ``.logs.pb``. ``OTEL_EXPORTER_OTLP_*`` variables are
removed first: nothing is sent anywhere.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
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

SERVICE = "music-store-support-langgraph-openlit"
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

from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from pydantic import SecretStr  # noqa: E402

FOLDER = common.TRACES / "langgraph-openlit"
PACKAGES = (
    "openlit",
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-prebuilt",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-instrumentation-httpx",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


def _tool(name: str, func: Any) -> StructuredTool:
    return StructuredTool.from_function(
        func=func, name=name, description=common.TOOL_DESCRIPTIONS[name], handle_tool_error=True
    )


def lookup_track(track_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    try:
        return dict(
            _script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)
        )
    except common.StoreError as exc:  # LangChain's idiom: handled as an error ToolMessage
        raise ToolException(str(exc)) from exc


TOOLS = [
    _tool("lookup_track", lookup_track),
    _tool("lookup_album", lookup_album),
    _tool("lookup_artist", lookup_artist),
    _tool("lookup_invoice", lookup_invoice),
    _tool("refund", refund),
]


def make_graph(checkpointer: InMemorySaver | None) -> Any:
    model = ChatOpenAI(
        model=common.MODEL_NAME,
        api_key=SecretStr("sk-offline"),
        base_url=BASE_URL,
        max_retries=0,
    )
    return create_agent(
        model,
        TOOLS,
        system_prompt=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        checkpointer=checkpointer,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    # OpenLIT's langchain instrumentor records the graph construction as a span of its own
    # (``create_agent <name>``, a trace of its own): flushed here as the first batch, it is a
    # stray trace (no turn's), as it would be in an application building its graph once.
    graph = make_graph(InMemorySaver() if session else None)
    config: dict[str, Any] = {"configurable": {"thread_id": session}} if session else {}
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        state = graph.invoke({"messages": [{"role": "user", "content": text}]}, config=config)
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
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
        session_id=session,
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "LangChain create_agent (LangGraph) + ChatOpenAI over a scripted loopback Chat Completions "
    "server, traced by OpenLIT (openlit.init reusing the global SDK providers; langchain, "
    "langgraph, openai and httpx instrumentors). Per turn one trace: invoke_workflow <graph name> "
    "(root; no input messages, output = final answer, usage of the LAST model call only) with "
    "children invoke_agent model (one per run of LangGraph's 'model' node: gen_ai.agent.name = "
    "the node name, input.messages = the last 3 non-empty state messages) holding chat <model> "
    "(CLIENT; full input history without tool-call parts, output tool_call parts with ids, "
    "gen_ai.tool.name/call.id/call.arguments flattened, ', '-joined when several) holding an "
    "httpx POST span; and execute_tool <tool> spans directly under invoke_workflow (no span "
    "for the 'tools' node): gen_ai.tool.call.id, gen_ai.tool.call.arguments = Python repr of "
    "the args dict, gen_ai.tool.call.result = str(ToolMessage) (pydantic 'content=... name=... "
    "tool_call_id=...' form). The refused refund raises ToolException (handle_tool_error=True): "
    "span status OK, the error only as status='error' inside that result text. One log record "
    "per chat span (gen_ai.client.inference.operation.details, structured messages). Graph "
    "construction emits a one-span create_agent trace (stray). multi_turn: InMemorySaver thread; "
    "OpenLIT records the thread_id as gen_ai.conversation.id on every span but create_agent and "
    "POST; one-shot scenarios run without thread id (no conversation id)"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
