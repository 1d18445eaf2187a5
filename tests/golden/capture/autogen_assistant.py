"""Capture Microsoft AutoGen AgentChat's built-in OpenTelemetry instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-autogen
    /tmp/cap-autogen/bin/pip install autogen-agentchat "autogen-ext[openai]" \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-autogen/bin/python tests/golden/capture/autogen_assistant.py [scenario ...]

Captured with autogen-agentchat / autogen-core / autogen-ext 0.7.5, openai 3.57.0, tiktoken
0.14.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf
5.29.6 (what pip resolved for this set). Writes ``tests/golden/traces/autogen-agentchat/``. The
script is ``autogen_assistant.py``, not ``autogen_agentchat.py``: run as a script, that name
would shadow the ``autogen_agentchat`` package (as ``crewai.py`` would shadow ``crewai``).

Real ``autogen_agentchat.agents.AssistantAgent`` named ``music_store_support`` with plain
functions as tools (AutoGen wraps each in a ``FunctionTool``, run through its
``StaticWorkbench``) and ``autogen_ext.models.openai.OpenAIChatCompletionClient`` (real
``openai.AsyncOpenAI`` client, ``model_info`` given since the model name is unknown to
AutoGen) pointed at a loopback HTTP server in this process that scripts the Chat
Completions answers; nothing else is faked. One ``await agent.run(task=text)`` per user turn
(the single-agent idiom: no team, so no agent runtime). ``max_tool_iterations=10`` so the
agent keeps calling the model after each tool round until the model answers in text (the
default, 1, returns the first round's tool results as the answer); ``reflect_on_tool_use``
True only matters if the 10 rounds ran out (they never do here): the scripted final text is
the agent's ``TextMessage`` answer. ``multi_turn``: the same agent instance for the three
turns (AgentChat agents are stateful; the history lives in its model context).

Instrumentation: AutoGen's own GenAI spans (``autogen_core._telemetry._genai``, tracer
``autogen-core`` from the GLOBAL tracer provider): ``create_agent`` (when the agent is
constructed), ``invoke_agent`` (``BaseChatAgent.run``) and ``execute_tool``
(``BaseTool.run_json``). The ``tracer_provider`` argument exists only on the agent runtimes
(``SingleThreadedAgentRuntime``, for teams), which a lone ``agent.run`` does not use. There
is no content switch: AutoGen records no messages, arguments or results on any span, and no
model spans (the AutoGen docs suggest a separate OpenAI instrumentation for those; not used
here: this capture is AutoGen's own instrumentation only). AutoGen has no telemetry of its
own to turn off.

A raising tool: ``trace_tool_span`` records the exception (span status ERROR, ``error.type``,
an ``exception`` event) and re-raises; the ``StaticWorkbench`` catches it and the model gets
``str(exc)`` as an error ``FunctionExecutionResult`` (``is_error=True``).
"""

from __future__ import annotations

import asyncio
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

PROVIDER, RECORDER = common.make_provider("music-store-support-autogen-agentchat")
trace.set_tracer_provider(PROVIDER)  # AutoGen's GenAI spans use the global provider

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.base import TaskResult  # noqa: E402
from autogen_agentchat.messages import TextMessage  # noqa: E402
from autogen_core.models import ModelInfo  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402

FOLDER = common.TRACES / "autogen-agentchat"
PACKAGES = (
    "autogen-agentchat",
    "autogen-core",
    "autogen-ext",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


# Plain functions: AssistantAgent wraps each in a FunctionTool (description = docstring,
# argument schema from the annotations). Sync functions run in the loop's thread pool.
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


MODEL_INFO = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=False,
    family="unknown",
    structured_output=False,
)


def make_agent() -> tuple[AssistantAgent, OpenAIChatCompletionClient]:
    client = OpenAIChatCompletionClient(
        model=common.MODEL_NAME,
        api_key="sk-offline",
        base_url=BASE_URL,
        model_info=MODEL_INFO,
    )
    agent = AssistantAgent(
        name=common.AGENT_NAME,
        model_client=client,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        description="Customer support of the Tunes & Co music store.",
        system_message=common.SYSTEM_PROMPT,
        reflect_on_tool_use=True,
        max_tool_iterations=10,
    )
    return agent, client


def final_text(result: TaskResult) -> str | None:
    last = result.messages[-1] if result.messages else None
    return last.content if isinstance(last, TextMessage) and last.source != "user" else None


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    RECORDER.batches.clear()
    MODEL.requests.clear()
    agent, client = make_agent()  # emits a create_agent span, in a trace of its own
    PROVIDER.force_flush()  # ... exported in a batch of its own
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        result = await agent.run(task=text)
        finals.append(final_text(result))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    tool_messages_sent = [
        message["content"]
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
        if message.get("role") == "tool"
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=None,  # no session or conversation id reaches any span
        tool_error_contains="RefundWindowExpired",
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    await agent.close()
    await client.close()
    common.write_scenario(FOLDER, capture)


NOTES = (
    "AutoGen AgentChat AssistantAgent (max_tool_iterations=10, reflect_on_tool_use=True) + "
    "OpenAIChatCompletionClient over a scripted loopback Chat Completions server; AutoGen's "
    "own GenAI spans only (tracer autogen-core, global provider; no content switch exists). "
    "Spans: 'create_agent music_store_support' (CLIENT, when the agent is constructed, a "
    "trace of its own: stray_traces), 'invoke_agent music_store_support' (CLIENT, root of "
    "each turn's trace) with children 'execute_tool <tool>' (INTERNAL; gen_ai.tool.name, "
    "gen_ai.tool.call.id, gen_ai.tool.description). gen_ai.system=autogen, "
    "gen_ai.operation.name on all. NO model spans, and NO content anywhere: no user input, "
    "no final answer, no tool arguments or results, no messages. The refused refund raises: "
    "execute_tool status ERROR ('StoreError: ...', the SDK's description), error.type "
    "StoreError, two identical exception events (AutoGen's record_exception and the SDK's); "
    "the workbench catches it and the model gets str(exc) as an is_error tool result. "
    "multi_turn: one agent instance (history in its model context); no session id on any "
    "span (labelled null)."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
