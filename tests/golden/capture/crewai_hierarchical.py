"""Capture a CrewAI hierarchical crew (a manager agent delegating to a ``store`` worker
with CrewAI's own "Delegate work to coworker" tool) through openinference-instrumentation-
crewai's event listener.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-crewai-hier
    /tmp/cap-crewai-hier/bin/pip install crewai==1.15.30 openai==2.54.0 \
        openinference-instrumentation-crewai==1.1.21 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-common==1.45.2
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-crewai-hier/bin/python tests/golden/capture/crewai_hierarchical.py [scenario ...]'

Captured with crewai 1.15.30, openai 2.54.0, openinference-instrumentation-crewai 1.1.21,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1, under ``unshare -rn`` (only loopback up).
Writes ``tests/golden/traces/crewai-hierarchical-openinference/``.

The crew of ``crewai_crew.py`` turned hierarchical: ``Crew(process=Process.hierarchical,
manager_agent=<manager>)`` with one worker ``Agent`` (role ``store``, ``common.SYSTEM_PROMPT``
as backstory, the five ``@tool``s) and one ``Task`` without an agent whose description is
the customer's message. CrewAI gives the manager (role ``music_store_support``, no tools of
its own, as CrewAI requires) its delegation tools ``Delegate work to coworker`` and ``Ask
question to coworker`` (sent to the model as ``delegate_work_to_coworker`` /
``ask_question_to_coworker``); the delegation tool runs the worker inside its own
execution (``store.execute_task(Task(description=<task argument>), context)``) and returns
the worker's answer to the manager. Both agents use CrewAI's native OpenAI provider
(``LLM(provider="openai")`` → ``OpenAICompletion``) with the real ``openai`` client against
a loopback Chat Completions server in this process.

The scripted model tells the agents apart by the tools of each request (the delegation
tools are offered to the manager only). The manager first calls
``delegate_work_to_coworker(task=<forwarded request>, context=…, coworker="store")``, and
once the tool message came back answers with the scenario's final text; the worker's
requests follow the scenario's script (``common.Script``) and its last answer is a report
for the manager that differs from the final answer. Multi-turn memory is CrewAI's crew-chat
idiom (``inputs["crew_chat_messages"]``, appended to the task description, which only the
manager sees); the session id reaches the spans only through OpenInference's
``using_session()``. CrewAI's own telemetry and tracing are off. ``llm_calls_per_turn``
counts every model request of the turn (manager and worker); ``manager_llm_calls_per_turn``
and ``store_llm_calls_per_turn`` split them.
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
CREWAI_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",  # CrewAI's anonymous telemetry (its own provider)
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",  # CrewAI AMP tracing, and its first-run prompt
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # no PyPI look-up from the console formatter
}
os.environ.update(CREWAI_ENV)  # not OTEL_SDK_DISABLED: it would disable our provider too

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-crewai")
trace.set_tracer_provider(PROVIDER)

from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.events.event_bus import crewai_event_bus  # noqa: E402
from crewai.tools import tool  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402

CrewAIInstrumentor().instrument(tracer_provider=PROVIDER, use_event_listener=True)

FOLDER = common.TRACES / "crewai-hierarchical-openinference"
PACKAGES = (
    "crewai",
    "openai",
    "openinference-instrumentation-crewai",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)
MANAGER_ROLE = common.AGENT_NAME  # the entry agent the customer talks to
STORE_ROLE = "store"
DELEGATE_TOOL = "delegate_work_to_coworker"  # CrewAI's "Delegate work to coworker", sanitised
MANAGER_GOAL = "Answer the customers of the Tunes & Co music store and settle their requests."
MANAGER_BACKSTORY = (
    "You manage the support desk of Tunes & Co, a digital music store. Hand every question "
    "about the catalogue, invoices or refunds to the store coworker, then answer the customer "
    "with what the store found."
)
TASK_DESCRIPTION = "{customer_message}"
EXPECTED_OUTPUT = "The reply to send to the customer."
STORE_REPORT = "Store report for the manager: {final}"
DELEGATION_CONTEXT = (
    "A customer of Tunes & Co wrote to the support desk; settle it with the store tools."
)


def forwarded(user_text: str) -> str:
    """The task the manager delegates to the store worker."""
    return f"Customer request forwarded by the support desk: {user_text}"


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
        if DELEGATE_TOOL in tools:
            return self.manager(body, script)
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

    def manager(self, body: scripted_model.Body, script: common.Script) -> scripted_model.Body:
        step = self.manager_calls[-1]
        self.manager_calls[-1] += 1
        script.llm_calls[script.turn] += 1  # every model request of the turn is counted
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        tag = script.scenario.name[:6]
        if last.get("role") != "tool":  # the customer's request: delegate it
            arguments = {
                "task": forwarded(self.user_text),
                "context": DELEGATION_CONTEXT,
                "coworker": STORE_ROLE,
            }
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_manager_{tag}_{script.turn}{step}",
                        "type": "function",
                        "function": {"name": DELEGATE_TOOL, "arguments": json.dumps(arguments)},
                    }
                ],
            }
            finish = "tool_calls"
        else:  # the worker's report came back: answer the customer
            message = {"role": "assistant", "content": script.scenario.turns[script.turn].final}
            finish = "stop"
        return scripted_model.completion(
            body,
            message,
            response_id=f"chatcmpl_manager_{script.scenario.name}_{script.turn}{step}",
            finish_reason=finish,
        )


ROUTER = Router()
SERVER = scripted_model.ChatCompletions(ROUTER).serve()
BASE_URL = f"{SERVER.url}/v1"
_script = common.active_script


def scripted_llm() -> LLM:
    """CrewAI's native OpenAI provider (``OpenAICompletion``), pointed at the scripted server."""
    return LLM(
        model=common.MODEL_NAME,
        provider="openai",
        api_key="sk-offline",
        base_url=BASE_URL,
        max_retries=0,
    )


@tool("lookup_track")
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tool("lookup_album")
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tool("lookup_artist")
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool("lookup_invoice")
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool("refund")
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_crew() -> Crew:
    store = Agent(
        role=STORE_ROLE,
        goal="Settle the store requests the support desk hands you, with the store tools.",
        backstory=common.SYSTEM_PROMPT,
        llm=scripted_llm(),
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        allow_delegation=False,
        verbose=False,
    )
    manager = Agent(
        role=MANAGER_ROLE,
        goal=MANAGER_GOAL,
        backstory=MANAGER_BACKSTORY,
        llm=scripted_llm(),
        allow_delegation=True,
        verbose=False,
    )
    task = Task(description=TASK_DESCRIPTION, expected_output=EXPECTED_OUTPUT)
    return Crew(
        agents=[store],
        tasks=[task],
        process=Process.hierarchical,
        manager_agent=manager,
        verbose=False,
        tracing=False,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    crew = make_crew()
    history: list[dict[str, str]] = []
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        ROUTER.start_turn(text)
        before = len(RECORDER.spans)
        inputs: dict[str, Any] = {"customer_message": text}
        if history:  # CrewAI's crew-chat idiom (crewai.utilities.crew_chat)
            inputs["crew_chat_messages"] = json.dumps(history)
        if scenario.session_id:
            with using_session(scenario.session_id):
                output = crew.kickoff(inputs=inputs)
        else:
            output = crew.kickoff(inputs=inputs)
        assert isinstance(output, CrewOutput)  # not a streaming crew
        finals.append(output.raw or None)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": output.raw}]
        crewai_event_bus.flush()  # the listener ends the crew span from the event bus
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
            "use_event_listener=True; Process.hierarchical with manager_agent (role "
            f"{MANAGER_ROLE}, CrewAI's delegation tools only) and one worker (role "
            f"{STORE_ROLE}, the five store tools); the manager calls {DELEGATE_TOOL} "
            "(coworker='store'), which runs the worker inside the tool, then answers; both "
            "agents on CrewAI's native OpenAI provider against a scripted loopback server; "
            "session.id only through openinference using_session() around each kickoff; "
            "multi_turn history through inputs['crew_chat_messages']"
        ),
        session_id=scenario.session_id,
        extra={
            "telemetry_env": CREWAI_ENV,
            "manager_llm_calls_per_turn": list(ROUTER.manager_calls),
            "store_llm_calls_per_turn": list(ROUTER.store_calls),
            "delegation": {
                "entry_agent": MANAGER_ROLE,
                "worker_agent": STORE_ROLE,
                "tool": DELEGATE_TOOL,
                "tasks": [forwarded(text) for text in scenario.user_inputs],
                "context": DELEGATION_CONTEXT,
            },
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
