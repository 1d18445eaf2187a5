"""Capture the smolagents ToolCallingAgent of ``smolagents_toolcalling.py`` through OpenLIT.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-smolagents-openlit
    /tmp/cap-smolagents-openlit/bin/pip install smolagents==1.26.0 openlit==1.45.0 \
        openai==2.54.0 opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1 \
        opentelemetry-exporter-otlp-proto-common==1.45.1 opentelemetry-instrumentation==0.66b1
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-smolagents-openlit/bin/python \
        tests/golden/capture/smolagents_openlit.py [scenario ...]'

(pins given because an unpinned ``pip install smolagents openlit openai`` backtracked for
over ten minutes.) Captured with smolagents 1.26.0, openai 2.54.0 (openlit pins
``openai<3``), openlit 1.45.0, opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common
/ -exporter-otlp-proto-http 1.45.1, opentelemetry-instrumentation(-httpx) 0.66b1, protobuf
7.36.2 (Python 3.12.1). Writes ``tests/golden/traces/smolagents-openlit/``.

The agent is that of ``smolagents_toolcalling.py``: a real ``smolagents.ToolCallingAgent``
named ``music_store_support`` (the system prompt as ``instructions``, ``max_steps=8``) with
the store's five tools as ``@tool`` functions and ``OpenAIServerModel`` (real ``openai``
client) against the scripted Chat Completions loopback server. smolagents sends
``tool_choice="required"`` and ends a run only through its ``final_answer`` tool, so the
scripted final text is sent as a ``final_answer`` tool call ``{"answer": <text>}``. The
refused refund raises inside the tool; smolagents wraps it in AgentToolExecutionError, the
step records the error and the next model call sees it. The two calls of one reply run in
smolagents' thread pool. Multi-turn memory: ``agent.run(text, reset=False)``; smolagents has
no session id and OpenLIT's smolagents instrumentor records none, so ``multi_turn`` has no
session (``session_id=None`` in the labels' capture record).

Instrumentation: OpenLIT as its docs show, ``openlit.init(otlp_endpoint=<loopback>,
service_name=..., environment=..., capture_message_content=True, disable_metrics=True,
collect_gpu_stats=False, pricing_json=<an empty local file>)`` (without ``pricing_json`` it
downloads its price list from GitHub) with no tracer or logger provider set before: OpenLIT
builds its own ``TracerProvider`` (``BatchSpanProcessor`` + OTLP/HTTP protobuf exporter) and
``LoggerProvider`` (OTLP/HTTP log exporter) and sends both to the loopback server of this
process (``/v1/traces``, ``/v1/logs``), which keeps each export request as it came. Every
instrumentor it finds is on, among them ``smolagents`` (agent run, tool-call and step spans),
``openai`` and OpenTelemetry's ``httpx`` client instrumentor. Both providers are flushed after
each turn. ``OTEL_*`` exporter variables, ``OPENLIT_*`` and ``OPENAI_*`` are unset first, and
the capture runs with only loopback up.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENLIT_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # noqa: E402
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-smolagents-openlit"
FOLDER = common.TRACES / "smolagents-openlit"
PACKAGES = (
    "smolagents",
    "openai",
    "openlit",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-instrumentation-httpx",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
    "protobuf",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    traces: ClassVar[list[ExportTraceServiceRequest]] = []
    logs: ClassVar[list[ExportLogsServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.traces.append(request)
    Received.content_types.add(content_type)


def _logs_route(request: scripted_model.Request) -> scripted_model.Reply:
    export = ExportLogsServiceRequest()
    export.ParseFromString(request.body)
    Received.logs.append(export)
    return scripted_model.Reply(
        ExportLogsServiceResponse().SerializeToString(), content_type="application/x-protobuf"
    )


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions answer: the script's tool calls, else final_answer(answer=text)."""
    script = common.active_script()
    calls, final = script.next_response()
    if final is not None:
        calls = [
            (
                f"call_{script.scenario.name[:6]}_{script.turn}{script.step}0",
                "final_answer",
                {"answer": final},
            )
        ]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for cid, name, args in calls
        ],
    }
    return scripted_model.completion(
        body,
        message,
        response_id=f"chatcmpl_{script.scenario.name}_{script.turn}{script.step}",
        finish_reason="tool_calls",
    )


MODEL = scripted_model.ChatCompletions(answer)  # MODEL.requests: every request body received
SERVER = scripted_model.LoopbackServer(
    {
        MODEL.PATH: MODEL,
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        r"/v1/logs": _logs_route,
    }
)
BASE_URL = f"{SERVER.url}/v1"

import openlit  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

_PRICING = Path(tempfile.mkdtemp(prefix="openlit-pricing-")) / "pricing.json"
_PRICING.write_text("{}", encoding="utf-8")
openlit.init(
    otlp_endpoint=SERVER.url,
    service_name=SERVICE,
    environment="acceptance-test",
    capture_message_content=True,
    disable_metrics=True,
    collect_gpu_stats=False,
    pricing_json=str(_PRICING),
)
TRACER_PROVIDER: Any = trace.get_tracer_provider()
LOGGER_PROVIDER: Any = _logs.get_logger_provider()

from smolagents import OpenAIServerModel, ToolCallingAgent, tool  # noqa: E402

_script = common.active_script


@tool  # type: ignore[untyped-decorator]
def lookup_track(track_name: str) -> dict:  # type: ignore[type-arg]
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name: The exact track name.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


@tool  # type: ignore[untyped-decorator]
def lookup_album(album_title: str) -> dict:  # type: ignore[type-arg]
    """Look up an album by its title.

    Args:
        album_title: The album title.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


@tool  # type: ignore[untyped-decorator]
def lookup_artist(artist_name: str) -> dict:  # type: ignore[type-arg]
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name: The artist's name.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool  # type: ignore[untyped-decorator]
def lookup_invoice(customer_id: int, invoice_id: int) -> dict:  # type: ignore[type-arg]
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id: The customer's id.
        invoice_id: The invoice id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool  # type: ignore[untyped-decorator]
def refund(invoice_id: int, track_id: int, reason: str) -> dict:  # type: ignore[type-arg]
    """Refund one purchased track of an invoice.

    Args:
        invoice_id: The invoice id.
        track_id: The track to refund.
        reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]


def make_agent() -> ToolCallingAgent:
    model = OpenAIServerModel(
        model_id=common.MODEL_NAME,
        api_base=BASE_URL,
        api_key="sk-offline",
        client_kwargs={"max_retries": 0},
    )
    return ToolCallingAgent(
        tools=TOOLS,
        model=model,
        name=common.AGENT_NAME,
        instructions=common.SYSTEM_PROMPT,
        max_steps=8,
        verbosity_level=0,
    )


def _flush() -> None:
    TRACER_PROVIDER.force_flush()
    LOGGER_PROVIDER.force_flush()


def _logs_hex_json(request: ExportLogsServiceRequest) -> str:
    as_dict = json_format.MessageToDict(request, use_integers_for_enums=True)
    common._hex_ids(as_dict)
    return json.dumps(as_dict, ensure_ascii=False, separators=(",", ":"))


def write_logs(folder: Path, name: str, requests: list[ExportLogsServiceRequest]) -> int:
    """``<scenario>.logs.jsonl`` (one request per export, hex ids) and ``.logs.pb`` (all)."""
    requests = [
        r for r in requests if any(sl.log_records for rl in r.resource_logs for sl in rl.scope_logs)
    ]
    every = ExportLogsServiceRequest()
    for request in requests:
        every.resource_logs.extend(request.resource_logs)
    if not requests:
        return 0
    (folder / f"{name}.logs.jsonl").write_text(
        "".join(_logs_hex_json(r) + "\n" for r in requests), encoding="utf-8"
    )
    (folder / f"{name}.logs.pb").write_bytes(every.SerializeToString())
    return sum(len(sl.log_records) for rl in every.resource_logs for sl in rl.scope_logs)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    _flush()
    Received.traces.clear()
    Received.logs.clear()
    MODEL.requests.clear()
    # OpenLIT wraps MultiStepAgent.__init__: building the agent records a 'create_agent'
    # trace of its own, flushed here before the first turn (a stray trace).
    agent = make_agent()
    _flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = set(received_otlp.ids_of(Received.traces))
        result = agent.run(text, reset=(turn == 0))
        finals.append(str(result) if result is not None else None)
        _flush()
        turn_traces.extend(t for t in received_otlp.ids_of(Received.traces) if t not in before)
    last_messages = (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=None,  # smolagents has no session id; OpenLIT records none
        extra={
            "otlp_content_types": sorted(Received.content_types),
            "tool_messages_in_last_request": [
                m.get("content") for m in last_messages if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last_messages),
            "model_requests": len(MODEL.requests),
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, list(Received.traces))
    write_logs(FOLDER, name, list(Received.logs))


NOTES = (
    "smolagents ToolCallingAgent traced by OpenLIT (openlit.init, OTLP/HTTP); final text "
    "delivered by the model as a final_answer tool call; see NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    TRACER_PROVIDER.shutdown()
    LOGGER_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
