"""Capture AutoGen AgentChat ``AssistantAgent`` traced by ``mlflow.autogen.autolog()`` over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-autogen-agentchat-mlflow
    /tmp/cap-autogen-agentchat-mlflow/bin/pip install autogen-agentchat "autogen-ext[openai]" \
        mlflow opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-autogen-agentchat-mlflow/bin/python \
        tests/golden/capture/autogen_agentchat_mlflow.py [scenario ...]'

Captured with autogen-agentchat / autogen-core / autogen-ext 0.7.5, mlflow / mlflow-skinny /
mlflow-tracing 3.17.2, openai 3.57.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common /
-exporter-otlp-proto-http / -proto 1.45.2 (the exact set is in each ``expected.json``'s
``framework_versions``), Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/autogen-agentchat-mlflow/``. The script name cannot shadow the
``autogen_agentchat`` package.

Same agent as ``autogen_agentchat_openinference.py``: a real ``AssistantAgent`` named
``music_store_support`` with plain functions as tools (``FunctionTool`` through its
``StaticWorkbench``), ``max_tool_iterations=10``, ``reflect_on_tool_use=True``, and
``OpenAIChatCompletionClient`` (real ``openai.AsyncOpenAI``) pointed at the scripted Chat
Completions route of a loopback server in this process; nothing else is faked. One
``await agent.run(task=text)`` per user turn; ``multi_turn``: one agent instance for the three
turns (AutoGen's own model context keeps the conversation), each turn inside
``mlflow.tracing.context(session_id=...)`` (MLflow's documented way to give the traces of a
scope a session); the one-shot scenarios run without session id.

Instrumentation as MLflow's AutoGen page shows: ``mlflow.autogen.autolog()`` after importing the
AutoGen classes, its defaults, no other autolog (MLflow always records span inputs and outputs:
there is no content switch to turn on). It patches ``run`` / ``on_messages`` of each direct
subclass of ``BaseChatAgent`` and ``create`` of every ``ChatCompletionClient`` subclass; it
patches no tool. Export exactly as ``smolagents_mlflow.py``: MLflow's own tracer provider,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the ``received_otlp.receiver`` route of the loopback
server and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so MLflow installs only its
``OtelSpanProcessor`` (no tracking-store processor, no MLflow server; ``MLFLOW_TRACKING_URI`` is
a SQLite file under /tmp that tracing never writes). MLflow's provider is force-flushed after
every user turn. AutoGen's own OTel spans go to the global provider, which stays the no-op
default (MLflow does not set it). ``MLFLOW_DISABLE_TELEMETRY`` / ``DO_NOT_TRACK`` keep usage
telemetry off; every other ``OTEL_*`` / ``MLFLOW_*`` / ... variable is removed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "DATABRICKS_", "OPENAI_", "AUTOGEN_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-autogen-agentchat-mlflow"
FOLDER = common.TRACES / "autogen-agentchat-mlflow"
PACKAGES = (
    "autogen-agentchat",
    "autogen-core",
    "autogen-ext",
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "openai",
    "tiktoken",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
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
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-autogen-capture-"))
os.environ.update(
    {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{SERVER.url}{received_otlp.TRACES_PATH}",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_SERVICE_NAME": SERVICE,
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=acceptance-test",
        "MLFLOW_TRACKING_URI": f"sqlite:///{_STORE / 'mlflow.db'}",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
        "NO_PROXY": "127.0.0.1,localhost",
    }
)

import mlflow  # noqa: E402
import mlflow.autogen  # noqa: E402
import mlflow.tracing.provider  # noqa: E402
from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.base import TaskResult  # noqa: E402
from autogen_agentchat.messages import TextMessage  # noqa: E402
from autogen_core.models import ModelInfo  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402

mlflow.autogen.autolog()  # after importing AutoGen's classes, as MLflow's docs say

_script = common.active_script


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


# Plain functions: AssistantAgent wraps each in a FunctionTool (description = docstring,
# argument schema from the annotations). Sync functions run in the loop's thread pool.
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


MODEL_INFO = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=False,
    family="unknown",
    structured_output=False,
)


def make_agent() -> tuple[AssistantAgent, OpenAIChatCompletionClient]:
    client = OpenAIChatCompletionClient(
        model=common.MODEL_NAME,
        api_key="sk-offline",
        base_url=BASE_URL,
        model_info=MODEL_INFO,
        max_retries=0,
    )
    agent = AssistantAgent(
        name=common.AGENT_NAME,
        model_client=client,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        description="Customer support of the Tunes & Co music store.",
        system_message=common.SYSTEM_PROMPT,
        reflect_on_tool_use=True,
        max_tool_iterations=10,
    )
    return agent, client


def final_text(result: TaskResult) -> str | None:
    last = result.messages[-1] if result.messages else None
    return last.content if isinstance(last, TextMessage) and last.source != "user" else None


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    agent, client = make_agent()
    MODEL.requests.clear()
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        scope = mlflow.tracing.context(session_id=session) if session else contextlib.nullcontext()
        with scope:
            result = await agent.run(task=text)
        finals.append(final_text(result))
        await asyncio.sleep(0)
        _flush()
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    tool_messages_sent = [
        message["content"]
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
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
            "tool_messages_in_last_request": tool_messages_sent,
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(Received.content_types))
            + ") from MLflow's OtelSpanProcessor with opentelemetry-exporter-otlp-proto-http",
        },
    )
    common.check_labels(capture)
    await agent.close()
    await client.close()
    received_otlp.write_scenario(FOLDER, capture, Received.requests)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "AutoGen AgentChat AssistantAgent (max_tool_iterations=10, reflect_on_tool_use=True) + "
    "OpenAIChatCompletionClient over a scripted loopback Chat Completions server, traced by "
    "MLflow Tracing (mlflow.autogen.autolog) on MLflow's own tracer provider, exported by "
    "MLflow's OtelSpanProcessor over OTLP/HTTP protobuf (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to "
    "a loopback receiver (the .jsonl holds each received request); AutoGen's own spans go to the "
    "no-op global provider; multi-turn via one agent instance, each turn inside "
    "mlflow.tracing.context(session_id=...); see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
