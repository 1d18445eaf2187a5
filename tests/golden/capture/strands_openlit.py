"""Capture the Strands Agents ``Agent`` of ``strands_mlflow.py`` traced by OpenLIT.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-strands-openlit
    /tmp/cap-strands-openlit/bin/pip install strands-agents==1.62.0 \
        'strands-agents[openai]==1.62.0' openlit==1.45.0 openai==2.54.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1 \
        opentelemetry-exporter-otlp-proto-common==1.45.1 opentelemetry-instrumentation==0.66b1
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-strands-openlit/bin/python \
        tests/golden/capture/strands_openlit.py [scenario ...]'

(pins as ``smolagents_openlit.py``'s, so that pip does not backtrack.) Captured with
strands-agents 1.62.0, openlit 1.45.0, openai 2.54.0, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-common / -exporter-otlp-proto-http 1.45.1,
opentelemetry-instrumentation(-httpx) 0.66b1, protobuf 7.36.2 (Python 3.12.1), in a network
namespace with only loopback up. Writes ``tests/golden/traces/strands-openlit/``.

The agent is that of ``strands_mlflow.py``: a real Strands ``Agent(name="music_store_support")``
with the store's system prompt and the five store tools as ``@tool`` functions (Strands'
default concurrent tool executor), and Strands' ``OpenAIModel`` (the real ``openai`` client,
``client_args={"base_url": ...}``, ``stream=False``: the scripted server answers only
non-streaming requests) against the scripted Chat Completions route of a loopback server in
this process (``scripted_model.ChatCompletions``). The refused refund raises inside the tool;
Strands turns it into an error ``ToolResult`` and the model sees ``Error: ...``. Multi-turn
memory: the same ``Agent`` is invoked once per user turn (``invoke_async``). ``multi_turn``
gives the agent Strands' documented session attribute, ``trace_attributes={"session.id":
...}`` (OpenLIT has no session mechanism of its own); the one-shot scenarios set none.

Instrumentation: OpenLIT as its docs show, ``openlit.init(otlp_endpoint=<loopback>,
service_name=..., environment=..., capture_message_content=True, disable_metrics=True,
collect_gpu_stats=False, pricing_json=<an empty local file>)`` (without ``pricing_json`` it
downloads its price list from GitHub) with no tracer or logger provider set before: OpenLIT
builds its own ``TracerProvider`` (``BatchSpanProcessor`` + OTLP/HTTP protobuf exporter) and
``LoggerProvider`` (OTLP/HTTP log exporter), sets both as the global providers, and sends
both to the loopback server of this process (``/v1/traces``, ``/v1/logs``), which keeps each
export request as it came. Every instrumentor it finds and can import is on. OpenLIT's
``strands`` instrumentor (``openlit.instrumentation.strands``, a span processor meant to
enrich Strands' own spans) **cannot be imported** in openlit 1.45.0 (nor in 1.40.0, 1.42.0,
1.43.0, 1.44.0, checked): its ``processor.py`` imports ``truncate_content`` and
``truncate_message_content`` from its ``utils.py``, which defines neither;
``get_instrumentor_class`` swallows the ImportError and ``init`` skips it without a word.
What a user gets, and what is captured: Strands' own
tracer (which always traces to the global provider; ``StrandsTelemetry`` is not set up)
exports its native ``invoke_agent`` / ``execute_event_loop_cycle`` / ``chat`` /
``execute_tool`` spans through OpenLIT's global provider, unenriched, and OpenLIT's
``openai`` instrumentor (never told to stand aside, since the Strands processor that would
tell it is missing) records each model call again as a ``CLIENT`` span under Strands'
``chat``, with OpenTelemetry's ``httpx`` ``POST`` span under it. Both providers are
flushed after each turn. ``OTEL_*`` exporter variables, ``OPENLIT_*``, ``STRANDS_*``,
``OPENAI_*`` and ``AWS_*`` are unset first.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_EXPORTER_OTLP", "OPENLIT_", "OPENAI_", "STRANDS_", "AWS_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
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

SERVICE = "music-store-support-strands-openlit"
FOLDER = common.TRACES / "strands-openlit"
PACKAGES = (
    "strands-agents",
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


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
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

from strands import Agent, tool  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402

_script = common.active_script


@tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name: The exact track name.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title.

    Args:
        album_title: The album title.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name: The artist's name.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id: The customer's id.
        invoice_id: The invoice id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice.

    Args:
        invoice_id: The invoice id.
        track_id: The track to refund.
        reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]


def make_agent(session: str | None) -> Agent:
    model = OpenAIModel(
        client_args={"base_url": BASE_URL, "api_key": "sk-offline", "max_retries": 0},
        model_id=common.MODEL_NAME,
        stream=False,
    )
    return Agent(
        model=model,
        name=common.AGENT_NAME,
        system_prompt=common.SYSTEM_PROMPT,
        tools=TOOLS,
        trace_attributes={"session.id": session} if session else None,
        callback_handler=None,
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


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    agent = make_agent(session)
    _flush()
    Received.traces.clear()
    Received.logs.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = set(received_otlp.ids_of(Received.traces))
        result = await agent.invoke_async(text)
        content = result.message.get("content", [])
        finals.append("".join(block.get("text", "") for block in content) or None)
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
        session_id=session,
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
    "Strands Agents Agent (OpenAIModel, stream=False, over a scripted loopback Chat Completions "
    "server) traced by OpenLIT (openlit.init, OTLP/HTTP; its strands instrumentor fails to "
    "import in openlit 1.45.0, so Strands' own spans reach OpenLIT's global provider "
    "unenriched, beside OpenLIT's openai and httpx spans; no StrandsTelemetry); "
    "refund raises -> error ToolResult; multi_turn: the same Agent with "
    "trace_attributes={'session.id': ...}; see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    TRACER_PROVIDER.shutdown()
    LOGGER_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
