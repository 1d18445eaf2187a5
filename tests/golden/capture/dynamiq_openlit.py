"""Capture a Dynamiq function-calling ``Agent`` through OpenLIT.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-dynamiq-openlit
    /tmp/cap-dynamiq-openlit/bin/pip install dynamiq==0.69.0 openlit==1.45.0 openai==2.54.0 \
        litellm==1.110.2 opentelemetry-sdk==1.45.1 opentelemetry-api==1.45.1 \
        opentelemetry-exporter-otlp==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1 \
        opentelemetry-exporter-otlp-proto-grpc==1.45.1 \
        opentelemetry-exporter-otlp-proto-common==1.45.1 \
        opentelemetry-proto==1.45.1 opentelemetry-instrumentation==0.66b1 \
        opentelemetry-semantic-conventions==0.66b1
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-dynamiq-openlit/bin/python \
        tests/golden/capture/dynamiq_openlit.py [scenario ...]'

(pins given because an unpinned ``pip install dynamiq openlit`` backtracked for minutes.)
Captured with the versions written in each ``<scenario>.expected.json``
(``framework_versions``): dynamiq 0.69.0, openlit 1.45.0, litellm 1.110.2, openai 2.54.0,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-* 1.45.1,
opentelemetry-instrumentation 0.66b1, protobuf 6.33.6 (Python 3.12.1). Writes
``tests/golden/traces/dynamiq-openlit/``.

The agent: a real ``dynamiq.nodes.agents.Agent`` named ``music_store_support``
(``inference_mode=InferenceMode.FUNCTION_CALLING``, the system prompt as its ``role``,
``max_loops=8``, ``parallel_tool_calls_enabled=True``) whose LLM is Dynamiq's own OpenAI
node (``dynamiq.nodes.llms.OpenAI``, model ``scripted-support-model``) with an
``dynamiq.connections.OpenAI`` connection whose ``url`` is the scripted Chat Completions
loopback server; Dynamiq calls the model through LiteLLM's ``completion`` with the
connection's ``openai`` client. The store's five tools are Dynamiq tool nodes
(``FunctionTool`` subclasses, as ``@function_tool`` builds them, with each tool's
description and a pydantic input schema of common's parameters and descriptions).
Dynamiq's function-calling protocol: every tool schema gets a ``thought`` property, and a
run ends only through its ``provide_final_answer`` function (``{thought, answer}``), so
the scripted final text is sent as a ``provide_final_answer`` call ``{"answer": <text>}``;
the scripted tool calls carry the tool's arguments only (``thought`` defaults to "" in
Dynamiq's parser). The refused refund raises inside the tool; Dynamiq's agent turns it into
an observation for the next model call: the tool raises Dynamiq's
``ToolExecutionException(message, recoverable=True)`` (its documented way to let the agent
reiterate; the store's plain ``StoreError`` fails the whole agent run, checked).
Multi-turn memory: Dynamiq's ``Memory`` (in-memory backend) on the agent, each turn run
with ``user_id`` and ``session_id`` in its input.

Instrumentation: OpenLIT as its docs show, ``openlit.init(otlp_endpoint=<loopback>,
service_name=..., environment=..., capture_message_content=True, disable_metrics=True,
collect_gpu_stats=False, pricing_json=<an empty local file>)`` with no provider set before:
OpenLIT builds its own ``TracerProvider`` (``BatchSpanProcessor`` + OTLP/HTTP protobuf
exporter) and ``LoggerProvider`` and sends both to the loopback server of this process
(``/v1/traces``, ``/v1/logs``), which keeps each export request as it came. Every
instrumentor it finds is on, among them ``dynamiq`` (``Agent.run``, ``Workflow.run``,
``Memory.add`` / ``Memory.search``), ``litellm``, ``openai`` and OpenTelemetry's ``httpx``
client instrumentor. Both providers are flushed after each turn. ``OTEL_*`` exporter
variables, ``OPENLIT_*`` and ``OPENAI_*`` are unset first, and the capture runs with only
loopback up.
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
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM's bundled price list, no fetch

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

SERVICE = "music-store-support-dynamiq-openlit"
FOLDER = common.TRACES / "dynamiq-openlit"
PACKAGES = (
    "dynamiq",
    "litellm",
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
    """Chat Completions answer: the script's tool calls, else provide_final_answer(answer)."""
    script = common.active_script()
    calls, final = script.next_response()
    if final is not None:
        calls = [
            (
                f"call_{script.scenario.name[:6]}_{script.turn}{script.step}0",
                "provide_final_answer",
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

from dynamiq.connections import OpenAI as OpenAIConnection  # noqa: E402
from dynamiq.memory import Memory  # noqa: E402
from dynamiq.memory.backends import InMemory  # noqa: E402
from dynamiq.nodes.agents import Agent  # noqa: E402
from dynamiq.nodes.agents.exceptions import ToolExecutionException  # noqa: E402
from dynamiq.nodes.llms import OpenAI  # noqa: E402
from dynamiq.nodes.tools.function_tool import FunctionTool  # noqa: E402
from dynamiq.nodes.types import InferenceMode  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, create_model  # noqa: E402

_TYPES: dict[str, type] = {"string": str, "integer": int}


def _input_schema(tool: str) -> type[BaseModel]:
    """The tool's arguments as a pydantic model (Dynamiq builds the tool schema from it)."""
    fields: dict[str, Any] = {
        name: (_TYPES[spec["type"]], Field(..., description=spec["description"]))
        for name, spec in common.TOOL_PARAMETERS[tool].items()
    }
    model: type[BaseModel] = create_model(
        f"{tool}_input", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def store_tool(tool: str) -> FunctionTool[Any]:
    """A Dynamiq tool node running one of the store's tools (as ``@function_tool`` does)."""

    class StoreTool(FunctionTool[Any]):  # type: ignore[misc]
        name: str = Field(default=tool)
        description: str = Field(default=common.TOOL_DESCRIPTIONS[tool])
        input_schema: ClassVar[type[BaseModel]] = _input_schema(tool)

        def run_func(self, input_data: BaseModel, **kwargs: Any) -> Any:
            try:
                return common.active_script().call(tool, **input_data.model_dump())
            except common.StoreError as exc:
                # Dynamiq's idiom for a failure the agent may recover from: any other
                # exception fails the whole agent run (recoverable=False)
                raise ToolExecutionException(str(exc), recoverable=True) from exc

    StoreTool.__name__ = StoreTool.__qualname__ = tool
    return StoreTool()


TOOL_NAMES = ("lookup_track", "lookup_album", "lookup_artist", "lookup_invoice", "refund")


def make_agent() -> Agent:
    llm = OpenAI(
        model=common.MODEL_NAME,
        connection=OpenAIConnection(api_key="sk-offline", url=BASE_URL),
        temperature=0.0,
        max_tokens=1000,
    )
    return Agent(
        name=common.AGENT_NAME,
        llm=llm,
        tools=[store_tool(t) for t in TOOL_NAMES],
        role=common.SYSTEM_PROMPT,
        inference_mode=InferenceMode.FUNCTION_CALLING,
        parallel_tool_calls_enabled=True,
        max_loops=8,
        memory=Memory(backend=InMemory()),
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
    agent = make_agent()
    _flush()
    session = scenario.session_id
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = set(received_otlp.ids_of(Received.traces))
        inputs: dict[str, Any] = {"input": text}
        if session is not None:
            inputs.update(user_id="customer-17", session_id=session)
        result = agent.run(input_data=inputs)
        if result.status.value != "success":
            run_errors.append(f"turn {turn}: {result.status.value}: {result.error}")
        content = (result.output or {}).get("content")
        finals.append(str(content) if content is not None else None)
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
        run_errors=run_errors,
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
    "Dynamiq function-calling Agent (OpenAI node via LiteLLM) traced by OpenLIT (openlit.init, "
    "OTLP/HTTP); final text delivered by the model as a provide_final_answer call; see NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    TRACER_PROVIDER.shutdown()
    LOGGER_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
