"""Capture Microsoft AutoGen AgentChat through openinference-instrumentation-autogen-agentchat.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-autogen-oi
    /tmp/cap-autogen-oi/bin/pip install autogen-agentchat "autogen-ext[openai]" \
        openinference-instrumentation-autogen-agentchat \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-autogen-oi/bin/python \
        tests/golden/capture/autogen_agentchat_openinference.py [scenario ...]

Captured with autogen-agentchat / autogen-core / autogen-ext 0.7.5, openai 3.57.0, tiktoken
0.14.0, openinference-instrumentation-autogen-agentchat 0.1.22, openinference-instrumentation
0.1.72, openinference-semantic-conventions 0.1.42, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 5.29.6 (what pip resolved for this set).
Writes ``tests/golden/traces/autogen-agentchat-openinference/``. The script name cannot shadow
the ``autogen_agentchat`` package.

Same agent as ``autogen_assistant.py``: a real ``AssistantAgent`` named
``music_store_support`` with plain functions as tools (``FunctionTool`` through its
``StaticWorkbench``), ``max_tool_iterations=10``, ``reflect_on_tool_use=True``, and
``OpenAIChatCompletionClient`` (real ``openai.AsyncOpenAI``) pointed at a loopback server in
this process scripting the Chat Completions answers. One ``await agent.run(task=text)`` per
user turn; ``multi_turn``: one agent instance for the three turns, each turn inside
OpenInference's documented ``using_session(session_id)`` context manager (the
instrumentation copies the context attributes onto its spans).

Instrumentation: ``AutogenAgentChatInstrumentor().instrument(tracer_provider=PROVIDER)``
only. The global tracer provider is NOT set, so AutoGen's own GenAI spans (tracer
``autogen-core``, global provider) go to the no-op provider and are not captured (they are
in ``autogen-agentchat``).
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

PROVIDER, RECORDER = common.make_provider("music-store-support-autogen-agentchat-oi")
# The global provider stays the no-op default: AutoGen's own spans are not captured here.

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.autogen_agentchat import (  # noqa: E402
    AutogenAgentChatInstrumentor,
)

AutogenAgentChatInstrumentor().instrument(tracer_provider=PROVIDER)

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.base import TaskResult  # noqa: E402
from autogen_agentchat.messages import TextMessage  # noqa: E402
from autogen_core.models import ModelInfo  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402

FOLDER = common.TRACES / "autogen-agentchat-openinference"
PACKAGES = (
    "autogen-agentchat",
    "autogen-core",
    "autogen-ext",
    "openai",
    "openinference-instrumentation-autogen-agentchat",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
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
    agent, client = make_agent()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        if scenario.session_id is not None:
            with using_session(scenario.session_id):
                result = await agent.run(task=text)
        else:
            result = await agent.run(task=text)
        finals.append(final_text(result))
        # AssistantAgent.on_messages returns at the Response without exhausting
        # on_messages_stream; the instrumentation's AGENT span ends when that suspended
        # generator is finalized, which asyncio schedules (aclose) on the next loop
        # iteration. Let the loop run once, as any live application's loop would.
        await asyncio.sleep(0)
        await asyncio.sleep(0)
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
        session_id=scenario.session_id,
        tool_error_contains="RefundWindowExpired",
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    await agent.close()
    await client.close()
    common.write_scenario(FOLDER, capture)


NOTES = (
    "AutoGen AgentChat AssistantAgent (max_tool_iterations=10, reflect_on_tool_use=True) + "
    "OpenAIChatCompletionClient over a scripted loopback Chat Completions server, traced by "
    "openinference-instrumentation-autogen-agentchat only (AutoGen's own spans go to the "
    "no-op global provider). All spans INTERNAL, one trace per turn: root AGENT "
    "'music_store_support.on_messages_stream' (graph.node.id = agent name, "
    "graph.node.parent_id 'start', input.value = JSON of on_messages' bound arguments with "
    "each message as a pydantic str() repr; NO output.value), children LLM "
    "'OpenAIChatCompletionClient.create' (llm.input_messages.* whole request, tool results "
    "as role 'function' with llm.input_messages.N.function.0 = JSON {name, content}, no "
    "tool_call_id; llm.output_messages.0 with tool_calls ids; output.value JSON "
    "CreateResult; token counts) and TOOL '<agent>.<tool>' (tool.name, tool.description, "
    "tool.parameters = input.value = the arguments JSON, output.value = the result text; "
    "NO tool call id). The AGENT span ends only when asyncio finalizes the suspended "
    "on_messages_stream generator (the script yields to the loop before flushing). "
    "tool_error: the refund TOOL span has status OK although the result is_error: the "
    "wrapper sets OK, then ERROR, and the SDK ignores a status change after OK; only "
    "output.value 'RefundWindowExpired: ...' says it. multi_turn: using_session() puts "
    "session.id on every span; each turn's first LLM request replays the earlier turns."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
