"""Capture a Haystack ``Agent`` through Traceloop OpenLLMetry's haystack instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-haystack-tl
    /tmp/cap-haystack-tl/bin/pip install "haystack-ai==2.31.0" \
        opentelemetry-instrumentation-haystack opentelemetry-instrumentation-openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-haystack-tl/bin/python tests/golden/capture/haystack_traceloop.py [scenario ...]'

Captured with haystack-ai 2.31.0, haystack-experimental 0.19.0.post1, openai 3.57.0,
opentelemetry-instrumentation-haystack 0.62.4, opentelemetry-instrumentation-openai 0.62.4,
opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-common 1.45.2, protobuf 7.36.2, Python 3.12.1, in a network namespace
with only loopback up. Writes ``tests/golden/traces/haystack-traceloop/``.

Why haystack-ai 2.31.0 and not the latest (3.4.1): opentelemetry-instrumentation-haystack
0.62.4 (the latest) cannot instrument haystack-ai 3.x. Its ``instrument()`` wraps
``haystack.components.generators.openai.OpenAIGenerator.run`` first, a module Haystack 3.0
removed, and raises ``wrapt.exceptions.TargetModuleNotFoundError`` (its declared
dependency, ``haystack-ai >= 2.0.0``, lets 3.x through), so nothing is wrapped at all.
2.31.0 is the newest Haystack it runs on unmodified.

The agent of ``haystack_agent.py`` (the OpenInference capture: ``Agent`` with
``OpenAIChatGenerator`` pointed at the scripted Chat Completions loopback server, so the
real ``openai.OpenAI`` client runs; tools from ``create_tool_from_function``; default
``exit_conditions=["text"]``, ``raise_on_tool_invocation_failure=False``; one
``Agent.run`` per user turn, multi-turn memory = the previous ``result["messages"]``
without the system message, plus the new user message); only the instrumentation
differs. Traceloop's instrumentors are used directly with the capture's TracerProvider (no
traceloop-sdk, nothing phones home; ``TRACELOOP_TELEMETRY=false`` anyway,
``OTEL_EXPORTER_OTLP*`` removed, ``TRACELOOP_TRACE_CONTENT=true``, the default). The
haystack instrumentor wraps only ``OpenAIGenerator.run``, ``OpenAIChatGenerator.run`` and
``Pipeline.run`` (the Agent runs no Pipeline), so the model calls are recorded by
opentelemetry-instrumentation-openai around the ``openai`` client (both installed, as
traceloop-sdk does).

Haystack's own tracing: haystack-ai 2.x auto-enables its core ``OpenTelemetryTracer`` at
import when a global TracerProvider is already set (``HAYSTACK_AUTO_TRACE_ENABLED``
unset, the documented default), and ``HAYSTACK_CONTENT_TRACING_ENABLED=true`` adds the
inputs and outputs. It is needed: without it (checked, not captured) nothing ties a
turn together, every model call is a trace of its own (``haystack.openai.chat`` →
``openai.chat``), with no agent span and no tool results outside the next request. With
it the ``haystack.agent.run`` span is the root of each turn.
No session id: the only documented Traceloop mechanism (association properties) belongs to
traceloop-sdk, and Haystack's tracer has none.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ["TRACELOOP_TELEMETRY"] = "false"
os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
for _key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_key]
os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-haystack")
trace.set_tracer_provider(PROVIDER)

# The provider is global before haystack is imported: Haystack 2.x then auto-enables its
# own OpenTelemetryTracer (documented default; content through
# HAYSTACK_CONTENT_TRACING_ENABLED). The instrumentors patch the classes in place
# (wrapt), so the import order does not matter for them.
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools.from_function import create_tool_from_function  # noqa: E402
from haystack.tracing.tracer import is_tracing_enabled  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from opentelemetry.instrumentation.haystack import HaystackInstrumentor  # noqa: E402
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

OpenAIInstrumentor().instrument(tracer_provider=PROVIDER)
HaystackInstrumentor().instrument(tracer_provider=PROVIDER)  # type: ignore[no-untyped-call]
# Haystack 2.x enabled its own OpenTelemetryTracer at import (a global provider was set
# first, HAYSTACK_AUTO_TRACE_ENABLED unset): without it every model call is a trace of its
# own. Its two probe spans (``haystack.tracing.auto_enable``, the first one with status
# ERROR from a circular import inside haystack) belong to no run: export and drop them.
assert is_tracing_enabled(), "Haystack's OpenTelemetry tracer was not auto-enabled"
PROVIDER.force_flush()
PROBE_SPANS = [span.name for span in RECORDER.spans]
RECORDER.batches.clear()

FOLDER = common.TRACES / "haystack-traceloop"
PACKAGES = (
    "haystack-ai",
    "haystack-experimental",
    "openai",
    "opentelemetry-instrumentation-haystack",
    "opentelemetry-instrumentation-openai",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script


SERVER = scripted_model.ChatCompletions().serve()
BASE_URL = f"{SERVER.url}/v1"


def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name.

    :param track_name: The exact name of the track.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title.

    :param album_title: The title of the album.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them.

    :param artist_name: The name of the artist.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids).

    :param customer_id: The customer's id.
    :param invoice_id: The invoice's id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice.

    :param invoice_id: The invoice's id.
    :param track_id: The id of the track to refund.
    :param reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [
    create_tool_from_function(fn, description=common.TOOL_DESCRIPTIONS[fn.__name__])
    for fn in (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund)
]


def make_agent() -> Agent:
    generator = OpenAIChatGenerator(
        api_key=Secret.from_token("sk-offline"),
        model=common.MODEL_NAME,
        api_base_url=BASE_URL,
        max_retries=0,
        timeout=30,
    )
    return Agent(chat_generator=generator, tools=TOOLS, system_prompt=common.SYSTEM_PROMPT)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    history: list[ChatMessage] = []
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        messages = [*history, ChatMessage.from_user(text)]
        result = agent.run(messages=messages)
        finals.append(result["last_message"].text or None)
        history = [m for m in result["messages"] if not m.is_from("system")]
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=(
            "OpenLLMetry opentelemetry-instrumentation-haystack + -openai used directly (no "
            "traceloop-sdk) on haystack-ai 2.31.0 (0.62.4 cannot instrument 3.x), with "
            "Haystack's own OpenTelemetryTracer auto-enabled and content tracing on: "
            "haystack.agent.run (root per turn) -> haystack.component.run chat_generator -> "
            "haystack.openai.chat (OpenLLMetry haystack, no content) -> openai.chat (OpenLLMetry "
            "openai, gen_ai.input/output.messages with tool calls and ids), and "
            "haystack.component.run tool_invoker per tool round (results in "
            "haystack.component.output); no span per tool; the refused refund raises, Haystack "
            "sends the model a tool message with error=True; no span has status ERROR; no "
            "session id; multi_turn history is the previous result['messages'] passed back in"
        ),
        session_id=None,
        tool_error_contains="RefundWindowExpired",
        extra={"dropped_probe_spans": PROBE_SPANS},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
