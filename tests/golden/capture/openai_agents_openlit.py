"""Capture the OpenAI Agents SDK through OpenLIT (``openlit.init``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-oa-openlit
    /tmp/cap-oa-openlit/bin/pip install openlit==1.45.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-api==1.45.1 opentelemetry-semantic-conventions==0.66b1 \
        opentelemetry-instrumentation==0.66b1 opentelemetry-exporter-otlp-proto-common==1.45.1
    /tmp/cap-oa-openlit/bin/pip install openai-agents==0.24.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-api==1.45.1 opentelemetry-semantic-conventions==0.66b1
    unshare -n sh -c 'ip link set lo up; \
        /tmp/cap-oa-openlit/bin/python tests/golden/capture/openai_agents_openlit.py [scenario ...]'

Captured with openai-agents 0.24.0, openai 3.57.0 (its HTTP client httpx2 2.16.2), openlit
1.45.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.1,
opentelemetry-instrumentation(-httpx) 0.66b1, protobuf 7.36.2, Python 3.12.1. Writes
``tests/golden/traces/openai-agents-openlit/``.

Versions: the newest of both do not co-install by their declared pins. openlit 1.45.0
declares ``openai<3`` and openai-agents 0.24.0 ``openai>=3`` (``pip install openai-agents
openlit`` backtracks to openlit 1.26.0; with openlit 1.45.0 pinned it backtracks to
openai-agents 0.20.0). So openlit 1.45.0 is installed first and openai-agents 0.24.0 second,
which upgrades openai to 3.57.0 over openlit's pin (pip warns). OpenLIT's openai
instrumentor (``openai >= 1.92.0``) patches the same ``AsyncResponses.create`` in openai 3.
And openlit 1.45.0's instrumentation packages exist on PyPI only up to 0.66b1 for some
(falcon, flask, starlette, ...), which pins the SDK to 1.45.1 (1.45.2 wants 0.66b2).

The agent, tools, scripted model and memory are those of ``openai_agents.py``: real
``Agent``/``Runner``, ``@function_tool``s, ``SQLiteSession`` memory for the multi-turn
scenario, and the SDK's default ``OpenAIResponsesModel`` talking to a real ``AsyncOpenAI``
client; only the model is scripted, as Responses-API JSON served by an
``httpx.MockTransport`` (no network). The refused refund raises inside the tool: the SDK's
default failure handler reports it to the model.

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds, among them
``openai_agents``, ``openai`` and OpenTelemetry's ``httpx`` client instrumentor, which
patches ``httpx``, not the ``httpx2`` that openai 3 uses) except ``disable_metrics=True``,
``collect_gpu_stats=False``, ``capture_message_content=True``, no ``otlp_endpoint``, and
``pricing_json`` = an empty local file (otherwise it downloads its price list from GitHub).
OpenLIT reuses the SDK ``TracerProvider`` / ``LoggerProvider`` set globally first (it adds no
exporter of its own). Its ``openai_agents`` instrumentor installs its own SDK
``TracingProcessor`` with ``set_trace_processors([processor])``, which replaces the SDK's
own exporter to OpenAI's trace ingest; ``set_trace_processors([])`` is called before
``openlit.init`` anyway (as ``openai_agents_logfire.py`` does), and afterwards the script
checks that OpenLIT's processor is the only one (calling it after init would remove
OpenLIT's). That processor leaves the SDK's ``response``/``generation`` spans to OpenLIT's
openai instrumentor (LLM spans come from the wrapped ``AsyncResponses.create``). Log
records OpenLIT emits go to our logger provider (``<scenario>.logs.jsonl`` / ``.logs.pb``).
``OPENAI_API_KEY`` and every ``OTEL_*`` exporter / ``OPENLIT_*`` variable are unset and the
capture runs in a network namespace with only loopback up: nothing is sent anywhere.
Session id: the SDK's documented ``RunConfig(group_id=...)`` (a conversation id), which
OpenLIT records as ``gen_ai.conversation.id``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENLIT_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)

import common  # noqa: E402
import common_logs  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

try:  # openai >= 3 ships its HTTP client as httpx2
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

SERVICE = "music-store-support-openai-agents-openlit"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

from agents import (  # noqa: E402
    Agent,
    RunConfig,
    Runner,
    SQLiteSession,
    function_tool,
    set_trace_processors,
)
from agents.models.openai_responses import OpenAIResponsesModel  # noqa: E402
from agents.tracing import get_trace_provider  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

set_trace_processors([])  # the SDK's own exporter to OpenAI's trace ingest: off

import openlit  # noqa: E402

_PRICING = Path(tempfile.mkdtemp(prefix="openlit-pricing-")) / "pricing.json"
_PRICING.write_text("{}", encoding="utf-8")
openlit.init(
    service_name=SERVICE,
    environment="acceptance-test",
    capture_message_content=True,
    disable_metrics=True,
    collect_gpu_stats=False,
    pricing_json=str(_PRICING),
)
assert trace.get_tracer_provider() is PROVIDER, "OpenLIT replaced the tracer provider"
assert _logs.get_logger_provider() is LOG_PROVIDER, "OpenLIT replaced the logger provider"
_SDK_PROCESSORS = get_trace_provider()._multi_processor._processors  # type: ignore[attr-defined]
assert [type(p).__name__ for p in _SDK_PROCESSORS] == ["OpenLITTracingProcessor"], _SDK_PROCESSORS

FOLDER = common.TRACES / "openai-agents-openlit"
WORKFLOW = "music store support turn"
PACKAGES = (
    "openai-agents",
    "openai",
    "httpx2",
    "openlit",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-instrumentation-httpx",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script


def _response(request: httpx.Request) -> httpx.Response:
    """The Responses API answer of the scripted model (``POST /v1/responses``)."""
    body = json.loads(request.content)
    if body.get("stream"):
        return httpx.Response(400, json={"error": {"message": "streaming not scripted"}})
    calls, final = _script().next_response()
    step = _script().step
    if final is not None:
        output: list[dict[str, Any]] = [
            {
                "type": "message",
                "id": f"msg_{_script().turn}{step}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": final, "annotations": []}],
            }
        ]
    else:
        output = [
            {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
            for call_id, name, args in calls
        ]
    prompt_tokens = 50 + 10 * len(body.get("input") or [])
    payload = {
        "id": f"resp_{_script().scenario.name}_{_script().turn}{step}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": common.MODEL_NAME,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "usage": {
            "input_tokens": prompt_tokens,
            "output_tokens": 12,
            "total_tokens": prompt_tokens + 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    return httpx.Response(200, json=payload)


@function_tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@function_tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@function_tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@function_tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@function_tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


NOTES = (
    "OpenAI Agents SDK (OpenAIResponsesModel over a scripted httpx MockTransport) + OpenLIT "
    "(openlit.init reusing the global SDK providers; its openai_agents TracingProcessor, "
    "installed with set_trace_processors([processor]), and its openai instrumentor). Per turn "
    "one trace: 'invoke_workflow music store support turn' (root, the SDK trace) > "
    "'invoke_agent' (no name: the SDK's task span, which OpenLIT does not know) > 'invoke_agent"
    " music_store_support' (the SDK agent span) > one nameless 'invoke_agent' per model step "
    "(the SDK's turn spans) holding 'chat scripted-support-model' (CLIENT, scope "
    "openlit.instrumentation.openai, from the wrapped AsyncResponses.create) and then that "
    "step's 'execute_tool <tool>' spans. No span, attribute or log record carries the user "
    "input as such except the chat spans' gen_ai.input.messages, which hold only the user-role "
    "items of the Responses input (function calls and their outputs dropped; in multi_turn the "
    "earlier turns' user texts, not their answers). Chat spans: output messages with tool_call "
    "parts whose id is the output item id ('fc_call_...'), while gen_ai.tool.call.id is the "
    "call_id ('call_...'); with two function calls in one response only the LAST is recorded "
    "(OpenLIT overwrites its tool list per item): parallel_calls' first chat span shows "
    "lookup_track only, lookup_invoice is lost there. Tool spans: gen_ai.tool.name, "
    "gen_ai.tool.call.arguments (JSON), gen_ai.tool.call.result (str() of the returned dict, a "
    "Python repr), no call id. The refused refund raises; the SDK's default failure handler "
    "reports it to the model: tool span status ERROR 'Error running tool (non-fatal)', "
    "error.type = the same text, result = 'An error occurred while running the tool. Please try"
    " again.' (the real message is lost). One gen_ai.client.inference.operation.details log "
    "record per chat span (same content, structured). Agent construction emits a one-span "
    "'create_agent' trace (stray). multi_turn: SQLiteSession memory and "
    "RunConfig(group_id=session id), recorded as gen_ai.conversation.id on every openai_agents "
    "span (not on chat spans nor log records)"
)


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client = AsyncOpenAI(
        api_key="sk-offline",
        base_url="http://scripted-model.invalid/v1",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(_response)),
        max_retries=0,
    )
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    # OpenLIT wraps Agent.__init__: building the agent records a one-span 'create_agent'
    # trace of its own, flushed here as the first batch (a stray trace, as in an application
    # that builds its agent once).
    agent = Agent(
        name=common.AGENT_NAME,
        instructions=common.SYSTEM_PROMPT,
        model=OpenAIResponsesModel(model=common.MODEL_NAME, openai_client=client),
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    session = SQLiteSession(scenario.session_id) if scenario.session_id else None
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        config = RunConfig(workflow_name=WORKFLOW, group_id=scenario.session_id)
        result = await Runner.run(agent, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    await client.close()
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
        tool_error_contains="Error running tool (non-fatal)",
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()


if __name__ == "__main__":
    main()
