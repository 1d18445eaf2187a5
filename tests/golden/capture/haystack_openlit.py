"""Capture a Haystack ``Agent`` through OpenLIT (``openlit.init``; its ``haystack`` and ``openai``
instrumentors).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-haystack-openlit
    /tmp/cap-haystack-openlit/bin/pip install haystack-ai openai openlit opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-haystack-openlit/bin/python \
        tests/golden/capture/haystack_openlit.py [scenario ...]'

Captured with haystack-ai 3.4.1, openai 2.54.0 (openlit pins ``openai<3``), openlit 1.45.0,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.1,
opentelemetry-instrumentation(-httpx) 0.66b1, protobuf 7.36.2 (Python 3.12.1). Writes
``tests/golden/traces/haystack-openlit/``.

The agent of ``haystack_agent.py``: a real ``haystack.components.agents.Agent`` with
``OpenAIChatGenerator`` (real ``openai.OpenAI`` client) against the scripted Chat Completions
loopback server, tools made with Haystack's ``@tool`` decorator from typed functions, default
``exit_conditions=["text"]``, ``raise_on_tool_invocation_failure=False``; one ``Agent.run``
per user turn, multi-turn memory = the previous ``result["messages"]`` (without the system
message) plus the new user message. The refused refund raises inside the tool; Haystack wraps
it in ``ToolInvocationError`` and sends the model a tool message with ``error=True``.

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds, among them
``haystack``, ``openai`` and OpenTelemetry's ``httpx`` client instrumentor) except
``disable_metrics=True``, ``collect_gpu_stats=False``, ``capture_message_content=True``, no
``otlp_endpoint``, and ``pricing_json`` = an empty local file (otherwise it downloads its price
list from GitHub). OpenLIT reuses the SDK ``TracerProvider`` / ``LoggerProvider`` set globally
first (asserted). OpenLIT's haystack instrumentor (openlit 1.45.0) wraps only ``Pipeline.run``,
``AsyncPipeline.run_async`` and a fixed list of components (``OpenAIChatGenerator.run`` among
them), NOT ``Agent.run`` nor tool invocation: it loads for haystack-ai 3.4.1, but records no
agent and no tool spans, and every model request would be a trace of its own (nothing links
them). Each turn therefore runs inside OpenLIT's documented
``openlit.start_trace("support_turn")`` (as ``llamaindex_openlit.py``): one trace per turn.
Session id: OpenLIT documents none for Haystack (its haystack and openai instrumentors read no
conversation id) and Haystack's ``Agent`` has none, so the labels say ``session_id: null``.
``OTEL_EXPORTER_OTLP*`` / ``OPENLIT_*`` / ``OPENAI_*`` are unset,
``HAYSTACK_TELEMETRY_ENABLED=False`` and the capture runs with only loopback up.
"""

from __future__ import annotations

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
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-haystack-openlit"
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

from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools import tool  # noqa: E402
from haystack.utils import Secret  # noqa: E402

FOLDER = common.TRACES / "haystack-openlit"
PACKAGES = (
    "haystack-ai",
    "openai",
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
_DESC = common.TOOL_DESCRIPTIONS


@tool(description=_DESC["lookup_track"])
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name.

    :param track_name: The exact name of the track.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


@tool(description=_DESC["lookup_album"])
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title.

    :param album_title: The title of the album.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


@tool(description=_DESC["lookup_artist"])
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them.

    :param artist_name: The name of the artist.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool(description=_DESC["lookup_invoice"])
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids).

    :param customer_id: The customer's id.
    :param invoice_id: The invoice's id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool(description=_DESC["refund"])
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice.

    :param invoice_id: The invoice's id.
    :param track_id: The id of the track to refund.
    :param reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]


def make_agent() -> Agent:
    generator = OpenAIChatGenerator(
        api_key=Secret.from_token("sk-offline"),
        model=common.MODEL_NAME,
        api_base_url=BASE_URL,
        max_retries=0,
        timeout=30,
    )
    return Agent(chat_generator=generator, tools=TOOLS, system_prompt=common.SYSTEM_PROMPT)


def run_one(agent: Agent, messages: list[ChatMessage]) -> dict[str, Any]:
    # OpenLIT's documented grouping of calls into one trace (a CLIENT span, no attributes):
    # without it every model request is a trace of its own (nothing records the agent)
    with openlit.start_trace("support_turn"):
        return dict(agent.run(messages=messages))


NOTES = "Haystack Agent + OpenAIChatGenerator traced by OpenLIT (openlit.init); see NOTES.md."


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    agent = make_agent()
    history: list[ChatMessage] = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        messages = [*history, ChatMessage.from_user(text)]
        try:
            result = run_one(agent, messages)
        except Exception as exc:
            run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
            finals.append(None)
        else:
            finals.append(result["last_message"].text or None)
            history = [m for m in result["messages"] if not m.is_from("system")]
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
        session_id=None,  # recorded nowhere (no OpenLIT / Haystack mechanism)
        run_errors=run_errors,
        extra={
            "telemetry_env": {"HAYSTACK_TELEMETRY_ENABLED": "False"},
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
        run(name)
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
