"""Capture the Google ADK agent of ``adk.py`` traced by the AgentOps SDK (``agentops``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-google-adk-agentops
    /tmp/cap-google-adk-agentops/bin/pip install google-adk==2.13.0 google-genai==2.34.0 \
        agentops opentelemetry-exporter-otlp-proto-common
    # pip resolved OpenTelemetry 1.44.0 / 0.65b0 itself (agentops 0.4.21's exporter needs
    # the private ``_headers`` / ``_session`` of OTLPSpanExporter that 1.45 drops; see
    # openai_agents_agentops.py for the pin if a newer release gets picked).
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-google-adk-agentops/bin/python \
        tests/golden/capture/google_adk_agentops.py [scenario ...]'

Captured with agentops 0.4.21, google-adk 2.13.0, google-genai 2.34.0, opentelemetry-sdk /
-api / -proto / -exporter-otlp-proto-http / -exporter-otlp-proto-common 1.44.0,
opentelemetry-instrumentation / -semantic-conventions 0.65b0, protobuf 7.36.2, wrapt
1.17.3, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/google-adk-agentops/``.

The agent, tools, scripted model and memory are those of ``adk.py``: a real ``LlmAgent``
named ``music_store_support`` with the store's five tools as plain functions (ADK wraps
them in ``FunctionTool``s), ``Runner`` + ``InMemorySessionService``; only the model is
scripted (a ``BaseLlm`` subclass answering from the scenario script). The refused refund
is returned the ADK way, as ``{"status": "error", "error_message": ...}``. The session of
``multi_turn`` is ADK's own (``session_id`` = the scenario's id); one-shot scenarios get a
random ``adk-<scenario>-<hex>`` session, labelled null.

Instrumentation, as AgentOps' Google ADK integration page shows: ``import agentops``, the
ADK imports, then ``agentops.init(...)``; init instruments the already imported
``google.adk`` with AgentOps' ``GooogleAdkInstrumentor`` (it replaces ADK's own tracer by a
no-op one and wraps ADK's agent, LLM-flow, tool and ``telemetry.trace_*`` functions with
its own spans). AgentOps has no content switch: prompts, completions, arguments and
results are always recorded. ``auto_start_session=False`` and one
``agentops.start_trace(...)`` / ``agentops.end_trace(..., "Success")`` per user turn
(AgentOps' documented manual trace control), so that each turn is an OTel trace of its
own; in ``multi_turn`` the documented ``agentops.update_trace_metadata({"session_id":
...})`` inside each turn's trace, with ADK's session id.

Where it goes: AgentOps exports OTLP/HTTP protobuf to ``exporter_endpoint`` with a bearer JWT
it fetches from ``endpoint`` + ``/v3/auth/token`` with the API key; both point at a loopback
server in this process: ``/v1/traces`` is ``received_otlp.receiver``, ``/v3/auth/token`` a
stub answering a fake token (a dummy UUID API key). ``end_trace`` flushes the batch
processor; the ``.jsonl`` keeps the export requests as received. The metrics exporter's
endpoint is fixed (``https://otlp.agentops.ai/v1/metrics``): run in ``unshare -rn`` with only
loopback up, it cannot leave the machine. Every ``OTEL_*`` / ``AGENTOPS_*`` / ``GOOGLE_*`` /
``ADK_*`` variable is removed first; ``AGENTOPS_LOGGING_TO_FILE=false`` (else
``./agentops.log``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "AGENTOPS_", "GOOGLE_", "ADK_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but the loopback server
AGENTOPS_ENV = {"AGENTOPS_LOGGING_TO_FILE": "false"}  # else it writes ./agentops.log
os.environ.update(AGENTOPS_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "google-adk-agentops"
TRACE_NAME = "music_store_support_turn"
PACKAGES = (
    "agentops",
    "google-adk",
    "google-genai",
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


SERVER = scripted_model.LoopbackServer(
    {received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export), r"/v3/auth/token": _auth}
)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

# As AgentOps' Google ADK page shows: import agentops and ADK, then agentops.init().
import agentops  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

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


class ScriptedModel(BaseLlm):
    """Answers each request with the scenario script's next response (as ``adk.py``)."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        calls, final = _script().next_response()
        if final is not None:
            parts = [types.Part(text=final)]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
                for call_id, name, args in calls
            ]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=50 + 10 * len(llm_request.contents),
                candidates_token_count=12,
                total_token_count=62 + 10 * len(llm_request.contents),
            ),
            finish_reason=types.FinishReason.STOP,
        )


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
    try:
        return dict(
            _script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)
        )
    except common.StoreError as exc:  # ADK's idiom: report the failure in the result
        return {"status": "error", "error_message": str(exc)}


NOTES = (
    "Google ADK LlmAgent (scripted BaseLlm, InMemorySessionService) traced by the AgentOps "
    "SDK: agentops.init(auto_start_session=False, endpoint and exporter_endpoint on a "
    "loopback server with a stub /v3/auth/token) after ADK is imported, so AgentOps' "
    "Google ADK instrumentor replaces ADK's own tracer and wraps its agent, LLM and tool "
    "calls; one agentops.start_trace / end_trace per user turn; OTLP/HTTP protobuf to a "
    "loopback receiver. The refused refund is returned as {'status': 'error', "
    "'error_message': ...}. multi_turn: ADK's session and "
    "agentops.update_trace_metadata({'session_id': ...}) in each turn; see NOTES.md"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "adk")
    agent = LlmAgent(
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        model=ScriptedModel(model=common.MODEL_NAME),
        instruction=common.SYSTEM_PROMPT,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name="music_store", agent=agent, session_service=sessions)
    session_id = scenario.session_id or f"adk-{name}-{uuid.uuid4().hex[:8]}"
    await sessions.create_session(
        app_name="music_store", user_id="customer-17", session_id=session_id
    )
    assert agentops_tracer.provider is not None
    agentops_tracer.provider.force_flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        trace = agentops.start_trace(TRACE_NAME)
        if scenario.session_id is not None:
            agentops.update_trace_metadata({"session_id": session_id})
        final: str | None = None
        async for event in runner.run_async(
            user_id="customer-17",
            session_id=session_id,
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        ):
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(part.text or "" for part in event.content.parts) or final
        agentops.end_trace(trace, "Success")  # flushes the batch processor
        finals.append(final)
        agentops_tracer.provider.force_flush()  # nothing may lag behind the trace's end
        turn_traces.extend(
            t for t in received_otlp.ids_of(Received.requests[before:]) if t not in turn_traces
        )
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
        extra={
            "agentops_env": AGENTOPS_ENV,
            "agentops_init": {k: v for k, v in AGENTOPS_INIT.items() if k != "api_key"},
            "auth_requests": len(Received.auth),
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            asyncio.run(run(name))
    finally:
        SERVER.shutdown()


if __name__ == "__main__":
    main()
