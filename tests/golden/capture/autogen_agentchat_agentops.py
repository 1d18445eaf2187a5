"""Capture the AutoGen AgentChat ``AssistantAgent`` of ``autogen_agentchat_openinference.py``
traced by the AgentOps SDK (``agentops``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-autogen-agentchat-agentops
    /tmp/cap-autogen-agentchat-agentops/bin/pip install agentops "autogen-agentchat==0.7.5" \
        "autogen-core==0.7.5" "autogen-ext[openai]==0.7.5" \
        opentelemetry-exporter-otlp-proto-common
    # agentops 0.4.21's exporter subclasses OTLPSpanExporter and reads its private
    # ``_headers`` / ``_session``, gone in opentelemetry-exporter-otlp-proto-http 1.45:
    # pin the last OpenTelemetry release that has them (as ag2_agentops.py does).
    /tmp/cap-autogen-agentchat-agentops/bin/pip install opentelemetry-api==1.44.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0 \
        opentelemetry-exporter-otlp-proto-common==1.44.0 opentelemetry-proto==1.44.0 \
        opentelemetry-instrumentation==0.65b0 opentelemetry-semantic-conventions==0.65b0
    /tmp/cap-autogen-agentchat-agentops/bin/pip uninstall -y \
        opentelemetry-exporter-otlp-common opentelemetry-exporter-http-transport
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-autogen-agentchat-agentops/bin/python \
        tests/golden/capture/autogen_agentchat_agentops.py [scenario ...]'

Captured with agentops 0.4.21, autogen-agentchat / autogen-core / autogen-ext 0.7.5, openai
3.57.0, opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-http /
-exporter-otlp-proto-common 1.44.0, opentelemetry-instrumentation / -semantic-conventions
0.65b0, protobuf 5.29.6, wrapt 1.17.3, Python 3.12.1, in a network namespace with only
loopback up. Writes ``tests/golden/traces/autogen-agentchat-agentops/``.

The agent is that of ``autogen_agentchat_openinference.py``: a real ``AssistantAgent`` named
``music_store_support`` with plain functions as tools (``FunctionTool`` through its
``StaticWorkbench``), ``max_tool_iterations=10``, ``reflect_on_tool_use=True``, and
``OpenAIChatCompletionClient`` (real ``openai.AsyncOpenAI``, ``max_retries=0``) against the
scripted Chat Completions endpoint of a loopback server in this process. One ``await
agent.run(task=text)`` per user turn; ``multi_turn``: one agent instance for the three turns
(AgentChat has no session id of its own).

Instrumentation, as AgentOps' AutoGen page shows (``agentops.init()`` before the agents are
made) and as ``ag2_agentops.py`` sets it up: ``import agentops``, the AutoGen imports, then
``agentops.init(api_key=<dummy UUID>, endpoint=<loopback>, exporter_endpoint=<loopback>,
auto_start_session=False)``. agentops 0.4.21 has NO instrumentor for AutoGen AgentChat
(``autogen_agentchat`` / ``autogen_core``): its ``autogen`` entry is the AG2 instrumentor,
keyed on the ``autogen`` module, which AgentChat does not import; an AgentChat
instrumentation exists only on an unmerged branch of AgentOps' repository
(``agentops/instrumentation/agentic/autogen``, branch ``autogen_instrumentation``), in no
release. So, no agentic library being detected, ``init`` turns on AgentOps' own OpenAI
client instrumentation (``agentops.instrumentation.providers.openai``), and, since
``init`` sets AgentOps' tracer provider as the global one, AutoGen's own GenAI spans
(tracers ``autogen-core`` / ``autogen-agentchat``: ``create_agent``, ``invoke_agent``,
``execute_tool``) go to it too. AgentOps has no content switch (what it records it always
records); AutoGen's own spans record no content. One ``agentops.start_trace(...)`` /
``agentops.end_trace(..., "Success")`` per user turn (AgentOps' documented manual trace
control), so each turn is an OTel trace of its own; in ``multi_turn`` the documented
``agentops.update_trace_metadata({"session_id": ...})`` inside each turn's trace with the
scenario's session id (the application's).

Where it goes: AgentOps exports OTLP/HTTP protobuf to ``exporter_endpoint`` with a bearer
JWT fetched from ``endpoint`` + ``/v3/auth/token``; both point at the loopback server of the
model (``/v1/traces`` is ``received_otlp.receiver``, ``/v3/auth/token`` a stub answering a
fake token; a dummy UUID API key). ``end_trace`` flushes the batch processor; the ``.jsonl``
keeps the export requests as received. The metrics exporter's endpoint is fixed
(``https://otlp.agentops.ai/v1/metrics``): run in ``unshare -rn`` with only loopback up.
Every ``OTEL_*`` / ``AGENTOPS_*`` / ``OPENAI_*`` variable is removed first;
``AGENTOPS_LOGGING_TO_FILE=false``. The script name cannot shadow ``autogen_agentchat`` or
``agentops``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "AGENTOPS_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
AGENTOPS_ENV = {"AGENTOPS_LOGGING_TO_FILE": "false"}  # else it writes ./agentops.log
os.environ.update(AGENTOPS_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "autogen-agentchat-agentops"
TRACE_NAME = "music_store_support_turn"
PACKAGES = (
    "agentops",
    "autogen-agentchat",
    "autogen-core",
    "autogen-ext",
    "openai",
    "opentelemetry-instrumentation",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-semantic-conventions",
    "protobuf",
    "wrapt",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()
    auth: ClassVar[list[Any]] = []


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


def _auth(request: scripted_model.Request) -> scripted_model.Reply:
    Received.auth.append(request.json())
    return scripted_model.Reply.json(
        {"token": "offline-jwt-token", "project_id": "offline-project"}
    )


MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = scripted_model.LoopbackServer(
    {
        MODEL.PATH: MODEL,
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        r"/v3/auth/token": _auth,
    }
)
BASE_URL = f"{SERVER.url}/v1"
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

import agentops  # noqa: E402
from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.base import TaskResult  # noqa: E402
from autogen_agentchat.messages import TextMessage  # noqa: E402
from autogen_core.models import ModelInfo  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402

AGENTOPS_INIT = {
    "api_key": str(uuid.UUID(int=0x0FF11E)),  # a dummy key of the documented UUID shape
    "endpoint": SERVER.url,
    "exporter_endpoint": f"{SERVER.url}{received_otlp.TRACES_PATH}",
    "auto_start_session": False,  # one trace per user turn, started below
    "export_flush_interval": 60_000,  # export when a trace ends (end_trace flushes)
    "log_level": "WARNING",
}
agentops.init(**AGENTOPS_INIT)

from agentops.sdk.core import tracer as agentops_tracer  # noqa: E402

_script = common.active_script


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


NOTES = (
    "AutoGen AgentChat AssistantAgent music_store_support (max_tool_iterations=10, "
    "reflect_on_tool_use=True) + OpenAIChatCompletionClient over a scripted loopback Chat "
    "Completions server, traced by the AgentOps SDK: agentops.init(auto_start_session=False, "
    "endpoint and exporter_endpoint on the same loopback server with a stub /v3/auth/token) "
    "after the AutoGen imports; agentops 0.4.21 has no AgentChat instrumentor, so it "
    "instruments the openai client, and AutoGen's own GenAI spans reach AgentOps' global "
    "provider; one agentops.start_trace / end_trace per user turn; OTLP/HTTP protobuf to a "
    "loopback receiver. multi_turn: one agent for three turns and "
    "agentops.update_trace_metadata({'session_id': ...}) in each turn; see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    assert agentops_tracer.provider is not None
    agentops_tracer.provider.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    # AutoGen's ``create_agent`` span is emitted when the agent is built, outside any
    # AgentOps trace: a trace of its own, kept in the files (``stray_traces``).
    agent, client = make_agent()
    agentops_tracer.provider.force_flush()
    construction = received_otlp.ids_of(Received.requests)
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        trace = agentops.start_trace(TRACE_NAME)
        if session_id is not None:
            agentops.update_trace_metadata({"session_id": session_id})
        result = await agent.run(task=text)
        # AssistantAgent.on_messages returns at the Response without exhausting
        # on_messages_stream; let the loop finalize the suspended generator (and end what
        # it holds open) before the trace ends, as any live application's loop would.
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        agentops.end_trace(trace, "Success")  # flushes the batch processor
        finals.append(final_text(result))
        agentops_tracer.provider.force_flush()  # nothing may lag behind the trace's end
        turn_traces.extend(
            t
            for t in received_otlp.ids_of(Received.requests[before:])
            if t not in turn_traces and t not in construction
        )
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    tool_messages_sent = [
        message.get("content")
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
        session_id=session_id,
        tool_error_contains="RefundWindowExpired",
        extra={
            "agentops_env": AGENTOPS_ENV,
            "agentops_init": {k: v for k, v in AGENTOPS_INIT.items() if k != "api_key"},
            "auth_requests": len(Received.auth),
            "tool_messages_in_last_request": tool_messages_sent,
            "model_requests": len(MODEL.requests),
        },
    )
    common.check_labels(capture)
    await agent.close()
    await client.close()
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
    finally:
        SERVER.shutdown()


if __name__ == "__main__":
    main()
