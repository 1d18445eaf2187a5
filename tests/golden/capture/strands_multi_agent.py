"""Capture a Strands Agents ``Swarm`` (front desk → store agent) with Strands' native tracer.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-strands-multi
    /tmp/cap-strands-multi/bin/pip install strands-agents opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-strands-multi/bin/python \
        tests/golden/capture/strands_multi_agent.py [scenario ...]'

Captured with strands-agents 1.62.0, opentelemetry-sdk / -api 1.45.1,
opentelemetry-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1,
under ``unshare -rn`` (only loopback up). Writes ``tests/golden/traces/strands-multi-agent/``
(default conventions, as ``strands_agents.py`` without ``--latest``).

A real ``strands.multiagent.Swarm`` of two real ``Agent``s: ``front_desk`` (the entry
point, no tools of its own) and ``store`` (``common.SYSTEM_PROMPT``, the five store
``@tool``s of ``strands_agents.py``). The hop is Swarm's own mechanism: Swarm injects its
``handoff_to_agent(agent_name, message, context)`` tool into every node; a call records the
target, the calling agent's event loop goes on to its end (so the front desk's model is
asked once more, after the tool result, and answers a short text), then the Swarm runs the
target node with a "Context:" prompt of its own (handoff message, "User Request: <task>",
other agents). Only the model is scripted (one ``Model`` subclass streaming Bedrock-style
events, shared by both agents); it tells the agents apart by the tool specs of each request
(a request offering the store tools is the store agent's and follows the scenario script;
any other is the front desk's: ``handoff_to_agent(agent_name="store")`` first, a short
hand-over text once the tool result came back). The store agent never hands off, so the
Swarm completes with it and the run's answer is the store agent's last message.

Session: ``multi_turn`` runs its three turns through one ``Swarm`` with Strands' own
``FileSessionManager(session_id=<session>)`` (in a temporary directory; Swarm persists its
state there, and a completed run starts the next invocation afresh from the entry point;
Swarm resets each node's messages before it runs, so the agents keep no history across
turns, as Strands documents). The session id reaches the spans only the way Strands
documents it, ``trace_attributes={"session.id": ...}`` on the ``Swarm`` and on both
``Agent``s; one-shot scenarios set only ``user.id``. ``llm_calls_per_turn`` counts every
model request of the turn (front desk and store); ``model_requests`` says whose each was.
The refused refund raises, the Strands way (error ``ToolResult``, span status ERROR).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-strands-swarm")
trace.set_tracer_provider(PROVIDER)

from strands import Agent, tool  # noqa: E402
from strands.models.model import Model  # noqa: E402
from strands.multiagent import Swarm  # noqa: E402
from strands.session.file_session_manager import FileSessionManager  # noqa: E402

FOLDER = common.TRACES / "strands-multi-agent"
FRONT_NAME = "front_desk"
STORE_NAME = "store"
FRONT_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. You do not handle orders "
    "yourself: hand every customer request over to the store agent with handoff_to_agent."
)
STORE_TOOLS = {"lookup_track", "lookup_album", "lookup_artist", "lookup_invoice", "refund"}
HANDOFF_TEXT = "I have handed your request over to our store team."

_script = common.active_script


def forwarded(user_text: str) -> str:
    """The hand-over message the front desk writes for the store agent."""
    return f"Customer request for the store team: {user_text}"


class Routing:
    """Per-turn state of the front desk's requests (the store agent's are the script's)."""

    turn = -1
    front_requests = 0
    user_text = ""
    handoffs: ClassVar[list[dict[str, Any]]] = []
    requests: ClassVar[list[dict[str, Any]]] = []


class ScriptedModel(Model):
    """The store agent's requests stream the scenario script's next response; the front
    desk's stream a hand-over to the store agent, then a short text."""

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

    def _front(self, script: common.Script, tools: set[str]) -> tuple[list[Any], str | None]:
        if Routing.turn != script.turn:
            Routing.turn, Routing.front_requests = script.turn, 0
        Routing.front_requests += 1
        script.llm_calls[script.turn] += 1  # a model request, not a step of the script
        if "handoff_to_agent" not in tools:
            raise RuntimeError(f"front desk request without handoff_to_agent: {tools}")
        if Routing.front_requests == 1:
            call_id = f"tooluse_{script.scenario.name[:6]}_{script.turn}handoff"
            args = {"agent_name": STORE_NAME, "message": forwarded(Routing.user_text)}
            Routing.handoffs.append({"turn": script.turn, "call_id": call_id, "args": args})
            return [(call_id, "handoff_to_agent", args)], None
        if Routing.front_requests == 2:
            return [], HANDOFF_TEXT
        raise RuntimeError(f"unexpected front desk request {Routing.front_requests}")

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterable[Any]:
        script = _script()
        tools = {spec.get("name") for spec in tool_specs or []}
        is_store = bool(tools & STORE_TOOLS)
        Routing.requests.append(
            {
                "turn": script.turn,
                "agent": STORE_NAME if is_store else FRONT_NAME,
                "tools": sorted(t for t in tools if t),
            }
        )
        if is_store:
            calls, final = script.next_response()
        else:
            calls, final = self._front(script, tools)
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


def _text(message: Any) -> str | None:
    content = (message or {}).get("content", [])
    return "".join(block.get("text", "") for block in content if "text" in block) or None


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "tooluse")
    Routing.turn, Routing.front_requests = -1, 0
    Routing.handoffs, Routing.requests = [], []
    attributes: dict[str, str] = {"user.id": "customer-17"}
    if scenario.session_id:
        attributes["session.id"] = scenario.session_id
    model = ScriptedModel()
    front = Agent(
        model=model,
        name=FRONT_NAME,
        description="Front desk of the Tunes & Co music store.",
        system_prompt=FRONT_PROMPT,
        trace_attributes=attributes,
        callback_handler=None,
    )
    store = Agent(
        model=model,
        name=STORE_NAME,
        description="Customer support of the Tunes & Co music store: invoices, catalogue "
        "look-ups and refunds.",
        system_prompt=common.SYSTEM_PROMPT,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        trace_attributes=attributes,
        callback_handler=None,
    )
    storage = tempfile.TemporaryDirectory(prefix="strands-sessions-")
    session_manager = (
        FileSessionManager(session_id=scenario.session_id, storage_dir=storage.name)
        if scenario.session_id
        else None
    )
    swarm = Swarm(
        [front, store],
        entry_point=front,
        session_manager=session_manager,
        trace_attributes=attributes,
    )
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    node_histories: list[list[str]] = []
    node_answers: list[dict[str, str | None]] = []
    statuses: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        Routing.user_text = text
        before = len(RECORDER.spans)
        result = await swarm.invoke_async(text)
        history = [node.node_id for node in result.node_history]
        answers = {
            node_id: _text(node_result.result.message)
            for node_id, node_result in result.results.items()
            if hasattr(node_result.result, "message")
        }
        finals.append(answers.get(history[-1]) if history else None)
        node_histories.append(history)
        node_answers.append(answers)
        statuses.append(str(result.status.value))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    storage.cleanup()
    notes = (
        "multi-agent: strands.multiagent.Swarm([front_desk, store], entry_point=front_desk); "
        "the front desk's first model call requests Swarm's injected handoff_to_agent"
        "(agent_name='store', message=...), run as an execute_tool span inside the front "
        "desk's invoke_agent; the front desk's loop then asks its model once more (it answers "
        "a short hand-over text); the Swarm then runs the store agent as a sibling "
        "invoke_agent span under invoke_swarm, with a 'Context:' prompt of Swarm's own. "
        "llm_calls_per_turn counts the front desk's two model calls too. Session only via "
        "trace_attributes={'session.id': ...} on Swarm and both Agents (multi_turn also "
        "persists the Swarm with FileSessionManager); one-shot scenarios set only user.id. "
        "invoke_swarm records the user's task (gen_ai.user.message event) but no answer: "
        "Tracer.end_swarm_span exists and is never called in strands-agents 1.62.0. The "
        "refused refund raises: Strands catches it (execute_tool status ERROR)"
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(
            "strands-agents",
            "opentelemetry-sdk",
            "opentelemetry-api",
            "opentelemetry-exporter-otlp-proto-common",
            "opentelemetry-proto",
            "protobuf",
        ),
        notes=notes,
        session_id=scenario.session_id,
        extra={
            "telemetry_env": {k: v for k, v in os.environ.items() if k.startswith("OTEL_")},
            "agents": {"root": FRONT_NAME, "sub_agent": STORE_NAME},
            "handoffs": Routing.handoffs,
            "model_requests": Routing.requests,
            "node_history_per_turn": node_histories,
            "node_answers_per_turn": node_answers,
            "swarm_status_per_turn": statuses,
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
