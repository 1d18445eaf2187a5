"""Capture smolagents managed agents (a manager ToolCallingAgent whose team member is a store
ToolCallingAgent) + openinference-instrumentation-smolagents.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-smol-managed
    /tmp/cap-smol-managed/bin/pip install smolagents openai \
        openinference-instrumentation-smolagents opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-smol-managed/bin/python tests/golden/capture/smolagents_managed.py [scenario ...]'

Captured with smolagents 1.26.0, openai 3.57.0, openinference-instrumentation-smolagents
0.1.43, openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1, under ``unshare -rn`` (only loopback up).
Writes ``tests/golden/traces/smolagents-managed-openinference/``.

Two real smolagents ``ToolCallingAgent``s, both on ``OpenAIServerModel`` (the real ``openai``
client) pointed at a loopback Chat Completions server in this process that scripts the
model's answers, wired the way smolagents documents multi-agent systems:

* ``music_store_support``, the manager (the agent the user talks to), with no tools of its
  own and ``managed_agents=[store]``: smolagents offers the managed agent to the model as a
  tool named ``store`` (arguments ``task``, ``additional_args``) and, when the model calls it,
  runs ``store(task=...)`` (``MultiStepAgent.__call__``: the managed-agent task template
  around the task, a fresh ``run``, the report template around its answer);
* ``store`` (``name`` and ``description`` set, ``common.SYSTEM_PROMPT`` as instructions) with
  the five store tools (``@tool``).

The scripted model tells the agents apart by the tools of each request (``store`` is offered
to the manager only). The manager first calls ``store`` with a task of its own (the user's
text forwarded), then, once the report came back, answers through smolagents'
``final_answer`` tool with the scenario's final text (smolagents' ToolCallingAgent sends
``tool_choice="required"`` and ends a run only through ``final_answer``). The store agent
follows the scenario's script (``common.Script``) and ends with ``final_answer`` of a report
that differs from the final answer (``"Store team report for the manager: <final>"``), so a
trajectory that took the sub-agent's answer for the run's would show. The refused refund
raises inside the store tool (smolagents wraps it in ``AgentToolExecutionError``; the store
agent's next model call sees it).

Multi-turn: the manager runs ``agent.run(text, reset=False)`` after the first turn, as
smolagents documents for a conversation; the managed agent is run by smolagents itself with
its default ``reset=True`` (a fresh memory per task). The session id goes on the spans only
through OpenInference's documented ``using_session(session_id)`` context around each turn.
``llm_calls_per_turn`` counts every model request of the turn (manager and store); the extra
keys ``manager_llm_calls_per_turn`` / ``store_llm_calls_per_turn`` split them.
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

PROVIDER, RECORDER = common.make_provider("music-store-support-smolagents")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.smolagents import SmolagentsInstrumentor  # noqa: E402

SmolagentsInstrumentor().instrument(tracer_provider=PROVIDER)

from smolagents import OpenAIServerModel, ToolCallingAgent, tool  # noqa: E402

FOLDER = common.TRACES / "smolagents-managed-openinference"
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
MANAGER_AGENT = common.AGENT_NAME  # the agent the user talks to
STORE_AGENT = "store"
STORE_DESCRIPTION = (
    "The store team: looks up tracks, albums, artists and invoices and refunds purchased "
    "tracks. Give it the customer's request with everything it needs."
)
MANAGER_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. Hand every question about "
    "the catalogue, invoices or refunds to your team member 'store', then answer the customer "
    "with what the store team found."
)
STORE_REPORT = "Store team report for the manager: {final}"


def forwarded(user_text: str) -> str:
    """The task the manager gives the store agent."""
    return f"Customer request forwarded by the front desk: {user_text}"


def _tool_calls(calls: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for cid, name, args in calls
    ]


class Router:
    """The scripted model's answers for both agents, one request at a time."""

    def __init__(self) -> None:
        self.manager_calls: list[int] = []
        self.store_calls: list[int] = []
        self.user_text = ""

    def start_turn(self, user_text: str) -> None:
        self.user_text = user_text
        self.manager_calls.append(0)
        self.store_calls.append(0)

    def __call__(self, body: scripted_model.Body) -> scripted_model.Body:
        script = common.active_script()
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        if STORE_AGENT in tools:
            return self.manager(body, script)
        self.store_calls[-1] += 1
        calls, final = script.next_response()
        tag = script.scenario.name[:6]
        if final is not None:
            calls = [
                (
                    f"call_{tag}_{script.turn}{script.step}0",
                    "final_answer",
                    {"answer": STORE_REPORT.format(final=final)},
                )
            ]
        message: dict[str, Any] = {"role": "assistant", "content": None}
        message["tool_calls"] = _tool_calls(calls)
        return scripted_model.completion(
            body,
            message,
            response_id=f"chatcmpl_store_{script.scenario.name}_{script.turn}{script.step}",
            finish_reason="tool_calls",
        )

    def manager(self, body: scripted_model.Body, script: common.Script) -> scripted_model.Body:
        step = self.manager_calls[-1]
        self.manager_calls[-1] += 1
        script.llm_calls[script.turn] += 1  # every model request of the turn is counted
        tag = script.scenario.name[:6]
        call_id = f"call_mgr_{tag}_{script.turn}{step}"
        if step == 0:  # this turn's user request: hand it to the store team
            calls = [(call_id, STORE_AGENT, {"task": forwarded(self.user_text)})]
        else:  # the store's report came back: answer the customer
            calls = [
                (call_id, "final_answer", {"answer": script.scenario.turns[script.turn].final})
            ]
        message: dict[str, Any] = {"role": "assistant", "content": None}
        message["tool_calls"] = _tool_calls(calls)
        return scripted_model.completion(
            body,
            message,
            response_id=f"chatcmpl_mgr_{script.scenario.name}_{script.turn}{step}",
            finish_reason="tool_calls",
        )


ROUTER = Router()
ENDPOINT = scripted_model.ChatCompletions(ROUTER)
SERVER = ENDPOINT.serve()
BASE_URL = f"{SERVER.url}/v1"
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


def _model() -> OpenAIServerModel:
    return OpenAIServerModel(
        model_id=common.MODEL_NAME,
        api_base=BASE_URL,
        api_key="sk-offline",
        client_kwargs={"max_retries": 0},
    )


def make_manager() -> ToolCallingAgent:
    store = ToolCallingAgent(
        tools=TOOLS,
        model=_model(),
        name=STORE_AGENT,
        description=STORE_DESCRIPTION,
        instructions=common.SYSTEM_PROMPT,
        max_steps=8,
        verbosity_level=0,
    )
    return ToolCallingAgent(
        tools=[],
        model=_model(),
        managed_agents=[store],
        name=MANAGER_AGENT,
        instructions=MANAGER_PROMPT,
        max_steps=8,
        verbosity_level=0,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    manager = make_manager()
    RECORDER.batches.clear()
    ENDPOINT.requests.clear()
    ROUTER.manager_calls.clear()
    ROUTER.store_calls.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        ROUTER.start_turn(text)
        before = len(RECORDER.spans)
        try:
            if scenario.session_id:
                with using_session(scenario.session_id):
                    result = manager.run(text, reset=(turn == 0))
            else:
                result = manager.run(text, reset=(turn == 0))
        except Exception as exc:
            run_errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
            finals.append(None)
        else:
            finals.append(str(result) if result is not None else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    last = ENDPOINT.requests[-1] if ENDPOINT.requests else {}
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
            "manager_llm_calls_per_turn": list(ROUTER.manager_calls),
            "store_llm_calls_per_turn": list(ROUTER.store_calls),
            "delegation": {
                "entry_agent": MANAGER_AGENT,
                "sub_agent": STORE_AGENT,
                "delegate_tool": STORE_AGENT,
                "tasks": [forwarded(text) for text in scenario.user_inputs],
            },
            "messages_in_last_request": len(last.get("messages") or []),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "smolagents managed agents (manager ToolCallingAgent with managed_agents=[store]; the model "
    "calls the team member like a tool named 'store') + openinference-instrumentation-smolagents; "
    "both agents answer through final_answer; see NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
