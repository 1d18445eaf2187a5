"""Capture CrewAI (LiteLLM model path) traced by OpenLIT (``openlit.init``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-crewai-openlit
    /tmp/cap-crewai-openlit/bin/pip install crewai litellm openlit \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; \
        /tmp/cap-crewai-openlit/bin/python tests/golden/capture/crewai_openlit.py [scenario ...]'

Captured with crewai 1.15.30, litellm 1.110.2, openai 2.54.0, openlit 1.45.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.1,
opentelemetry-instrumentation(-httpx) 0.66b1, protobuf 7.36.2, Python 3.12.1.
Writes ``tests/golden/traces/crewai-openlit/``.

The crew of ``crewai_crew.py``: one ``Crew`` (sequential process) of one ``Agent`` (role
``music_store_support``) and one ``Task`` whose description is the customer's message,
``@tool`` functions (the refused refund raises inside the tool), one ``crew.kickoff`` per
user turn, multi-turn memory through CrewAI's crew-chat idiom
(``inputs["crew_chat_messages"]``). The model is CrewAI's ``LLM`` forced onto its LiteLLM
path (``is_litellm=True``, model ``openai/scripted-support-model``, ``base_url`` = the
loopback ``scripted_model.ChatCompletions`` server): ``litellm.completion`` with its real
``openai`` client; only the HTTP answers are scripted.

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds, among them
``crewai``, ``litellm``, ``openai`` and OpenTelemetry's ``httpx`` client instrumentor) except
``disable_metrics=True``, ``collect_gpu_stats=False``, ``capture_message_content=True`` and
``pricing_json`` = an empty local file (no price-list download). As in
``openlit_langgraph.py``, our SDK ``TracerProvider`` / ``LoggerProvider`` are set globally
first and OpenLIT reuses them ("Detected existing ..."), so it adds no exporter of its own and
no ``otlp_endpoint`` is given (with a provider reused OpenLIT ignores it for traces). Its GenAI
log events go to our logger provider (``<scenario>.logs.jsonl`` / ``.logs.pb``).
``OTEL_EXPORTER_OTLP*`` / ``OPENLIT_*`` variables are removed; CrewAI's telemetry, tracking,
tracing and version check are off (not ``OTEL_SDK_DISABLED``: OpenLIT needs the SDK); LiteLLM
uses its bundled model-cost map and sends no telemetry. OpenLIT's CrewAI instrumentor has no
session/conversation id mechanism (none documented, none in its code), so ``multi_turn``
carries no session id on its spans and its labels say ``session_id: null`` (as
``crewai-traceloop``): three unrelated traces.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENLIT_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in (
    "OTEL_TRACES_EXPORTER",
    "OTEL_LOGS_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_SDK_DISABLED",
):
    os.environ.pop(_name, None)
CREWAI_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",  # CrewAI's anonymous telemetry (its own provider)
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",  # CrewAI AMP tracing, and its first-run prompt
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # no PyPI look-up from the console formatter
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # LiteLLM: no cost-map download
    "LITELLM_TELEMETRY": "False",
}
os.environ.update(CREWAI_ENV)

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-crewai-openlit"
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

import litellm  # noqa: E402
from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.events.event_bus import crewai_event_bus  # noqa: E402
from crewai.tools import tool  # noqa: E402

# LiteLLM does not know the scripted model: declare it (LiteLLM's documented register_model)
# as an OpenAI chat model with function calling, else CrewAI takes its text ReAct loop.
litellm.register_model(
    {
        f"openai/{common.MODEL_NAME}": {
            "litellm_provider": "openai",
            "mode": "chat",
            "supports_function_calling": True,
            "supports_parallel_function_calling": True,
            "max_tokens": 8192,
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
        }
    }
)

FOLDER = common.TRACES / "crewai-openlit"
PACKAGES = (
    "crewai",
    "litellm",
    "openai",
    "openlit",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-instrumentation-httpx",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)
TASK_DESCRIPTION = "{customer_message}"
EXPECTED_OUTPUT = "The reply to send to the customer."

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


def scripted_llm() -> LLM:
    """CrewAI's ``LLM`` on its LiteLLM path, pointed at the scripted server."""
    return LLM(
        model=f"openai/{common.MODEL_NAME}",
        is_litellm=True,
        api_key="sk-offline",
        base_url=BASE_URL,
        max_retries=0,
    )


@tool("lookup_track")
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tool("lookup_album")
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tool("lookup_artist")
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool("lookup_invoice")
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool("refund")
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_crew() -> Crew:
    agent = Agent(
        role=common.AGENT_NAME,
        goal="Answer the customers of the Tunes & Co music store and settle their requests.",
        backstory=common.SYSTEM_PROMPT,
        llm=scripted_llm(),
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        allow_delegation=False,
        verbose=False,
    )
    task = Task(description=TASK_DESCRIPTION, expected_output=EXPECTED_OUTPUT, agent=agent)
    return Crew(
        agents=[agent], tasks=[task], process=Process.sequential, verbose=False, tracing=False
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    # OpenLIT wraps Crew.__init__ (a create_agent span): building the crew is a trace of its
    # own, flushed here as the first batch (a stray trace, no turn's).
    crew = make_crew()
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    history: list[dict[str, str]] = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        inputs: dict[str, Any] = {"customer_message": text}
        if history:  # CrewAI's crew-chat idiom (crewai.utilities.crew_chat)
            inputs["crew_chat_messages"] = json.dumps(history)
        output = crew.kickoff(inputs=inputs)
        assert isinstance(output, CrewOutput)  # not a streaming crew
        finals.append(output.raw or None)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": output.raw}]
        crewai_event_bus.flush()
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    tool_messages_sent = [
        message.get("content")
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=None,  # recorded nowhere (no OpenLIT mechanism for CrewAI), as crewai-traceloop
        extra={"telemetry_env": CREWAI_ENV, "tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "CrewAI Crew (one Agent, one Task, sequential) with CrewAI's LLM on its LiteLLM path "
    "(is_litellm=True) over a scripted loopback Chat Completions server, traced by OpenLIT "
    "(openlit.init reusing the global SDK providers; crewai, litellm, openai and httpx "
    "instrumentors). See NOTES.md of the folder. No session id mechanism in OpenLIT's CrewAI "
    "instrumentation: multi_turn has none on its spans."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
