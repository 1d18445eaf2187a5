"""Capture a Haystack ``Agent`` traced by Future AGI's traceAI (``traceAI-haystack``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-haystack-traceai
    /tmp/cap-haystack-traceai/bin/pip install traceAI-haystack haystack-ai \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-haystack-traceai/bin/python \
        tests/golden/capture/haystack_traceai.py [scenario ...]'

Captured with traceAI-haystack 0.1.9, fi-instrumentation-otel 1.1.0, haystack-ai 3.4.1,
openai 3.57.0, opentelemetry-sdk / -api / -exporter-otlp-proto-http /
-exporter-otlp-proto-common / -proto 1.45.2, opentelemetry-instrumentation 0.66b2,
protobuf 7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/haystack-traceai/``.

The agent, tools and memory are those of ``haystack_agent.py``: one Haystack ``Agent``
(``OpenAIChatGenerator`` pointed at the scripted loopback Chat Completions server, so the
real ``openai.OpenAI`` client runs), the five tools made with ``create_tool_from_function``,
default ``exit_conditions=["text"]``; the refused refund raises inside the tool and the
Agent sends the model a tool message with ``error=True``. Multi-turn memory is the
Haystack idiom: the previous ``messages`` (without the system message) plus the new user
message.

traceAI-haystack traces ``Pipeline.run`` and the components a ``Pipeline`` runs through
``Pipeline._run_component`` (it wraps a component class's ``run`` the first time a pipeline
runs one), as its README's example shows: the Agent is therefore the one component of a
``Pipeline`` (``add_component("agent", agent)``) and each user turn is one
``pipeline.run({"agent": {"messages": ...}})``. A bare ``Agent.run`` emits no span at all;
and Haystack 3.x's ``Agent`` calls its chat generator and tools directly (Haystack 2.x ran
them through ``Pipeline._run_component``), so no model or tool call gets a span of its own.

Instrumentation, as traceAI's README shows: ``fi_instrumentation.register(project_type=
ProjectType.OBSERVE, project_name=...)`` (traceAI's own ``TracerProvider``,
``BatchSpanProcessor`` and ``HTTPSpanExporter``, the default FI semantic convention) and
``HaystackInstrumentor().instrument(tracer_provider=..., config=TraceConfig(...))`` with
every content switch on (``hide_*`` False, the defaults). No key: ``FI_API_KEY`` /
``FI_SECRET_KEY`` are unset and ``FI_BASE_URL`` points at a loopback server in this process
whose ``received_otlp.receiver`` route answers traceAI's fixed path ``/tracer/v1/traces``
(OTLP/HTTP protobuf, as sent); the same server answers the model
(``scripted_model.ChatCompletions``). ``force_flush`` on the provider after every user
turn; the ``.jsonl`` keeps its export requests as received. Session:
``fi_instrumentation.using_session(session id)`` around each turn of ``multi_turn``. Every
``OTEL_*`` / ``FI_*`` / ``OPENAI_*`` variable is removed first.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "FI_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "haystack-traceai"
PROJECT = "music-store-support-haystack-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceAI-haystack",
    "fi-instrumentation-otel",
    "haystack-ai",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: scripted_model.ChatCompletions(),
        TRACEAI_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from fi_instrumentation import TraceConfig, register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from haystack import Pipeline  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools.from_function import create_tool_from_function  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from traceai_haystack import HaystackInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
HaystackInstrumentor().instrument(
    tracer_provider=PROVIDER,
    config=TraceConfig(
        hide_inputs=False,
        hide_outputs=False,
        hide_input_messages=False,
        hide_output_messages=False,
        hide_input_text=False,
        hide_output_text=False,
    ),
)

_script = common.active_script


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

NOTES = (
    "Haystack Agent (OpenAIChatGenerator over the scripted Chat Completions server) as the one "
    "component of a Pipeline, traced by Future AGI's traceAI-haystack: "
    "fi_instrumentation.register(project_type=OBSERVE) (its own TracerProvider, "
    "BatchSpanProcessor and HTTPSpanExporter, FI semantic convention) and "
    "traceai_haystack.HaystackInstrumentor, every TraceConfig content switch on; exported "
    "over OTLP/HTTP protobuf to a loopback receiver at FI_BASE_URL + /tracer/v1/traces, no "
    "key; force_flush after every turn. Spans Pipeline.run (CHAIN) -> Agent.run (CHAIN) only: "
    "Haystack 3.x's Agent calls its generator and tools directly, so no model or tool span; "
    "the calls, results and the refund's error=True tool message only in the Agent span's "
    "output.value (the run's messages as str() of ChatMessage). multi_turn: the previous "
    "messages passed back in and fi_instrumentation.using_session(session id) around each "
    "turn; see NOTES.md"
)


def make_pipeline() -> Pipeline:
    generator = OpenAIChatGenerator(
        api_key=Secret.from_token("sk-offline"),
        model=common.MODEL_NAME,
        api_base_url=f"{SERVER.url}/v1",
        max_retries=0,
        timeout=30,
    )
    agent = Agent(chat_generator=generator, tools=TOOLS, system_prompt=common.SYSTEM_PROMPT)
    pipeline = Pipeline()
    pipeline.add_component(common.AGENT_NAME, agent)
    return pipeline


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    pipeline = make_pipeline()
    session_id = scenario.session_id
    history: list[ChatMessage] = []
    assert PROVIDER.force_flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        messages = [*history, ChatMessage.from_user(text)]
        scope = using_session(session_id) if session_id else contextlib.nullcontext()
        with scope:
            outputs = pipeline.run({common.AGENT_NAME: {"messages": messages}})
        result = outputs[common.AGENT_NAME]
        finals.append(result["last_message"].text or None)
        history = [m for m in result["messages"] if not m.is_from("system")]
        assert PROVIDER.force_flush(), "traceAI's export did not flush"
        turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
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
        session_id=session_id,
        tool_error_contains="RefundWindowExpired",
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
