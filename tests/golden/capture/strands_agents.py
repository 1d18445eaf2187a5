"""Capture Strands Agents' native OpenTelemetry spans (``strands.telemetry.tracer``).

Not run in CI. Run it in a venv of its own (never evald's)::

    python3.12 -m venv /tmp/cap-strands
    /tmp/cap-strands/bin/pip install strands-agents opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-strands/bin/python tests/golden/capture/strands_agents.py [--latest] [scenario ...]

Writes ``tests/golden/traces/strands/`` (default conventions: tool arguments and
results only in span events), or with ``--latest``
``tests/golden/traces/strands-latest-semconv/``
(``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``).

Real ``Agent`` event loop, ``@tool`` functions and the default concurrent tool
executor; only the model is scripted (a ``Model`` subclass streaming the script's
next response). The refused refund raises, the Strands way: the SDK turns it into
an error ``ToolResult`` and the model sees the message.
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
LATEST = "--latest" in sys.argv
if LATEST:
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"

import common  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-strands")
trace.set_tracer_provider(PROVIDER)

from strands import Agent, tool  # noqa: E402
from strands.models.model import Model  # noqa: E402

FOLDER = common.TRACES / ("strands-latest-semconv" if LATEST else "strands")


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
        "; latest semconv: arguments/results as gen_ai.tool.call.* attributes, messages in "
        "gen_ai.client.inference.operation.details events"
        if LATEST
        else "; default: tool arguments only in event gen_ai.tool.message, results in "
        "event gen_ai.choice"
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions("strands-agents", "opentelemetry-sdk"),
        notes=notes,
        session_id=scenario.session_id,
        extra={"telemetry_env": {k: v for k, v in os.environ.items() if k.startswith("OTEL_")}},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
