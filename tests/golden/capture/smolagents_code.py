"""Capture smolagents CodeAgent + openinference-instrumentation-smolagents.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-smol-code
    /tmp/cap-smol-code/bin/pip install smolagents openai openinference-instrumentation-smolagents \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-smol-code/bin/python tests/golden/capture/smolagents_code.py [scenario ...]'

Captured with smolagents 1.26.0, openai 3.57.0, openinference-instrumentation-smolagents 0.1.43,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1. Writes ``tests/golden/traces/smolagents-code-openinference/``.

Real ``smolagents.CodeAgent`` (default local Python executor, default ``<code>`` ...
``</code>`` block tags) with the ``@tool`` functions of ``smolagents_toolcalling.py`` and
smolagents' ``OpenAIServerModel`` (real ``openai`` client) pointed at the scripted Chat
Completions loopback server. A CodeAgent's model answers in text: a ``Thought:`` line and a
``<code>`` block of Python that calls the tools and prints their results; the script's final
text is ``final_answer("...")`` in the last block. The scripted answer honours the request's
``stop`` sequences as a real endpoint does (the answer ends before ``</code>``, which the
agent appends itself). Tool calls of one response (``parallel_calls``) are one code block
calling both tools, one after the other. The refused refund raises inside the code: the
executor turns it into an ``InterpreterError``, the step fails with ``AgentExecutionError``
and the next model call sees the error. Multi-turn memory: ``agent.run(text, reset=False)``.
Session id via openinference ``using_session()`` (the instrumentation reads it from context).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-smolagents-code")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.smolagents import SmolagentsInstrumentor  # noqa: E402

SmolagentsInstrumentor().instrument(tracer_provider=PROVIDER)

from smolagents import CodeAgent, OpenAIServerModel, tool  # noqa: E402

FOLDER = common.TRACES / "smolagents-code-openinference"
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


def _call_code(name: str, args: dict[str, Any]) -> str:
    """``name(k=v, ...)`` with Python literals (``repr``) for the argument values."""
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


def code_text(calls: list[tuple[str, str, dict[str, Any]]], final: str | None) -> str:
    """The model's text answer: a Thought and a ``<code>`` block (closing tag included)."""
    if final is not None:
        thought = "I have everything I need and can give the final answer."
        body = f"final_answer({json.dumps(final, ensure_ascii=False)})"
    else:
        names = " and ".join(f"`{name}`" for _, name, _ in calls)
        thought = f"I will call {names} and print the result."
        assigned = [
            f"result_{k} = {_call_code(name, args)}" for k, (_, name, args) in enumerate(calls)
        ]
        printed = [f"print(result_{k})" for k in range(len(calls))]
        body = "\n".join(assigned + printed)
    return f"Thought: {thought}\n<code>\n{body}\n</code>"


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions answer in the CodeAgent's text format, cut at the first stop sequence."""
    script = common.active_script()
    calls, final = script.next_response()
    text = code_text(calls, final)
    stops = body.get("stop") or []
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=len(text))
    return scripted_model.completion(
        body,
        {"role": "assistant", "content": text[:cut]},
        response_id=f"chatcmpl_{script.scenario.name}_{script.turn}{script.step}",
        finish_reason="stop",
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


def make_agent() -> CodeAgent:
    model = OpenAIServerModel(
        model_id=common.MODEL_NAME,
        api_base=BASE_URL,
        api_key="sk-offline",
        client_kwargs={"max_retries": 0},
    )
    return CodeAgent(
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
    ENDPOINT.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    step_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        steps_before = len(agent.memory.steps) if turn else 0
        if scenario.session_id:
            with using_session(scenario.session_id):
                result = agent.run(text, reset=(turn == 0))
        else:
            result = agent.run(text, reset=(turn == 0))
        finals.append(str(result) if result is not None else None)
        step_errors.extend(
            f"turn {turn} step {step.step_number}: {type(step.error).__name__}: {step.error}"
            for step in agent.memory.steps[steps_before:]
            if getattr(step, "error", None) is not None
        )
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
            "smolagents CodeAgent + openinference-instrumentation-smolagents; the model answers "
            "with a Thought and a <code> block calling the tools (both calls of parallel_calls in "
            "one block, run one after the other); the final text is final_answer(...) in code; the "
            "refund raises inside the code -> InterpreterError -> AgentExecutionError on the step"
        ),
        session_id=scenario.session_id,
        extra={
            "step_errors": step_errors,
            "stop_sequences_sent": sorted(
                {s for r in ENDPOINT.requests for s in r.get("stop") or []}
            ),
        },
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
