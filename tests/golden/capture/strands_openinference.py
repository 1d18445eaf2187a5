"""Capture Strands Agents' spans as OpenInference sees them (Arize's span processor).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-strands-openinference
    /tmp/cap-strands-openinference/bin/pip install strands-agents \
        openinference-instrumentation-strands-agents opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-strands-openinference/bin/python tests/golden/capture/strands_openinference.py \
        [scenario ...]

Captured with strands-agents 1.62.0, openinference-instrumentation-strands-agents 0.1.12,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk 1.45.1 (Python 3.12.1). Writes ``tests/golden/traces/strands-openinference/``.

The agent of ``strands_agents.py``: a real ``Agent`` event loop named
``music_store_support``, the store's five ``@tool`` functions and the default concurrent
tool executor; only the model is scripted (a ``Model`` subclass streaming the script's
next response as Bedrock-style stream events). The refused refund raises, the Strands
way: the SDK turns it into an error ``ToolResult`` and the model sees the message.

Instrumentation as the package's README shows: ``StrandsTelemetry()`` builds the SDK
tracer provider (service name from ``OTEL_SERVICE_NAME``) and sets it global, then
``StrandsAgentsToOpenInferenceProcessor()`` is added *before* the exporting processor (it
rewrites each Strands span in place when it ends: OpenInference ``llm.*``/``tool.*``/
``input.value``/``output.value`` attributes next to Strands' own ``gen_ai.*`` ones, the
``gen_ai.*`` events dropped). Content capture: Strands records prompts, completions and
tool arguments/results by default, and OpenInference's ``OPENINFERENCE_HIDE_*`` switches
are left unset (everything kept). Export: a ``BatchSpanProcessor`` into ``common``'s
in-memory ``BatchRecorder``, flushed after each user turn (one export batch per turn),
written by ``common.write_scenario``. Strands' default (not the latest) GenAI conventions.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OTEL_SERVICE_NAME", "music-store-support-strands-openinference")

import common
from openinference.instrumentation.strands_agents import (
    StrandsAgentsToOpenInferenceProcessor,
)
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from strands import Agent, tool
from strands.models.model import Model
from strands.telemetry import StrandsTelemetry

TELEMETRY = StrandsTelemetry()
PROVIDER = TELEMETRY.tracer_provider
# The processor first: it mutates the spans the exporting processor then sees.
PROVIDER.add_span_processor(StrandsAgentsToOpenInferenceProcessor())
RECORDER = common.BatchRecorder()
PROVIDER.add_span_processor(
    BatchSpanProcessor(
        RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
    )
)

FOLDER = common.TRACES / "strands-openinference"


_script = common.active_script


class ScriptedModel(Model):
    """Streams the scenario script's next response as Bedrock-style stream events."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"model_id": common.MODEL_NAME}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any
    ) -> Any:
        raise NotImplementedError
        yield {}

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterable[Any]:
        calls, final = _script().next_response()
        yield {"messageStart": {"role": "assistant"}}
        if final is not None:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": final}}}
            yield {"contentBlockStop": {}}
        for call_id, name, args in calls:
            yield {
                "contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}
            }
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn" if final is not None else "tool_use"}}
        prompt_tokens = 50 + 10 * len(messages)
        yield {
            "metadata": {
                "usage": {
                    "inputTokens": prompt_tokens,
                    "outputTokens": 12,
                    "totalTokens": prompt_tokens + 12,
                },
                "metrics": {"latencyMs": 5},
            }
        }


@tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name: The exact track name.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title.

    Args:
        album_title: The album title.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name: The artist's name.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id: The customer's id.
        invoice_id: The invoice id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice.

    Args:
        invoice_id: The invoice id.
        track_id: The track to refund.
        reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "tooluse")
    attributes = {"user.id": "customer-17"}
    if scenario.session_id:
        attributes["session.id"] = scenario.session_id
    agent = Agent(
        model=ScriptedModel(),
        name=common.AGENT_NAME,
        system_prompt=common.SYSTEM_PROMPT,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        trace_attributes=attributes,
        callback_handler=None,
    )
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        result = await agent.invoke_async(text)
        content = result.message.get("content", [])
        finals.append("".join(block.get("text", "") for block in content) or None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    notes = (
        "session only via Agent(trace_attributes={'session.id': ...}), copied onto every span; "
        "one-shot scenarios set only user.id. The refused refund raises: Strands catches it "
        "(execute_tool status ERROR, gen_ai.tool.status), the model sees 'Error: ...'"
    )
    notes += (
        "; OpenInference's span processor rewrites each span in place: tool.parameters / "
        "input.value / output.value and llm.input_messages / llm.output_messages added, "
        "the gen_ai.* events removed"
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(
            "strands-agents",
            "openinference-instrumentation-strands-agents",
            "openinference-instrumentation",
            "openinference-semantic-conventions",
            "opentelemetry-sdk",
        ),
        notes=notes,
        session_id=scenario.session_id,
        extra={
            "telemetry_env": {
                k: v for k, v in os.environ.items() if k.startswith(("OTEL_", "OPENINFERENCE_"))
            }
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
