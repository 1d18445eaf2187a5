"""Capture pydantic-ai through OpenLIT (``openlit.init``), pydantic-ai's own instrumentation off.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-pai-openlit
    /tmp/cap-pai-openlit/bin/pip install openlit==1.45.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-api==1.45.1 opentelemetry-semantic-conventions==0.66b1 \
        opentelemetry-instrumentation==0.66b1 opentelemetry-exporter-otlp-proto-common==1.45.1
    /tmp/cap-pai-openlit/bin/pip install pydantic-ai==2.62.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-api==1.45.1 opentelemetry-semantic-conventions==0.66b1 \
        opentelemetry-exporter-otlp-proto-common==1.45.1
    unshare -n sh -c 'ip link set lo up; \
        /tmp/cap-pai-openlit/bin/python tests/golden/capture/pydantic_ai_openlit.py [scenario ...]'

Captured with pydantic-ai / pydantic-ai-slim 2.62.0, openai 3.57.0 (httpx2 2.16.2), openlit 1.45.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.1,
opentelemetry-instrumentation(-httpx) 0.66b1, protobuf 7.36.2, Python 3.12.1. Writes
``tests/golden/traces/pydantic-ai-openlit/``.

Versions: OpenLIT's ``PydanticAIInstrumentor`` looks for the distribution ``pydantic-ai`` (the
meta package): with ``pydantic-ai-slim`` alone it instruments nothing (only its openai spans). The
newest meta package installable from the mirror used is 2.62.0 (2.66.0 wants an absent
``pydantic-evals==2.66.0``), which pins slim to 2.62.0 and pulls openai 3.57.0 / anthropic 2.x
over openlit's ``openai<3`` / ``anthropic<1`` pins (pip warns), as in
``openai_agents_openlit.py``. Some of openlit's OTel instrumentation deps exist only up to
0.66b1, which pins the SDK to 1.45.1.

The agent and tools are those of ``pydantic_ai_openinference.py``: a real
``pydantic_ai.Agent`` (name ``music_store_support``, the system prompt as ``instructions``)
with ``@agent.tool_plain`` tools and ``OpenAIChatModel`` over ``OpenAIProvider(base_url=
loopback, api_key=dummy)`` (the real ``openai.AsyncOpenAI`` client) against the loopback
Chat Completions server of ``scripted_model`` in this process. pydantic-ai's OWN
instrumentation is left off (no ``Instrumentation()`` capability, no ``instrument=``, no
``Agent.instrument_all``): only what OpenLIT records. The refused refund raises pydantic-ai's
``ToolFailed`` with the store's message (its idiom for a terminal tool failure reported to
the model).

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds, among them
``pydantic_ai``, ``openai`` and OpenTelemetry's ``httpx`` client instrumentor) except
``disable_metrics=True``, ``collect_gpu_stats=False``, ``capture_message_content=True``, no
``otlp_endpoint``, and ``pricing_json`` = an empty local file (otherwise it downloads its
price list from GitHub). OpenLIT reuses the SDK ``TracerProvider`` / ``LoggerProvider`` set
globally first (it adds no exporter of its own; the script asserts it). Log records go to our
logger provider (``<scenario>.logs.jsonl`` / ``.logs.pb``). ``OPENAI_*``, ``OPENLIT_*`` and
``OTEL_*`` exporter variables are unset and the capture runs in a network namespace with
only loopback up. Session id: OpenLIT documents none for pydantic-ai (its pydantic_ai
instrumentor reads no conversation id); ``multi_turn`` passes ``message_history=
result.all_messages()`` and, as pydantic-ai documents, ``conversation_id=<session id>`` on
the first run (which only pydantic-ai's own instrumentation, off here, would record), so
the labels say ``session_id: null`` (as ``crewai-openlit``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENLIT_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-pydantic-ai-openlit"
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

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.exceptions import ToolFailed  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

FOLDER = common.TRACES / "pydantic-ai-openlit"
PACKAGES = (
    "pydantic-ai",
    "pydantic-ai-slim",
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
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


def _call(tool: str, **args: Any) -> dict[str, Any]:
    try:
        return dict(_script().call(tool, **args))
    except common.StoreError as exc:
        raise ToolFailed(str(exc)) from exc


def make_agent() -> Agent[None, str]:
    provider = OpenAIProvider(base_url=BASE_URL, api_key="sk-offline")
    model = OpenAIChatModel(common.MODEL_NAME, provider=provider)
    agent: Agent[None, str] = Agent(
        model, name=common.AGENT_NAME, instructions=common.SYSTEM_PROMPT
    )

    @agent.tool_plain
    def lookup_track(track_name: str) -> dict[str, Any]:
        """Look up a track in the catalogue by its exact name.

        Args:
            track_name: The exact track name.
        """
        return _call("lookup_track", track_name=track_name)

    @agent.tool_plain
    def lookup_album(album_title: str) -> dict[str, Any]:
        """Look up an album by its title.

        Args:
            album_title: The album title.
        """
        return _call("lookup_album", album_title=album_title)

    @agent.tool_plain
    def lookup_artist(artist_name: str) -> dict[str, Any]:
        """Look up an artist and the albums the store sells by them.

        Args:
            artist_name: The artist's name.
        """
        return _call("lookup_artist", artist_name=artist_name)

    @agent.tool_plain
    def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
        """Fetch an invoice of a customer (lines reference track ids).

        Args:
            customer_id: The customer's id.
            invoice_id: The invoice id.
        """
        return _call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id)

    @agent.tool_plain
    def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
        """Refund one purchased track of an invoice.

        Args:
            invoice_id: The invoice id.
            track_id: The track to refund.
            reason: Why the customer wants the refund.
        """
        return _call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)

    return agent


NOTES = "pydantic-ai Agent (own instrumentation off) + OpenLIT (openlit.init); see NOTES.md."


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    # OpenLIT wraps Agent.__init__: building the agent records a one-span 'create_agent'
    # trace of its own, flushed here as the first batch (a stray trace).
    agent = make_agent()
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    history: list[Any] | None = None
    session = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        try:
            if history is None:
                result = await agent.run(text, conversation_id=session)
            else:
                result = await agent.run(text, message_history=history)
        except Exception as exc:
            run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
            finals.append(None)
        else:
            finals.append(result.output)
            if session:
                history = result.all_messages()
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
        session_id=None,  # recorded nowhere (no OpenLIT mechanism for pydantic-ai)
        run_errors=run_errors,
        extra={
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
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
