"""Capture a CAMEL-AI ``ChatAgent`` traced by the AgentOps SDK (``agentops``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-camel-ai-agentops
    /tmp/cap-camel-ai-agentops/bin/pip install camel-ai agentops
    # camel-ai 0.2.90 imports mcp.server.FastMCP, gone in mcp 2.x (which pip picks)
    /tmp/cap-camel-ai-agentops/bin/pip install "mcp<2"
    # agentops 0.4.21's exporter subclasses OTLPSpanExporter and reads its private
    # ``_headers`` / ``_session``, gone in opentelemetry-exporter-otlp-proto-http 1.45:
    # pin the last OpenTelemetry release that has them (as agno_agentops.py does).
    /tmp/cap-camel-ai-agentops/bin/pip install opentelemetry-api==1.44.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0 \
        opentelemetry-exporter-otlp-proto-common==1.44.0 opentelemetry-proto==1.44.0 \
        opentelemetry-instrumentation==0.65b0 opentelemetry-semantic-conventions==0.65b0
    /tmp/cap-camel-ai-agentops/bin/pip uninstall -y opentelemetry-exporter-otlp-common \
        opentelemetry-exporter-http-transport  # 1.45-only helpers, left behind by the pin
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-camel-ai-agentops/bin/python \
        tests/golden/capture/camel_ai_agentops.py [scenario ...]'

Captured with camel-ai 0.2.90, agentops 0.4.21, openai 3.57.0 (its HTTP client httpx2
2.16.2), opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-http /
-exporter-otlp-proto-common 1.44.0, opentelemetry-instrumentation / -semantic-conventions
0.65b0, protobuf 7.36.2, wrapt 1.17.3, mcp 1.30.0, Python 3.12.1, in a network namespace
with only loopback up. Writes ``tests/golden/traces/camel-ai-agentops/``.

The agent: a real ``camel.agents.ChatAgent`` whose system message is a ``BaseMessage`` with
``role_name="music_store_support"`` (CAMEL's only agent name; ``agent_id`` is set to the
same) and the store's system prompt as content, the five store tools as CAMEL
``FunctionTool``s built from plain Python functions (CAMEL derives each schema from the
signature and the Google-style docstring: common's descriptions), and its model
``ModelFactory.create(model_platform=ModelPlatformType.OPENAI_COMPATIBLE_MODEL,
model_type="scripted-support-model", url=<scripted Chat Completions server>, api_key=...)``
(CAMEL's ``OpenAICompatibleModel``, a real ``openai.OpenAI`` client) against the scripted
Chat Completions endpoint of a loopback server in this process, with a character-count
``token_counter`` (CAMEL's default, tiktoken's ``o200k_base``, is downloaded on first use;
it only sizes the memory window). One ``agent.step(text)``
per user turn: CAMEL runs the calls of one response one after another (its sync step), so
``parallel_calls`` is two calls of one response, run in order. The refused refund raises
inside the tool; CAMEL catches it and sends ``"Tool execution failed: Error executing tool
'refund': Execution of function refund failed with kwargs={...}. Error:
RefundWindowExpired: ..."`` to the model as the tool message. ``multi_turn`` is
the same ChatAgent for every turn (its ``ChatHistoryMemory``); CAMEL has no session id, so
the session is only AgentOps' documented ``update_trace_metadata({"session_id": ...})``.

Instrumentation, as CAMEL's "Track CAMEL Agents with AgentOps" cookbook and AgentOps' CAMEL
integration page show: ``import agentops``, ``agentops.init(api_key=...)``, then the CAMEL
imports. ``AGENTOPS_API_KEY`` is *not* set in the environment: set, it makes CAMEL take AgentOps'
v0.3 hooks (``track_agent``, and ``ToolEvent`` / ``record`` around every toolkit method by
its ``AgentOpsMeta``), and with agentops 0.4.21, whose ``ToolEvent`` returns None,
``import camel.agents`` fails (``'NoneType' object has no attribute 'returns'``).
AgentOps has no CAMEL instrumentor; ``init`` instruments the ``openai`` client (its
OpenAI instrumentation stays on: no "agentic library" it knows is imported). AgentOps has
no content switch: what it records it always records. ``auto_start_session=False`` and one
``agentops.start_trace(...)`` / ``agentops.end_trace(..., "Success")`` per user turn
(AgentOps' documented manual trace control: a trace *is* its session), so that each turn is
an OTel trace of its own.

Where it goes: AgentOps exports OTLP/HTTP protobuf to ``exporter_endpoint`` with a bearer JWT
it fetches from ``endpoint`` + ``/v3/auth/token`` with the API key; both point at the same
loopback server as the model: ``/v1/traces`` is ``received_otlp.receiver``,
``/v3/auth/token`` a stub answering a fake token (a dummy UUID API key). ``end_trace``
flushes the batch processor; the ``.jsonl`` keeps the export requests as received. The
metrics exporter's endpoint is fixed (``https://otlp.agentops.ai/v1/metrics``): run in
``unshare -rn`` with only loopback up, it cannot leave the machine. Every ``OTEL_*`` /
``AGENTOPS_*`` / ``OPENAI_*`` / ``CAMEL_*`` variable is removed first;
``AGENTOPS_LOGGING_TO_FILE=false`` (else ``./agentops.log``).
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "AGENTOPS_", "OPENAI_", "CAMEL_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
API_KEY = str(uuid.UUID(int=0x0FF11E))  # a dummy key of the documented UUID shape
AGENTOPS_ENV = {
    "AGENTOPS_LOGGING_TO_FILE": "false",  # else it writes ./agentops.log
}
os.environ.update(AGENTOPS_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "camel-ai-agentops"
TRACE_NAME = "music_store_support_turn"
PACKAGES = (
    "camel-ai",
    "agentops",
    "openai",
    "httpx2",
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

AGENTOPS_INIT = {
    "api_key": API_KEY,
    "endpoint": SERVER.url,
    "exporter_endpoint": f"{SERVER.url}{received_otlp.TRACES_PATH}",
    "auto_start_session": False,  # one trace per user turn, started below
    "export_flush_interval": 60_000,  # export when a trace ends (end_trace flushes)
    "log_level": "WARNING",
}
agentops.init(**AGENTOPS_INIT)

from agentops.sdk.core import tracer as agentops_tracer  # noqa: E402
from camel.agents import ChatAgent  # noqa: E402
from camel.messages import BaseMessage  # noqa: E402
from camel.models import ModelFactory  # noqa: E402
from camel.toolkits import FunctionTool  # noqa: E402
from camel.types import ModelPlatformType  # noqa: E402
from camel.utils import BaseTokenCounter  # noqa: E402

_script = common.active_script


def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name (str): The exact track name.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title.

    Args:
        album_title (str): The album title.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name (str): The artist's name.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id (int): The customer's id.
        invoice_id (int): The invoice id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice.

    Args:
        invoice_id (int): The invoice id.
        track_id (int): The track to refund.
        reason (str): Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


class OfflineTokenCounter(BaseTokenCounter):
    """A token counter that needs no download (CAMEL's default for an OpenAI-compatible
    model is tiktoken's ``o200k_base``, fetched from the internet on first use)."""

    def count_tokens_from_messages(self, messages: list[Any]) -> int:
        return sum(4 + len(str(message.get("content") or "")) // 4 for message in messages)

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, token_ids: list[int]) -> str:
        return "".join(chr(t) for t in token_ids)


def make_agent() -> ChatAgent:
    model = ModelFactory.create(
        model_platform=ModelPlatformType.OPENAI_COMPATIBLE_MODEL,
        model_type=common.MODEL_NAME,
        url=BASE_URL,
        api_key="sk-offline",
        token_counter=OfflineTokenCounter(),
    )
    system = BaseMessage.make_assistant_message(
        role_name=common.AGENT_NAME, content=common.SYSTEM_PROMPT
    )
    tools = [lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]
    return ChatAgent(
        system_message=system,
        model=model,
        tools=[FunctionTool(func) for func in tools],
        agent_id=common.AGENT_NAME,
    )


NOTES = (
    "CAMEL-AI ChatAgent (system message role_name music_store_support, five FunctionTools, "
    "ModelFactory OPENAI_COMPATIBLE_MODEL over a scripted loopback Chat Completions server), "
    "one agent.step per user turn, traced by the AgentOps SDK: AGENTOPS_API_KEY set, "
    "agentops.init(auto_start_session=False, endpoint and exporter_endpoint on the same "
    "loopback server with a stub /v3/auth/token) before the CAMEL imports (AgentOps' OpenAI "
    "client instrumentation; no CAMEL instrumentor exists); one agentops.start_trace / "
    "end_trace per user turn; OTLP/HTTP protobuf to a loopback receiver. multi_turn: the same "
    "ChatAgent (its memory) and agentops.update_trace_metadata({'session_id': ...}) in each "
    "turn; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    session_id = scenario.session_id
    assert agentops_tracer.provider is not None
    agentops_tracer.provider.force_flush()
    Received.requests = []
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        trace = agentops.start_trace(TRACE_NAME)
        if session_id is not None:
            agentops.update_trace_metadata({"session_id": session_id})
        response = agent.step(text)
        agentops.end_trace(trace, "Success")  # flushes the batch processor
        if response.terminated:
            run_errors.append(f"turn {turn}: terminated {response.info.get('termination_reasons')}")
        finals.append(response.msgs[0].content if response.msgs else None)
        agentops_tracer.provider.force_flush()  # nothing may lag behind the trace's end
        turn_traces.extend(
            t for t in received_otlp.ids_of(Received.requests[before:]) if t not in turn_traces
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
        run_errors=run_errors,
        extra={
            "agentops_env": {k: v for k, v in AGENTOPS_ENV.items() if k != "AGENTOPS_API_KEY"},
            "agentops_init": {k: v for k, v in AGENTOPS_INIT.items() if k != "api_key"},
            "auth_requests": len(Received.auth),
            "tool_messages_in_last_request": tool_messages_sent,
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        SERVER.shutdown()


if __name__ == "__main__":
    main()
