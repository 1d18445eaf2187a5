"""Capture Google ADK (LiteLLM model wrapper) through OpenLIT (``openlit.init``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-adk-openlit
    /tmp/cap-adk-openlit/bin/pip install openlit google-adk litellm \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-adk-openlit/bin/python tests/golden/capture/google_adk_openlit.py [scenario ...]'

Captured with google-adk 2.13.0, google-genai 2.34.0, litellm 1.110.2, openai 2.54.0,
openlit 1.45.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.44.0 (what
google-adk pins), opentelemetry-instrumentation(-httpx) 0.65b0, protobuf 7.36.2, Python
3.12.1. Writes ``tests/golden/traces/google-adk-openlit/``.

The agent is ``adk_openinference.py``'s (real ``LlmAgent`` + ``Runner`` +
``InMemorySessionService`` + plain-function tools; a refused refund is returned the ADK way,
``{"status": "error", "error_message": ...}``), but the model is ADK's LiteLLM wrapper
``LiteLlm(model="openai/scripted-support-model", api_base=<loopback>/v1, api_key=dummy)``:
the real ``litellm.acompletion`` (its OpenAI provider, the real ``openai`` client) against
``scripted_model.ChatCompletions`` in this process. Only the model's answers are scripted.

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds: among them
``google_adk``, ``litellm``, ``openai`` and OpenTelemetry's ``httpx``) except
``disable_metrics=True``, ``collect_gpu_stats=False``, ``capture_message_content=True``, no
``otlp_endpoint``, ``pricing_json`` = an empty local file (else it downloads its price list).
OpenLIT reuses the SDK ``TracerProvider`` / ``LoggerProvider`` set globally first (asserted).
ADK's own tracer is left at its defaults (no ``ADK_*`` / ``OTEL_INSTRUMENTATION_GENAI_*``
variable): its spans go to the same global provider, all recorded. LiteLLM's cost-map
download is off (``LITELLM_LOCAL_MODEL_COST_MAP=True``); ``OPENAI_*``, ``OPENLIT_*``,
``OTEL_EXPORTER_OTLP*`` are unset and the run is in a network namespace with only loopback.
Session id: OpenLIT's ADK instrumentor writes ``Runner.run_async(session_id=...)`` as
``gen_ai.conversation.id``; one-shot scenarios use a random ``adk-<scenario>-<hex>`` ADK
session, labelled ``null`` (as ``google-adk-openinference``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENLIT_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no model-cost download
os.environ["LITELLM_TELEMETRY"] = "False"

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-google-adk-openlit"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

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

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.lite_llm import LiteLlm  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

FOLDER = common.TRACES / "google-adk-openlit"
PACKAGES = (
    "google-adk",
    "google-genai",
    "litellm",
    "openai",
    "httpx",
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
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


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


NOTES = "Google ADK LlmAgent + LiteLlm(openai/...) + OpenLIT (openlit.init); see NOTES.md."


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    # OpenLIT wraps LlmAgent.__init__: a one-span 'create_agent' trace, flushed first.
    agent = LlmAgent(
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        model=LiteLlm(model=f"openai/{common.MODEL_NAME}", api_base=BASE_URL, api_key="sk-offline"),
        instruction=common.SYSTEM_PROMPT,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name="music_store", agent=agent, session_service=sessions)
    session_id = scenario.session_id or f"adk-{name}-{uuid.uuid4().hex[:8]}"
    await sessions.create_session(
        app_name="music_store", user_id="customer-17", session_id=session_id
    )
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        final: str | None = None
        try:
            async for event in runner.run_async(
                user_id="customer-17",
                session_id=session_id,
                new_message=types.Content(role="user", parts=[types.Part(text=text)]),
            ):
                if event.is_final_response() and event.content and event.content.parts:
                    final = "".join(part.text or "" for part in event.content.parts) or final
        except Exception as exc:
            run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
        finals.append(final)
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    last = MODEL.requests[-1].get("messages") if MODEL.requests else []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=scenario.session_id,
        run_errors=run_errors,
        extra={
            "telemetry_env": {
                k: v for k, v in os.environ.items() if k.startswith(("OTEL_", "ADK_"))
            },
            "adk_session_id": session_id,
            "model_requests": len(MODEL.requests),
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
        },
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
    SERVER.shutdown()


if __name__ == "__main__":
    main()
