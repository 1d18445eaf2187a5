"""Capture the AG2 two-agent chat of ``ag2_otel.py`` through OpenLIT (``openlit.init``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-ag2-openlit
    /tmp/cap-ag2-openlit/bin/pip install "ag2[openai]==0.14.0" openlit opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-ag2-openlit/bin/python \
        tests/golden/capture/ag2_openlit.py [scenario ...]'

Captured with ag2 0.14.0 (the last release with the ``autogen`` package), openai 2.54.0
(openlit pins ``openai<3``), openlit 1.45.0, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-common / -exporter-otlp-proto-http 1.45.1,
opentelemetry-instrumentation(-httpx) 0.66b1, protobuf 7.36.2 (Python 3.12.1). Writes
``tests/golden/traces/ag2-openlit/``.

The agents are those of ``ag2_otel.py``: a real ``autogen.AssistantAgent`` named
``music_store_support`` (the system prompt as ``system_message``) proposing the five tools,
and a ``UserProxyAgent`` named ``customer`` (``human_input_mode="NEVER"``, no code
execution) executing them, each tool registered with ``autogen.register_function(f,
caller=assistant, executor=customer)``. The model is AG2's ``OpenAIWrapper`` over the real
``openai.OpenAI`` client (``LLMConfig`` with ``api_type="openai"``, ``base_url`` at the
scripted Chat Completions loopback server, ``cache_seed=None``). One
``customer.initiate_chat(assistant, message=text)`` per user turn; the customer ends the
chat when the assistant answers in text. The calls of one response run one after the
other. The refused refund raises inside the tool; AG2's ``execute_function`` catches it and
sends ``"Error: <exception>"`` to the model. ``multi_turn``: the same two agents, turns 2
and 3 with ``clear_history=False`` (AG2's documented way to continue a chat).

Instrumentation: OpenLIT as its docs show, ``openlit.init(otlp_endpoint=<loopback>,
service_name=..., environment=..., capture_message_content=True, disable_metrics=True,
collect_gpu_stats=False, pricing_json=<an empty local file>)`` (without ``pricing_json`` it
downloads its price list from GitHub) with no tracer or logger provider set before: OpenLIT
builds its own ``TracerProvider`` (``BatchSpanProcessor`` + OTLP/HTTP protobuf exporter) and
``LoggerProvider`` (OTLP/HTTP log exporter) and sends both to the loopback server of this
process (``/v1/traces``, ``/v1/logs``), which keeps each export request as it came. Every
instrumentor it finds is on, among them ``ag2``, ``openai`` and OpenTelemetry's ``httpx``
client instrumentor. Both providers are flushed after each turn (one trace per turn). AG2's
own ``autogen.opentelemetry`` is not used. ``OTEL_*`` exporter variables, ``OPENLIT_*`` and
``OPENAI_*`` are unset first, and the capture runs with only loopback up.
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

SERVICE = "music-store-support-ag2-openlit"
FOLDER = common.TRACES / "ag2-openlit"
PACKAGES = (
    "ag2",
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

from autogen import (  # noqa: E402
    AssistantAgent,
    LLMConfig,
    UserProxyAgent,
    register_function,
)

_script = common.active_script


def lookup_track(track_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund)


def _is_final(message: dict[str, Any]) -> bool:
    """The assistant answered in text (no tool calls): the customer ends the chat."""
    return not message.get("tool_calls") and bool(message.get("content"))


def make_agents() -> tuple[AssistantAgent, UserProxyAgent]:
    llm_config = LLMConfig(
        {
            "api_type": "openai",
            "model": common.MODEL_NAME,
            "api_key": "sk-offline",
            "base_url": BASE_URL,
            "max_retries": 0,
        },
        cache_seed=None,
    )
    assistant = AssistantAgent(
        name=common.AGENT_NAME,
        system_message=common.SYSTEM_PROMPT,
        description="Customer support of the Tunes & Co music store.",
        llm_config=llm_config,
    )
    customer = UserProxyAgent(
        name="customer",
        human_input_mode="NEVER",
        code_execution_config=False,
        is_termination_msg=_is_final,
    )
    for tool in TOOLS:
        register_function(
            tool,
            caller=assistant,
            executor=customer,
            name=tool.__name__,
            description=common.TOOL_DESCRIPTIONS[tool.__name__],
        )
    return assistant, customer


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
    # OpenLIT wraps ConversableAgent.__init__: building the agents records 'create_agent'
    # traces of their own, flushed here before the first turn (stray traces).
    assistant, customer = make_agents()
    _flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    conversation_ids: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = set(received_otlp.ids_of(Received.traces))
        result = customer.initiate_chat(
            assistant, message=text, clear_history=(turn == 0), silent=True
        )
        conversation_ids.append(str(result.chat_id))
        last = result.chat_history[-1] if result.chat_history else {}
        if last.get("name") != common.AGENT_NAME or not _is_final(last):
            run_errors.append(f"turn {turn}: chat ended on {last!r}")
        content = last.get("content")
        finals.append(content if isinstance(content, str) else None)
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
        session_id=None,  # AG2 has no session: a new chat_id per initiate_chat
        run_errors=run_errors,
        extra={
            "chat_ids": conversation_ids,
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


NOTES = "AG2 two-agent chat traced by OpenLIT (openlit.init, OTLP/HTTP); see NOTES.md."


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    TRACER_PROVIDER.shutdown()
    LOGGER_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
