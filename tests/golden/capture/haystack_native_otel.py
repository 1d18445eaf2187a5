"""Capture a Haystack ``Agent`` through Haystack's own OpenTelemetry tracer.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-haystack-native
    /tmp/cap-haystack-native/bin/pip install haystack-ai opentelemetry-haystack \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-haystack-native/bin/python \\
            tests/golden/capture/haystack_native_otel.py [scenario ...]'

Captured with haystack-ai 3.4.1, opentelemetry-haystack 2.0.0, openai 3.57.0,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2, protobuf 7.36.2
(Python 3.12.1), in a network namespace with only loopback up.
Writes ``tests/golden/traces/haystack-otel-native/``.

Haystack's own tracing, not OpenInference or OpenLLMetry: ``haystack.tracing`` emits the
``haystack.agent.run`` / ``haystack.agent.step`` / ``haystack.agent.step.llm`` /
``haystack.agent.step.tool`` spans itself; haystack-ai 3.x moved its OpenTelemetry
backend (``OpenTelemetryTracer``, formerly ``haystack.tracing.OpenTelemetryTracer``) out
of the core into deepset's ``opentelemetry-haystack`` integration
(``haystack_integrations.tracing.opentelemetry``), so the tracer is enabled the documented
way: ``haystack.tracing.enable_tracing(OpenTelemetryTracer(provider.get_tracer(...)))``,
content on with ``HAYSTACK_CONTENT_TRACING_ENABLED=true`` (read when ``haystack.tracing``
is imported; ``tracer.is_content_tracing_enabled`` is also set). Haystack 3.x has no
telemetry phone-home left to disable; ``HAYSTACK_TELEMETRY_ENABLED=False`` is set anyway
and ``OTEL_EXPORTER_OTLP*`` removed.

The agent of ``haystack_agent.py`` (``Agent`` with ``OpenAIChatGenerator`` pointed at the
scripted Chat Completions loopback server, so the real ``openai.OpenAI`` client runs; tools
from ``create_tool_from_function``; default ``exit_conditions=["text"]``,
``raise_on_tool_invocation_failure=False``; one ``Agent.run`` per user turn, multi-turn
memory = the previous ``result["messages"]`` without the system message, plus the new
user message). No session id: neither Haystack's tracer nor its Agent documents one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

for _key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_key]
os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-haystack")
trace.set_tracer_provider(PROVIDER)

from haystack import tracing  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools.from_function import create_tool_from_function  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer  # noqa: E402

tracing.enable_tracing(OpenTelemetryTracer(PROVIDER.get_tracer("haystack")))
tracing.tracer.is_content_tracing_enabled = True

FOLDER = common.TRACES / "haystack-otel-native"
PACKAGES = (
    "haystack-ai",
    "opentelemetry-haystack",
    "openai",
    "opentelemetry-sdk",
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
        notes=NOTES,
        session_id=None,
        tool_error_contains="RefundWindowExpired",
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = "see NOTES.md"


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
