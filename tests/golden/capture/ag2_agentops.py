"""Capture the AG2 two-agent chat of ``ag2_otel.py`` traced by the AgentOps SDK (``agentops``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-ag2-agentops
    /tmp/cap-ag2-agentops/bin/pip install agentops "ag2[openai]==0.14.0" \
        opentelemetry-exporter-otlp-proto-common
    # agentops 0.4.21's exporter subclasses OTLPSpanExporter and reads its private
    # ``_headers`` / ``_session``, gone in opentelemetry-exporter-otlp-proto-http 1.45:
    # pin the last OpenTelemetry release that has them (as agno_agentops.py does).
    /tmp/cap-ag2-agentops/bin/pip install opentelemetry-api==1.44.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0 \
        opentelemetry-exporter-otlp-proto-common==1.44.0 opentelemetry-proto==1.44.0 \
        opentelemetry-instrumentation==0.65b0 opentelemetry-semantic-conventions==0.65b0
    /tmp/cap-ag2-agentops/bin/pip uninstall -y opentelemetry-exporter-otlp-common \
        opentelemetry-exporter-http-transport  # 1.45-only helpers, left behind by the pin
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-ag2-agentops/bin/python \
        tests/golden/capture/ag2_agentops.py [scenario ...]'

Captured with agentops 0.4.21, ag2 0.14.0, openai 2.54.0, opentelemetry-sdk / -api / -proto
/ -exporter-otlp-proto-http / -exporter-otlp-proto-common 1.44.0,
opentelemetry-instrumentation / -semantic-conventions 0.65b0, protobuf 7.36.2, wrapt 1.17.3,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/ag2-agentops/``.

The agents, tools and scripted model are those of ``ag2_otel.py``: a real
``autogen.AssistantAgent`` named ``music_store_support`` (the system prompt as
``system_message``) proposing the five tools and a ``UserProxyAgent`` named ``customer``
(``human_input_mode="NEVER"``, no code execution) executing them (``register_function(f,
caller=assistant, executor=customer)``); the model is AG2's ``OpenAIWrapper`` over the real
``openai.OpenAI`` client against the scripted Chat Completions endpoint of a loopback server
in this process (``cache_seed=None``). One ``customer.initiate_chat(assistant,
message=text)`` per user turn, ended by the customer when the assistant answers in text.
The calls of one response run one after the other. The refused refund raises inside the
tool; AG2 catches it and sends ``"Error: <exception>"`` to the model. ``multi_turn``: the
same two agents, turns 2 and 3 with ``clear_history=False`` (AG2 has no session id of its
own).

Instrumentation, as AgentOps' AG2 integration page shows: ``import agentops``, the
``autogen`` imports, then ``agentops.init(...)``; init instruments the imported ``autogen``
with AgentOps' ``AG2Instrumentor`` (it wraps ``ConversableAgent.__init__``,
``initiate_chat``, ``receive``, ``generate_oai_reply``/``_generate_oai_reply_from_client``,
``execute_function``, ``run``, and the group-chat methods) plus its
``ConcurrentFuturesInstrumentor``, and, an agentic library being active, takes its own
OpenAI client instrumentation off again. AgentOps has no content switch: what it records it
always records. ``auto_start_session=False`` and one ``agentops.start_trace(...)`` /
``agentops.end_trace(..., "Success")`` per user turn (AgentOps' documented manual trace
control), so each turn is an OTel trace of its own; in ``multi_turn`` the documented
``agentops.update_trace_metadata({"session_id": ...})`` inside each turn's trace with the
scenario's session id (the application's, AG2 having none).

Where it goes: as in ``agno_agentops.py``, AgentOps exports OTLP/HTTP protobuf to
``exporter_endpoint`` with a bearer JWT fetched from ``endpoint`` + ``/v3/auth/token``; both
point at the loopback server of the model (``/v1/traces`` is ``received_otlp.receiver``,
``/v3/auth/token`` a stub answering a fake token; a dummy UUID API key). ``end_trace``
flushes the batch processor; the ``.jsonl`` keeps the export requests as received. The
metrics exporter's endpoint is fixed (``https://otlp.agentops.ai/v1/metrics``): run in
``unshare -rn`` with only loopback up. Every ``OTEL_*`` / ``AGENTOPS_*`` / ``OPENAI_*``
variable is removed first; ``AGENTOPS_LOGGING_TO_FILE=false``. The script is
``ag2_agentops.py`` (not ``autogen.py``/``agentops.py``, which would shadow the packages).
"""

from __future__ import annotations

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

FOLDER = common.TRACES / "ag2-agentops"
TRACE_NAME = "music_store_support_turn"
PACKAGES = (
    "agentops",
    "ag2",
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
from autogen import (  # noqa: E402
    AssistantAgent,
    LLMConfig,
    UserProxyAgent,
    register_function,
)

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


NOTES = (
    "AG2 AssistantAgent music_store_support + UserProxyAgent customer (register_function), "
    "OpenAIWrapper over a real openai.OpenAI client against a scripted loopback Chat "
    "Completions server, traced by the AgentOps SDK: agentops.init(auto_start_session=False, "
    "endpoint and exporter_endpoint on the same loopback server with a stub /v3/auth/token) "
    "after the autogen imports, so AgentOps' AG2Instrumentor wraps the agents; one "
    "agentops.start_trace / end_trace per user turn; OTLP/HTTP protobuf to a loopback "
    "receiver. multi_turn: clear_history=False on turns 2-3 and "
    "agentops.update_trace_metadata({'session_id': ...}) in each turn; see NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    assistant, customer = make_agents()
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
        result = customer.initiate_chat(
            assistant, message=text, clear_history=(turn == 0), silent=True
        )
        agentops.end_trace(trace, "Success")  # flushes the batch processor
        last = result.chat_history[-1] if result.chat_history else {}
        if last.get("name") != common.AGENT_NAME or not _is_final(last):
            run_errors.append(f"turn {turn}: chat ended on {last!r}")
        content = last.get("content")
        finals.append(content if isinstance(content, str) else None)
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
            "agentops_env": AGENTOPS_ENV,
            "agentops_init": {k: v for k, v in AGENTOPS_INIT.items() if k != "api_key"},
            "auth_requests": len(Received.auth),
            "tool_messages_in_last_request": tool_messages_sent,
            "model_requests": len(MODEL.requests),
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
