"""Capture the BeeAI Framework through openinference-instrumentation-beeai.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-beeai
    /tmp/cap-beeai/bin/pip install beeai-framework openinference-instrumentation-beeai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-beeai/bin/python tests/golden/capture/beeai_openinference.py [scenario ...]

Captured with beeai-framework 0.1.85, litellm 1.110.2, openai 3.57.0,
openinference-instrumentation-beeai 0.1.30, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2. Writes
``tests/golden/traces/beeai-openinference/``.

Real ``beeai_framework.agents.requirement.RequirementAgent`` (BeeAI's current tool-calling
agent; ``ToolCallingAgent`` is deprecated since 0.1.73) named ``music_store_support``, the
system prompt as ``instructions``, ``@tool`` functions as tools, and BeeAI's
``OpenAIChatModel`` (a LiteLLM-based adapter, LiteLLM's OpenAI provider and the real
``openai`` client) with ``base_url`` pointed at a loopback HTTP server in this process that
scripts the Chat Completions answers; nothing else is faked. One ``await agent.run(text)``
per user turn. The calls of one response run concurrently (``asyncio.gather`` in BeeAI's
``run_tools``), so ``parallel_calls`` is real. RequirementAgent asks for
``tool_choice: "required"`` on every request and ends its loop with its own
``final_answer`` tool: the scripted model, like a provider honouring ``required``, gives
the script's final text as a ``final_answer`` call (``answer``), which BeeAI runs like any
tool. ``tool_choice_support`` is given in full: with a ``base_url`` BeeAI would otherwise
drop ``"required"`` and emulate tool calls through a JSON ``response_format``. The refused
refund raises inside the tool; BeeAI wraps it in a ``ToolError`` and sends the model its
tool-error prompt with the message.

``multi_turn``: one agent, whose ``UnconstrainedMemory`` keeps the conversation between
runs (BeeAI's default memory); the session id reaches the spans only through OpenInference's
``using_session()``. BeeAI has no telemetry of its own; LiteLLM's model-cost map is read
from its package (``LITELLM_LOCAL_MODEL_COST_MAP``), nothing is fetched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere
OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # LiteLLM would fetch its cost map at import
    "LITELLM_TELEMETRY": "False",
}
os.environ.update(OFFLINE_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-beeai")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.beeai import BeeAIInstrumentor  # noqa: E402

BeeAIInstrumentor().instrument(tracer_provider=PROVIDER)

from beeai_framework.adapters.openai import OpenAIChatModel  # noqa: E402
from beeai_framework.agents.requirement import RequirementAgent  # noqa: E402
from beeai_framework.memory import UnconstrainedMemory  # noqa: E402
from beeai_framework.tools import tool  # noqa: E402

FOLDER = common.TRACES / "beeai-openinference"
PACKAGES = (
    "beeai-framework",
    "litellm",
    "openai",
    "openinference-instrumentation-beeai",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script


def answer(body: scripted_model.Body) -> scripted_model.Body:
    """The script's next answer; under ``tool_choice: "required"`` (RequirementAgent's
    requests) the final text comes as a call of the offered ``final_answer`` tool, as a
    provider that honours ``required`` answers: a text reply would break that contract."""
    response = scripted_model.chat_completion(body)
    message = response["choices"][0]["message"]
    offered = {tool["function"]["name"] for tool in body.get("tools") or []}
    if body.get("tool_choice") == "required" and not message.get("tool_calls"):
        assert FINAL_ANSWER_TOOL in offered, offered
        script = _script()
        message["tool_calls"] = [
            {
                "id": f"call_{script.scenario.name[:6]}_{script.turn}{script.step}0",
                "type": "function",
                "function": {
                    "name": FINAL_ANSWER_TOOL,
                    "arguments": json.dumps({"response": message["content"]}),
                },
            }
        ]
        message["content"] = None
        response["choices"][0]["finish_reason"] = "tool_calls"
    return response


FINAL_ANSWER_TOOL = "final_answer"  # RequirementAgent's own tool that ends its loop
MODEL = scripted_model.ChatCompletions(answer)  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


@tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_agent() -> RequirementAgent:
    llm = OpenAIChatModel(
        common.MODEL_NAME,
        api_key="sk-offline",
        base_url=BASE_URL,
        # With a base_url BeeAI assumes the server cannot force a tool call and drops
        # "required", then emulates tool calls through a JSON response_format; the
        # scripted server speaks native tool calling, as OpenAI does.
        tool_choice_support={"required", "none", "single", "auto"},
        allow_parallel_tool_calls=True,  # default False: parallel_tool_calls=false is sent
    )
    return RequirementAgent(
        llm=llm,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        memory=UnconstrainedMemory(),
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store.",
        instructions=common.SYSTEM_PROMPT,
    )


@contextlib.contextmanager
def session(session_id: str | None) -> Iterator[None]:
    if session_id is None:
        yield
    else:
        with using_session(session_id):
            yield


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        with session(scenario.session_id):
            try:
                output = await agent.run(text)
            except Exception as exc:  # recorded, then check_labels fails
                run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
                finals.append(None)
            else:
                finals.append(output.last_message.text)
        PROVIDER.force_flush()
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
        session_id=scenario.session_id,
        run_errors=run_errors,
        extra={
            "offline_env": OFFLINE_ENV,
            "tool_messages_in_last_request": [
                m.get("content") for m in last or [] if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last or []),
            "model_requests": len(MODEL.requests),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "BeeAI RequirementAgent + OpenAIChatModel (LiteLLM, real openai client) over a scripted "
    "loopback Chat Completions server; openinference-instrumentation-beeai (scope "
    "openinference.instrumentation.beeai, version = beeai-framework's, every span INTERNAL, "
    "the whole tree built and exported when the run ends). Per turn: <agent name> (AGENT "
    'root: input.value {"input": user text}, output.value final text, agent.name, '
    "metadata.memory.* and metadata.steps.*), OpenAIChatModel (LLM, one per request, "
    "llm.input_messages with the templated 'Your task: ...' user text, output tool calls "
    'with ids), <tool> (TOOL, input.value {"input": args, "options": null}, '
    "output.value str(result), no call id), final_answer (TOOL: RequirementAgent's own "
    "tool, called by the model under tool_choice required) and a zero-length AGENT-kind "
    "span final_answer (the agent's final_answer event written as a child span). The "
    "refused refund: TOOL span ERROR, exception message 'Tool Error', the cause only in "
    "output.value, plus a zero-length TOOL-kind child span 'error'. parallel_calls: the "
    "LLM span's output merges the two tool calls into one (first id and name, both "
    "argument texts run together); later LLM spans' input messages have both. Session id "
    "only through using_session()."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
