"""Capture smolagents ToolCallingAgent + openinference-instrumentation-smolagents.

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-smolagents
    /tmp/cap-smolagents/bin/pip install smolagents openai openinference-instrumentation-smolagents \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-smolagents/bin/python tests/golden/capture/smolagents_toolcalling.py

The model is smolagents' ``OpenAIServerModel`` (real ``openai`` client) pointed at the scripted
Chat Completions loopback server. smolagents' ToolCallingAgent sends ``tool_choice="required"``
and ends a run only through its ``final_answer`` tool, so the scripted final text is sent as a
``final_answer`` tool call ``{"answer": <text>}`` (same number of model calls as the reference).
The refused refund raises inside the tool; smolagents wraps it in AgentToolExecutionError, the
step records the error and the next model call sees it. Multi-turn memory:
``agent.run(text, reset=False)``. Session id via openinference ``using_session()``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import scripted_model
from opentelemetry import trace

PROVIDER, RECORDER = common.make_provider("music-store-support-smolagents")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.smolagents import SmolagentsInstrumentor  # noqa: E402

SmolagentsInstrumentor().instrument(tracer_provider=PROVIDER)

from smolagents import OpenAIServerModel, ToolCallingAgent, tool  # noqa: E402

FOLDER = common.TRACES / "smolagents-openinference"
PACKAGES = (
    "smolagents",
    "openai",
    "openinference-instrumentation-smolagents",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script


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


ENDPOINT = scripted_model.ChatCompletions(answer)
SERVER = ENDPOINT.serve()
BASE_URL = f"{SERVER.url}/v1"


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


def make_agent() -> ToolCallingAgent:
    model = OpenAIServerModel(
        model_id=common.MODEL_NAME,
        api_base=BASE_URL,
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
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        if scenario.session_id:
            with using_session(scenario.session_id):
                result = agent.run(text, reset=(turn == 0))
        else:
            result = agent.run(text, reset=(turn == 0))
        finals.append(str(result) if result is not None else None)
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
            "smolagents ToolCallingAgent + openinference-instrumentation-smolagents; final text "
            "delivered by the model as a final_answer tool call (smolagents' idiom, "
            "tool_choice=required); refund raises -> AgentToolExecutionError recorded on the step"
        ),
        session_id=scenario.session_id,
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
