"""Capture the smolagents ToolCallingAgent traced by Future AGI's traceAI (``traceai-smolagents``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-smolagents-traceai
    /tmp/cap-smolagents-traceai/bin/pip install smolagents openai traceai-smolagents \
        fi-instrumentation-otel opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-smolagents-traceai/bin/python \
        tests/golden/capture/smolagents_traceai.py [scenario ...]'

Captured with traceAI-smolagents 0.1.5, fi-instrumentation-otel 1.1.0, smolagents 1.26.0,
openai 3.57.0, opentelemetry-sdk / -api / -exporter-otlp-proto-http /
-exporter-otlp-proto-common / -proto 1.45.2, opentelemetry-instrumentation 0.66b2, protobuf
7.36.2, Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/smolagents-traceai/``.

The agent, tools, scripted model and memory are those of ``smolagents_toolcalling.py``: a real
``ToolCallingAgent`` named ``music_store_support`` with the store's five ``@tool``s, its
``OpenAIServerModel`` (real ``openai`` client) pointed at the scripted Chat Completions
loopback server (``scripted_model.ChatCompletions``). smolagents sends
``tool_choice="required"`` and ends a run only through its ``final_answer`` tool, so the
scripted final text is a ``final_answer`` tool call ``{"answer": <text>}``. The refused refund
raises inside the tool; smolagents wraps it in ``AgentToolExecutionError``, records it on the
step, and the next model call sees it. Multi-turn memory: ``agent.run(text, reset=False)``.

Instrumentation, as traceAI's README shows: ``fi_instrumentation.register(project_type=
ProjectType.OBSERVE, project_name=...)`` (traceAI's own ``TracerProvider``, its default
``BatchSpanProcessor`` and ``HTTPSpanExporter``, the default FI semantic convention) and
``SmolagentsInstrumentor().instrument(tracer_provider=..., config=TraceConfig(...))`` with
every content switch on (``hide_inputs`` / ``hide_outputs`` / ``hide_input_messages`` /
``hide_output_messages`` / ``hide_input_text`` / ``hide_output_text`` False, the defaults).
No key: ``FI_API_KEY`` / ``FI_SECRET_KEY`` are unset (the exporter then sends no auth
header) and ``FI_BASE_URL`` points at the same loopback server, whose
``received_otlp.receiver`` route answers traceAI's fixed path ``/tracer/v1/traces``
(OTLP/HTTP protobuf, as sent). ``force_flush`` on the provider after every user turn; the
``.jsonl`` keeps its export requests as received. Session id:
``fi_instrumentation.using_session(session id)`` around each turn of ``multi_turn``
(traceAI's context attribute, copied by its ``FITracer`` onto every span it starts). Every
``OTEL_*`` / ``FI_*`` / ``OPENAI_*`` variable is removed first.
"""

from __future__ import annotations

import contextlib
import json
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

FOLDER = common.TRACES / "smolagents-traceai"
PROJECT = "music-store-support-smolagents-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceAI-smolagents",
    "fi-instrumentation-otel",
    "smolagents",
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


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions answer: the script's tool calls, else final_answer(answer=text)."""
    script = common.active_script()
    calls, final = script.next_response()
    if final is not None:
        calls = [
            (
                f"call_{script.scenario.name[:6]}_{script.turn}{script.step}0",
                "final_answer",
                {"answer": final},
            )
        ]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for cid, name, args in calls
        ],
    }
    return scripted_model.completion(
        body,
        message,
        response_id=f"chatcmpl_{script.scenario.name}_{script.turn}{script.step}",
        finish_reason="tool_calls",
    )


MODEL = scripted_model.ChatCompletions(answer)
SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: MODEL,
        TRACEAI_PATH: received_otlp.receiver(_keep_export),
    }
)
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from fi_instrumentation import TraceConfig, register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from traceai_smolagents import SmolagentsInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
SmolagentsInstrumentor().instrument(
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

from smolagents import OpenAIServerModel, ToolCallingAgent, tool  # noqa: E402

_script = common.active_script


@tool
def lookup_track(track_name: str) -> dict:
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name: The exact track name.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict:
    """Look up an album by its title.

    Args:
        album_title: The album title.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict:
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name: The artist's name.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict:
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id: The customer's id.
        invoice_id: The invoice id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict:
    """Refund one purchased track of an invoice.

    Args:
        invoice_id: The invoice id.
        track_id: The track to refund.
        reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]

NOTES = (
    "smolagents ToolCallingAgent (OpenAIServerModel over the scripted Chat Completions "
    "server) traced by Future AGI's traceAI: fi_instrumentation.register(project_type="
    "OBSERVE) (its own TracerProvider, BatchSpanProcessor and HTTPSpanExporter, FI semantic "
    "convention) and traceai_smolagents.SmolagentsInstrumentor, every TraceConfig content "
    "switch on; exported over OTLP/HTTP protobuf to a loopback receiver at FI_BASE_URL + "
    "/tracer/v1/traces, no key; force_flush after every turn. Final text delivered by the "
    "model as a final_answer tool call (tool_choice=required); refund raises -> "
    "AgentToolExecutionError recorded on the step. multi_turn: agent.run(reset=False) and "
    "fi_instrumentation.using_session(session id) around each turn; see NOTES.md"
)


def make_agent() -> ToolCallingAgent:
    model = OpenAIServerModel(
        model_id=common.MODEL_NAME,
        api_base=f"{SERVER.url}/v1",
        api_key="sk-offline",
        client_kwargs={"max_retries": 0},
    )
    return ToolCallingAgent(
        tools=TOOLS,
        model=model,
        name=common.AGENT_NAME,
        instructions=common.SYSTEM_PROMPT,
        max_steps=8,
        verbosity_level=0,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    session_id = scenario.session_id
    assert PROVIDER.force_flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(Received.requests)
        scope = using_session(session_id) if session_id else contextlib.nullcontext()
        with scope:
            result = agent.run(text, reset=(turn == 0))
        finals.append(str(result) if result is not None else None)
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
