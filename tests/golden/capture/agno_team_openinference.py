"""Capture an Agno ``Team`` (a leader delegating to a ``store`` member) through OpenInference.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-agnoteam
    /tmp/cap-agnoteam/bin/pip install agno openai openinference-instrumentation-agno \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-agnoteam/bin/python tests/golden/capture/agno_team_openinference.py'

Captured with agno 3.1.10, openai 3.57.0, openinference-instrumentation-agno 1.0.15,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1. Writes ``tests/golden/traces/agno-team-openinference/``.

Two agents: a real ``agno.team.Team`` (name ``music_store_support``, the leader, Agno's
default ``TeamMode.coordinate``: the leader picks one member, writes its task, and answers
from the member's result) whose only member is a real ``agno.agent.Agent`` named
``store`` holding the five store tools as plain Python functions (the tools of
``agno_openinference.py``). The hand-over is Agno's own member-delegation tool,
``delegate_task_to_member(member_id, task)``, which the Team gives its leader model and
which runs the member's ``arun`` inside the tool call. Both use Agno's ``OpenAIChat``
(Chat Completions, real ``openai.AsyncOpenAI`` client) pointed at one loopback HTTP server
in this process (``scripted_model.ChatCompletions``) whose answers this script routes: a
request offering ``delegate_task_to_member`` is the leader's (first in a turn: the
delegation call; after the member answered: the final answer, the member's text relayed), a
request offering the store tools is the member's and gets the scenario script's next
response (its tool rounds, then the final text). One ``await team.arun(text)`` per user
turn. The refused refund raises inside the tool; Agno catches it and sends the exception
text to the member's model.

``multi_turn``: Agno's documented chat memory on the team: ``Team(db=InMemoryDb(),
add_history_to_context=True)`` and the session id passed to each ``team.arun(text,
session_id=...)``; the instrumentation records it as ``session.id`` itself (no
``using_session()``). Agno's telemetry (``AGNO_TELEMETRY=false`` and ``telemetry=False`` on
the team and the member) is off, ``OTEL_EXPORTER_OTLP_*`` and ``OPENAI_*`` are removed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
AGNO_ENV = {"AGNO_TELEMETRY": "false"}  # Agno's anonymous run telemetry (os-api.agno.com)
os.environ.update(AGNO_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-agno-team")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation.agno import AgnoInstrumentor  # noqa: E402

AgnoInstrumentor().instrument(tracer_provider=PROVIDER)

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from agno.team import Team  # noqa: E402

FOLDER = common.TRACES / "agno-team-openinference"
PACKAGES = (
    "agno",
    "openai",
    "openinference-instrumentation-agno",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)
LEADER = common.AGENT_NAME
STORE = "store"
DELEGATE_TOOL = "delegate_task_to_member"
LEADER_INSTRUCTIONS = (
    "You are the front desk of Tunes & Co, a digital music store. Hand every question about "
    f"tracks, albums, artists, invoices or refunds to the {STORE} member, then give the "
    "customer its answer."
)

_script = common.active_script


class Router:
    """The scripted model of both agents, told apart by the tools each request offers."""

    def __init__(self) -> None:
        self.leader_requests: dict[int, int] = {}  # per turn
        self.store_finals: dict[int, str | None] = {}  # the member's answer, per turn
        self.log: list[str] = []  # which agent asked, in order

    def reset(self) -> None:
        self.leader_requests.clear()
        self.store_finals.clear()
        self.log.clear()

    def __call__(self, body: scripted_model.Body) -> scripted_model.Body:
        script = _script()
        tools = {t["function"]["name"] for t in body.get("tools") or []}
        if DELEGATE_TOOL not in tools:
            if "refund" not in tools:
                raise scripted_model.NotScripted(500, f"request of an unknown agent: {tools}")
            self.log.append(f"{script.turn}:{STORE}")
            answer = scripted_model.chat_completion(body)
            self.store_finals[script.turn] = answer["choices"][0]["message"]["content"]
            return answer
        # The leader: not a step of the scenario's script, but a model call of the turn.
        self.log.append(f"{script.turn}:{LEADER}")
        script.llm_calls[script.turn] += 1
        count = self.leader_requests.get(script.turn, 0)
        self.leader_requests[script.turn] = count + 1
        tag = script.scenario.name[:6]
        response_id = f"chatcmpl_{script.scenario.name}_{script.turn}lead{count}"
        if count == 0:  # delegate the customer's request to the store member
            task = script.scenario.user_inputs[script.turn]
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_delegate_{tag}_{script.turn}",
                        "type": "function",
                        "function": {
                            "name": DELEGATE_TOOL,
                            "arguments": json.dumps({"member_id": STORE, "task": task}),
                        },
                    }
                ],
            }
            return scripted_model.completion(
                body, message, response_id=response_id, finish_reason="tool_calls"
            )
        if script.turn not in self.store_finals:
            raise scripted_model.NotScripted(500, "leader asked again before the member ran")
        final = script.scenario.turns[script.turn].final  # relays the member's answer
        return scripted_model.completion(
            body,
            {"role": "assistant", "content": final},
            response_id=response_id,
            finish_reason="stop",
        )


ROUTER = Router()
MODEL = scripted_model.ChatCompletions(ROUTER)  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


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


def chat_model() -> OpenAIChat:
    return OpenAIChat(id=common.MODEL_NAME, api_key="sk-offline", base_url=BASE_URL, max_retries=0)


def make_team(session_id: str | None) -> Team:
    store = Agent(
        name=STORE,
        model=chat_model(),
        instructions=common.SYSTEM_PROMPT,
        description="The store's catalogue, invoices and refunds.",
        role="Looks up tracks, albums, artists and invoices, and refunds tracks.",
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        telemetry=False,
    )
    memory: dict[str, Any] = {}
    if session_id is not None:  # Agno's chat memory on the team: a db, history on
        db = InMemoryDb()  # type: ignore[no-untyped-call]
        memory = {"db": db, "add_history_to_context": True}
    return Team(
        members=[store],
        name=LEADER,
        model=chat_model(),
        instructions=LEADER_INSTRUCTIONS,
        description="Customer support of the Tunes & Co music store.",
        telemetry=False,
        **memory,
    )


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    team = make_team(session)
    RECORDER.batches.clear()
    MODEL.requests.clear()
    ROUTER.reset()
    PROVIDER.force_flush()
    assert not RECORDER.spans, "team construction made spans"
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        if session:
            output = await team.arun(text, session_id=session)
        else:
            output = await team.arun(text)
        if output.status is not None and str(output.status.value) != "COMPLETED":
            run_errors.append(f"turn {turn}: run status {output.status}")
        finals.append(output.content if isinstance(output.content, str) else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    for model in (team.model, *(member.model for member in team.members)):  # type: ignore[union-attr]
        if isinstance(model, OpenAIChat) and model.async_client is not None:
            await model.async_client.close()  # inside this event loop, not at garbage collection
    store_requests = [
        body
        for body in MODEL.requests
        if DELEGATE_TOOL not in {t["function"]["name"] for t in body.get("tools") or []}
    ]
    tool_messages_sent = [
        message.get("content")
        for message in (store_requests[-1].get("messages") if store_requests else []) or []
        if message.get("role") == "tool"
    ]
    leader_last = next(
        (body for body in reversed(MODEL.requests) if body not in store_requests), {}
    )
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
            "telemetry_env": AGNO_ENV,
            "agents": {
                "root": LEADER,
                "sub_agents": [STORE],
                "handoff_tool": DELEGATE_TOOL,
                "team_mode": str(team.mode.value) if team.mode is not None else None,
            },
            "model_requests_by_agent": list(ROUTER.log),
            "store_agent_finals": [ROUTER.store_finals.get(t) for t in range(len(finals))],
            "tool_messages_in_last_store_request": tool_messages_sent,
            "tool_messages_in_last_leader_request": [
                message.get("content")
                for message in leader_last.get("messages") or []
                if message.get("role") == "tool"
            ],
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "Agno Team (TeamMode.coordinate) music_store_support, one member Agent store with the "
    "five store tools; both OpenAIChat (real AsyncOpenAI client) over a scripted loopback "
    "Chat Completions server; openinference-instrumentation-agno (scope "
    "openinference.instrumentation.agno). Per turn the leader's model call requests "
    "delegate_task_to_member(member_id=store, task=<the user's text>), Agno runs the "
    "member's arun inside that tool call, the member runs its tool rounds and answers, the "
    "member's text is the delegation tool's result, and the leader's second model call "
    "gives the final answer (the member's text, relayed). See NOTES.md for where each part "
    "is recorded."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
