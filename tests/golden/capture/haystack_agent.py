"""Capture a Haystack ``Agent`` through openinference-instrumentation-haystack.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-haystack
    /tmp/cap-haystack/bin/pip install haystack-ai openinference-instrumentation-haystack \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-haystack/bin/python tests/golden/capture/haystack_agent.py [scenario ...]

Captured with haystack-ai 3.4.0, openai 3.54.0, openinference-instrumentation-haystack
0.1.46, openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2, protobuf 7.36.2
(Python 3.12.1).

Writes ``tests/golden/traces/haystack-openinference/``.
``HaystackInstrumentor().instrument()`` (content on: OpenInference's default
``TraceConfig`` hides nothing). Why OpenInference and not Haystack's own tracer:
haystack-ai 3.x no longer ships an OpenTelemetry tracer (only the abstract
``haystack.tracing`` API and a logging tracer; the OTel tracer moved to the separate
``opentelemetry-haystack`` integration), so nothing is emitted unless some tracer is
enabled; OpenInference is the instrumentation the brief asks for and the one evald
already reads for other frameworks. Haystack's own ``haystack.agent.*`` spans therefore
do not appear (no duplicates).

One ``Agent`` (``OpenAIChatGenerator`` pointed at a scripted loopback Chat Completions
server, so the real ``openai.OpenAI`` client runs), tools made with
``create_tool_from_function`` from typed functions, default ``exit_conditions=["text"]``,
``raise_on_tool_invocation_failure=False``. One ``Agent.run`` per user turn; multi-turn
memory is the Haystack idiom: the previous ``result["messages"]`` (without the system
message, which the Agent prepends again) plus the new user message.
The refused refund raises inside the tool: ``Tool.invoke`` wraps it in
``ToolInvocationError`` and the Agent turns it into a tool ``ChatMessage`` with
``error=True`` ("Failed to invoke Tool `refund` with parameters {...}. Error: ...").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import scripted_model
from opentelemetry import trace

PROVIDER, RECORDER = common.make_provider("music-store-support-haystack")
trace.set_tracer_provider(PROVIDER)

# Import the components before instrumenting: the instrumentor wraps the ``run`` of every
# class in Haystack's component registry at instrument() time (and later only those run
# through ``Pipeline._run_component``, which the Agent does not use).
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools.from_function import create_tool_from_function  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.haystack import HaystackInstrumentor  # noqa: E402

HaystackInstrumentor().instrument(tracer_provider=PROVIDER)

FOLDER = common.TRACES / "haystack-openinference"
PACKAGES = (
    "haystack-ai",
    "openai",
    "openinference-instrumentation-haystack",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
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
        if scenario.session_id:
            with using_session(scenario.session_id):
                result = agent.run(messages=messages)
        else:
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
            "openinference-instrumentation-haystack on haystack-ai 3.x: spans Agent.run (CHAIN) "
            "-> OpenAIChatGenerator.run (LLM) per model request; no tool spans (the Agent runs "
            "tools itself, not through a component); tool calls only in the LLM spans' "
            "llm.output_messages, tool results (and the refund's error text) only in the next "
            "LLM span's llm.input_messages / input.value; the refused refund raises, Haystack "
            "wraps it in ToolInvocationError and sends the model a tool message with "
            "error=True; no span has status ERROR; session.id only through openinference "
            "using_session() around each Agent.run; multi_turn history is the previous "
            "result['messages'] passed back in"
        ),
        session_id=scenario.session_id,
        tool_error_contains="RefundWindowExpired",
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
