"""Capture Langtrace (langtrace-python-sdk) on a LangGraph prebuilt ReAct agent.

Not run in CI. Run it in a venv of its own (never evald's), offline (loopback only)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-langtrace
    /tmp/cap-langtrace/bin/pip install langtrace-python-sdk langgraph langchain-openai \
        opentelemetry-exporter-otlp-proto-http importlib_metadata "setuptools<81"
    unshare -n sh -c 'ip link set lo up && \
        /tmp/cap-langtrace/bin/python tests/golden/capture/langtrace_langgraph.py [scenario ...]'

Captured with langtrace-python-sdk 3.8.21, langgraph 1.2.24, langgraph-prebuilt 1.1.3,
langchain-core 1.8.3, langchain-openai 1.7.4, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, opentelemetry-instrumentation 0.66b2, protobuf
7.36.2, importlib_metadata 10.2.0, setuptools 80.10.2, Python 3.12.1. (langtrace 3.8.21 imports
``importlib_metadata`` and ``pkg_resources`` without declaring them: both installed by hand.)
Writes ``tests/golden/traces/langgraph-langtrace/``.

Real ``langgraph.prebuilt.create_react_agent`` graph with real ``StructuredTool``s
(``handle_tool_error=True``: the refused refund raises ``ToolException`` and becomes an error
``ToolMessage``) and the real ``ChatOpenAI`` (Chat Completions, real ``openai`` client) pointed
at a loopback HTTP server in this process that scripts the model's answers
(``scripted_model.ChatCompletions``). One ``graph.invoke`` per user turn. ``multi_turn`` keeps
the conversation in a LangGraph checkpointer thread (``InMemorySaver``, ``thread_id`` = the
session id) and passes the session id to the spans the way Langtrace documents it
(docs.langtrace.ai/tracing/filter_by_session_id): ``inject_additional_attributes(fn,
{"session.id": ...})`` (baggage read by its instrumentations). That helper attaches the
baggage context and never detaches it, so each call runs in a copied ``contextvars`` context
(the attachment ends with the turn).

Instrumentation: ``langtrace.init`` with its defaults (every instrumentation whose package is
installed: here openai, langchain-core, langgraph, sqlalchemy ...), which sets its OWN global
``TracerProvider`` (its ``LangtraceSampler``, resource ``service.name`` = ``service_name``),
with ``custom_remote_exporter`` = the capture's in-memory ``BatchRecorder`` (Langtrace wraps it
in a default ``BatchSpanProcessor``; the script flushes it after each turn). Phone-home is off:
``LANGTRACE_ERROR_REPORTING=False`` (no Sentry), ``OTEL_EXPORTER_OTLP_*`` / ``LANGTRACE_*``
variables removed; its SDK-version check (api.github.com) fails offline under ``unshare -n``.
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "LANGTRACE_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
os.environ["LANGTRACE_ERROR_REPORTING"] = "False"  # no Sentry

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-langgraph-langtrace"
RECORDER = common.BatchRecorder()

from langtrace_python_sdk import (  # noqa: E402
    inject_additional_attributes,
    langtrace,
    with_langtrace_root_span,
)

langtrace.init(
    custom_remote_exporter=RECORDER,
    service_name=SERVICE,
    api_key="offline",
)
PROVIDER: Any = trace.get_tracer_provider()
assert hasattr(PROVIDER, "force_flush"), "Langtrace did not set an SDK tracer provider"

from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402
from pydantic import SecretStr  # noqa: E402

FOLDER = common.TRACES / "langgraph-langtrace"
PACKAGES = (
    "langtrace-python-sdk",
    "langgraph",
    "langgraph-prebuilt",
    "langchain-core",
    "langchain-openai",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()
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
    return create_react_agent(
        model,
        TOOLS,
        prompt=common.SYSTEM_PROMPT,
        name=common.AGENT_NAME,
        checkpointer=checkpointer,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    MODEL.requests.clear()
    graph = make_graph(InMemorySaver() if session else None)
    config: dict[str, Any] = {"configurable": {"thread_id": session}} if session else {}
    PROVIDER.force_flush()  # graph construction, if it made spans, is a batch of its own
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        inputs = {"messages": [{"role": "user", "content": text}]}

        def run_graph(inputs: dict[str, Any] = inputs) -> Any:
            return graph.invoke(inputs, config=config)

        # Langtrace's own root span: one trace per turn
        invoke = cast(Callable[[], Any], with_langtrace_root_span()(run_graph))

        if session:
            state = contextvars.copy_context().run(
                inject_additional_attributes, invoke, {"session.id": session}
            )
        else:
            state = invoke()
        last = state["messages"][-1]
        finals.append(last.content if isinstance(last.content, str) and last.content else None)
        PROVIDER.force_flush()
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
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "LangGraph create_react_agent + ChatOpenAI (scripted loopback) traced by Langtrace 3.8.21 "
    "inside with_langtrace_root_span: no tool spans, no graph-run span; see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
