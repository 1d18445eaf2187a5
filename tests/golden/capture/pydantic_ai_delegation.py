"""Capture pydantic-ai agent delegation (a front-desk agent whose tool runs a store agent)
with pydantic-ai's own OpenTelemetry instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-pai-deleg
    /tmp/cap-pai-deleg/bin/pip install 'pydantic-ai-slim[openai]' opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-pai-deleg/bin/python tests/golden/capture/pydantic_ai_delegation.py [scenario ...]'

Captured with pydantic-ai-slim 2.68.0 (pydantic-graph 2.68.0, genai-prices 0.2.3,
logfire-api 5.6.0: the no-op shim, no Logfire), openai 3.57.0, pydantic 2.14.4,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1, under ``unshare -rn`` (only loopback up).
Writes ``tests/golden/traces/pydantic-ai-delegation/``.

Two real ``pydantic_ai.Agent``s, both ``OpenAIChatModel`` over ``OpenAIProvider(base_url=
loopback, api_key=dummy)`` (the real ``openai.AsyncOpenAI`` client) against a loopback Chat
Completions server in this process that scripts the model's answers:

* ``music_store_support`` (the front desk, the run's entry agent) with one tool,
  ``ask_store(ctx, question)``, which runs the store agent the way pydantic-ai documents
  agent delegation: ``await store_agent.run(question, usage=ctx.usage)`` and returns its
  output;
* ``store`` (``common.SYSTEM_PROMPT`` as instructions) with the five store tools
  (``@agent.tool_plain``).

Instrumentation is pydantic-ai's own, nothing else: ``Agent.instrument_all(
InstrumentationSettings(tracer_provider=PROVIDER))`` (the current default data format,
version 5; the ``Agent(..., instrument=True)`` argument no longer exists in 2.68, whose
``instrument_all`` / ``Instrumentation`` capability replace it), the SDK TracerProvider
passed in (not set globally). No Logfire.

The scripted model tells the agents apart by the tools of each request (``ask_store`` is
offered to the front desk only). The front desk asks ``ask_store`` first, with the user's
text forwarded in a question of its own, and answers with the scenario's final text once
the tool message came back; the store agent's requests follow the scenario's script
(``common.Script``) and its final text is a report to the front desk that differs from the
final answer (so a trajectory that took the sub-agent's answer for the run's would show).
The refused refund raises pydantic-ai's ``ToolFailed`` (its documented "terminal tool
failure, tell the model" idiom) inside the store agent. ``multi_turn`` passes the front
desk's ``message_history=result.all_messages()`` across turns, with
``conversation_id=<session>`` on the first run (pydantic-ai's conversation id, recorded as
``gen_ai.conversation.id``); the store agent is run without history, as documented, and so
gets a fresh conversation id of its own each turn. ``llm_calls_per_turn`` counts every model
request of the turn (front desk and store); ``store_llm_calls_per_turn`` the store agent's.
"""

from __future__ import annotations

import asyncio
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

PROVIDER, RECORDER = common.make_provider("music-store-support-pydantic-ai")

from pydantic_ai import Agent, RunContext  # noqa: E402
from pydantic_ai.exceptions import ToolFailed  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

Agent.instrument_all(InstrumentationSettings(tracer_provider=PROVIDER))

FOLDER = common.TRACES / "pydantic-ai-delegation"
PACKAGES = (
    "pydantic-ai-slim",
    "pydantic-graph",
    "pydantic",
    "openai",
    "genai-prices",
    "logfire-api",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)
FRONT_AGENT = common.AGENT_NAME  # the entry agent the user talks to
STORE_AGENT = "store"
DELEGATE_TOOL = "ask_store"
FRONT_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. Hand every question about "
    "the catalogue, invoices or refunds to the store team with the ask_store tool, then answer "
    "the customer with what the store team found."
)
STORE_REPORT = "Store team report for the front desk: {final}"


def forwarded(user_text: str) -> str:
    """The question the front desk puts to the store agent."""
    return f"Customer request forwarded by the front desk: {user_text}"


class Router:
    """The scripted model's answers for both agents, one request at a time."""

    def __init__(self) -> None:
        self.front_calls: list[int] = []
        self.store_calls: list[int] = []
        self.user_text = ""

    def start_turn(self, user_text: str) -> None:
        self.user_text = user_text
        self.front_calls.append(0)
        self.store_calls.append(0)

    def __call__(self, body: scripted_model.Body) -> scripted_model.Body:
        script = common.active_script()
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        messages = body.get("messages") or []
        if DELEGATE_TOOL in tools:
            return self.front(body, script, messages)
        self.store_calls[-1] += 1
        calls, final = script.next_response()
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for cid, n, a in calls
            ]
        else:
            message["content"] = STORE_REPORT.format(final=final)
        return scripted_model.completion(
            body,
            message,
            response_id=f"chatcmpl_store_{script.scenario.name}_{script.turn}{script.step}",
            finish_reason="tool_calls" if calls else "stop",
        )

    def front(
        self, body: scripted_model.Body, script: common.Script, messages: list[dict[str, Any]]
    ) -> scripted_model.Body:
        step = self.front_calls[-1]
        self.front_calls[-1] += 1
        script.llm_calls[script.turn] += 1  # every model request of the turn is counted
        last = messages[-1] if messages else {}
        tag = script.scenario.name[:6]
        if last.get("role") != "tool":  # the user's message: delegate
            call_id = f"call_front_{tag}_{script.turn}{step}"
            arguments = json.dumps({"question": forwarded(self.user_text)})
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": DELEGATE_TOOL, "arguments": arguments},
                    }
                ],
            }
            finish = "tool_calls"
        else:  # the store's report came back: answer the customer
            message = {"role": "assistant", "content": script.scenario.turns[script.turn].final}
            finish = "stop"
        return scripted_model.completion(
            body,
            message,
            response_id=f"chatcmpl_front_{script.scenario.name}_{script.turn}{step}",
            finish_reason=finish,
        )


ROUTER = Router()
MODEL = scripted_model.ChatCompletions(ROUTER)
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"
_script = common.active_script


def _call(tool: str, **args: Any) -> dict[str, Any]:
    try:
        return dict(_script().call(tool, **args))
    except common.StoreError as exc:
        raise ToolFailed(str(exc)) from exc


def _model() -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=BASE_URL, api_key="sk-offline")
    return OpenAIChatModel(common.MODEL_NAME, provider=provider)


def make_store_agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(_model(), name=STORE_AGENT, instructions=common.SYSTEM_PROMPT)

    @agent.tool_plain
    def lookup_track(track_name: str) -> dict[str, Any]:
        """Look up a track in the catalogue by its exact name.

        Args:
            track_name: The exact track name.
        """
        return _call("lookup_track", track_name=track_name)

    @agent.tool_plain
    def lookup_album(album_title: str) -> dict[str, Any]:
        """Look up an album by its title.

        Args:
            album_title: The album title.
        """
        return _call("lookup_album", album_title=album_title)

    @agent.tool_plain
    def lookup_artist(artist_name: str) -> dict[str, Any]:
        """Look up an artist and the albums the store sells by them.

        Args:
            artist_name: The artist's name.
        """
        return _call("lookup_artist", artist_name=artist_name)

    @agent.tool_plain
    def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
        """Fetch an invoice of a customer (lines reference track ids).

        Args:
            customer_id: The customer's id.
            invoice_id: The invoice id.
        """
        return _call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id)

    @agent.tool_plain
    def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
        """Refund one purchased track of an invoice.

        Args:
            invoice_id: The invoice id.
            track_id: The track to refund.
            reason: Why the customer wants the refund.
        """
        return _call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)

    return agent


def make_front_agent(store_agent: Agent[None, str]) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(_model(), name=FRONT_AGENT, instructions=FRONT_PROMPT)

    @agent.tool
    async def ask_store(ctx: RunContext[None], question: str) -> str:
        """Ask the store team (catalogue, invoices, refunds) and get their report.

        Args:
            question: The customer's request, with everything the store team needs.
        """
        result = await store_agent.run(question, usage=ctx.usage)
        return result.output

    return agent


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    front_agent = make_front_agent(make_store_agent())
    RECORDER.batches.clear()
    MODEL.requests.clear()
    ROUTER.front_calls.clear()
    ROUTER.store_calls.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    history: list[Any] | None = None
    session = scenario.session_id
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        ROUTER.start_turn(text)
        before = len(RECORDER.spans)
        try:
            if history is None:
                result = await front_agent.run(text, conversation_id=session)
            else:
                result = await front_agent.run(text, message_history=history)
        except Exception as exc:
            run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
            finals.append(None)
        else:
            finals.append(result.output)
            if session:
                history = result.all_messages()
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session,
        run_errors=run_errors,
        extra={
            "front_llm_calls_per_turn": list(ROUTER.front_calls),
            "store_llm_calls_per_turn": list(ROUTER.store_calls),
            "delegation": {
                "entry_agent": FRONT_AGENT,
                "sub_agent": STORE_AGENT,
                "delegate_tool": DELEGATE_TOOL,
                "questions": [forwarded(text) for text in scenario.user_inputs],
            },
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "pydantic-ai agent delegation (front desk tool ask_store runs the store agent) with "
    "Agent.instrument_all(InstrumentationSettings(tracer_provider=...)); see NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
