"""Capture Langfuse's LangChain callback handler on a LangGraph agent (``create_agent``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-langfuse
    /tmp/cap-langfuse/bin/pip install langfuse langgraph langchain langchain-openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-langfuse/bin/python tests/golden/capture/langfuse_langgraph.py [scenario ...]'

Captured with langfuse 5.0.4, langchain 1.5.2, langchain-core 1.8.3, langchain-openai 1.7.4,
langgraph 1.2.24, langgraph-prebuilt 1.1.3, langgraph-checkpoint 4.3.2, openai 3.57.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -exporter-otlp-proto-http / -proto
1.45.2, protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/langgraph-langfuse/``.

Real ``langchain.agents.create_agent`` graph (LangGraph) with real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an error
``ToolMessage``, LangChain's idiom) and the real ``ChatOpenAI`` (Chat Completions, real
``openai`` client) pointed at a loopback HTTP server in this process that scripts the model's
answers (``scripted_model.ChatCompletions``); nothing else is faked. One ``graph.invoke`` per
user turn with Langfuse's ``langfuse.langchain.CallbackHandler`` in ``config["callbacks"]``.
``multi_turn`` keeps the conversation in a LangGraph checkpointer thread (``InMemorySaver``,
``configurable.thread_id`` = the session id) and gives Langfuse the session id the documented
way, ``metadata={"langfuse_session_id": ...}`` in the run config; the one-shot scenarios run
without checkpointer, thread id or session id.

Instrumentation: Langfuse's Python SDK (v3+ API, OpenTelemetry-based). The client is built
explicitly, ``Langfuse(public_key=dummy, secret_key=dummy, base_url=http://127.0.0.1:9,
tracer_provider=<common.make_provider>, span_exporter=<a second in-memory BatchRecorder>,
flush_at=2048, flush_interval=60)``: Langfuse adds its own ``LangfuseSpanProcessor`` (its
span filter, session/app-root attributes, media/mask transforming exporter) to OUR provider,
with the given exporter instead of its OTLP/HTTP exporter, so nothing is sent to the Langfuse
host (a closed local port anyway). The files are written from the provider's own
``BatchRecorder`` (common's format); each turn the script checks that Langfuse's exporter
received exactly the same spans with the same attributes (``langfuse_export_identical`` in
each ``expected.json``). ``OTEL_EXPORTER_OTLP_*``, ``LANGFUSE_*`` and ``LANGSMITH_*``
variables are removed first.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_EXPORTER_OTLP", "LANGFUSE_", "LANGSMITH_", "LANGCHAIN_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
LANGFUSE_HOST = "http://127.0.0.1:9"  # closed port: the Langfuse API is never reachable
os.environ["LANGFUSE_HOST"] = LANGFUSE_HOST

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-langgraph-langfuse"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
LANGFUSE_EXPORT = common.BatchRecorder()  # what Langfuse's own processor would have sent

from langfuse import Langfuse  # noqa: E402

LANGFUSE = Langfuse(
    public_key="pk-lf-offline",
    secret_key="sk-lf-offline",
    base_url=LANGFUSE_HOST,
    tracer_provider=PROVIDER,
    span_exporter=LANGFUSE_EXPORT,
    flush_at=2048,
    flush_interval=60,
)

from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langfuse.langchain import CallbackHandler  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from pydantic import SecretStr  # noqa: E402

FOLDER = Path(os.environ.get("CAPTURE_OUT") or common.TRACES) / "langgraph-langfuse"
PACKAGES = (
    "langfuse",
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
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


def _span_record(span: Any) -> tuple[Any, ...]:
    return (
        span.context.trace_id,
        span.context.span_id,
        span.name,
        json.dumps(dict(span.attributes or {}), sort_keys=True, default=str),
        span.status.status_code.name,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    LANGFUSE_EXPORT.batches.clear()
    MODEL.requests.clear()
    graph = make_graph(InMemorySaver() if session else None)
    handler = CallbackHandler()
    config: dict[str, Any] = {"callbacks": [handler]}
    if session:
        config["configurable"] = {"thread_id": session}
        config["metadata"] = {"langfuse_session_id": session}
    PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        state = graph.invoke({"messages": [{"role": "user", "content": text}]}, config=config)
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
        LANGFUSE.flush()  # = PROVIDER.force_flush(): both processors export
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    ours = sorted(_span_record(s) for s in RECORDER.spans)
    langfuse_sent = sorted(_span_record(s) for s in LANGFUSE_EXPORT.spans)
    identical = ours == langfuse_sent
    if not identical:
        print(f"{name}: Langfuse's exporter got other spans than the provider", file=sys.stderr)
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
        extra={
            "tool_messages_in_last_request": tool_messages_sent,
            "langfuse_export_identical": identical,
            "langfuse_export_batches": len([b for b in LANGFUSE_EXPORT.batches if b]),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "LangChain create_agent (LangGraph) + ChatOpenAI over a scripted loopback Chat Completions "
    "server, traced by Langfuse's LangChain CallbackHandler (Langfuse Python SDK, OTel spans "
    "with langfuse.observation.* attributes) on our TracerProvider; Langfuse's own processor "
    "exported to an in-memory exporter (same spans). See NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    LANGFUSE.shutdown()
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
