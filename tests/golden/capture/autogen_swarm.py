"""Capture a Microsoft AutoGen AgentChat ``Swarm`` (handoff) through AutoGen's own tracing.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-autogen-swarm
    /tmp/cap-autogen-swarm/bin/pip install autogen-agentchat==0.7.5 \
        "autogen-ext[openai]==0.7.5" autogen-core==0.7.5 openai==3.57.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-api==1.45.2 \
        opentelemetry-exporter-otlp-proto-common==1.45.2 opentelemetry-proto==1.45.2 \
        protobuf==5.29.6
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-autogen-swarm/bin/python tests/golden/capture/autogen_swarm.py [scenario ...]'

Captured with autogen-agentchat / autogen-core / autogen-ext 0.7.5, openai 3.57.0,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 5.29.6
(the versions of ``autogen_assistant.py``), Python 3.12.1. Writes
``tests/golden/traces/autogen-swarm/``. The script is ``autogen_swarm.py``, not
``autogen_agentchat.py``, so that it cannot shadow the ``autogen_agentchat`` package.

Two real ``autogen_agentchat.agents.AssistantAgent``s in a real
``autogen_agentchat.teams.Swarm``: ``front_desk`` (no tools, ``handoffs=["store"]``: AutoGen
offers the model its own handoff tool ``transfer_to_store``) and ``store`` (the five store
tools as plain functions, wrapped by AutoGen in ``FunctionTool``s, ``max_tool_iterations=10``
so it keeps calling the model after each tool round until the model answers in text). The
team ends on a final text: ``TextMessageTermination`` for either agent (a source is needed:
the user's task is a ``TextMessage`` too, and the termination condition sees it). Both
agents use ``autogen_ext.models.openai.OpenAIChatCompletionClient`` (real ``openai`` client)
pointed at a loopback HTTP server in this process (``scripted_model.ChatCompletions``) whose
answers this script routes: a request offering ``transfer_to_store`` is the front desk's and
gets the handoff call, a request offering the store tools is the store agent's and gets the
scenario script's next response (tool rounds, then the final text). The handoff is
AutoGen's own (``HandoffMessage``; the Swarm's next speaker is its target).

Instrumentation exactly as ``autogen_assistant.py``: AutoGen's own spans from the GLOBAL
tracer provider (``trace.set_tracer_provider``); the Swarm creates its own
``SingleThreadedAgentRuntime``, whose runtime tracing (``TraceHelper``) also falls back to
the global provider. No model instrumentation.

``multi_turn``: the same Swarm instance, ``await team.run(task=text)`` once per turn (the
team keeps its state between runs, as AutoGen documents). The Swarm resumes with the agent
that spoke last, i.e. ``store``: turns 2 and 3 have no handoff. No session id exists.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
# AutoGen's documented switch for the agent runtime's messaging spans (its AgentChat tracing
# guide turns them off and keeps the GenAI agent and tool spans).
os.environ["AUTOGEN_DISABLE_RUNTIME_TRACING"] = "true"

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-autogen-swarm")
trace.set_tracer_provider(PROVIDER)  # AutoGen's GenAI and runtime spans use the global provider

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.base import TaskResult  # noqa: E402
from autogen_agentchat.conditions import TextMessageTermination  # noqa: E402
from autogen_agentchat.messages import TextMessage  # noqa: E402
from autogen_agentchat.teams import Swarm  # noqa: E402
from autogen_core.models import ModelInfo  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402

APP_TRACER = trace.get_tracer("tracing-autogen-agentchat")
FOLDER = common.TRACES / "autogen-swarm"
PACKAGES = (
    "autogen-agentchat",
    "autogen-core",
    "autogen-ext",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)
FRONT_DESK = "front_desk"
STORE = "store"
HANDOFF_TOOL = f"transfer_to_{STORE}"
FRONT_DESK_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. Hand every question about "
    f"tracks, albums, artists, invoices or refunds to the {STORE} agent."
)

_script = common.active_script


class Router:
    """The scripted model of both agents, told apart by the tools each request offers."""

    def __init__(self) -> None:
        self.front_desk_requests: dict[int, int] = {}  # per turn
        self.log: list[str] = []  # which agent asked, in order

    def reset(self) -> None:
        self.front_desk_requests.clear()
        self.log.clear()

    def __call__(self, body: scripted_model.Body) -> scripted_model.Body:
        script = _script()
        tools = {t["function"]["name"] for t in body.get("tools") or []}
        if HANDOFF_TOOL not in tools:
            self.log.append(f"{script.turn}:{STORE}")
            return scripted_model.chat_completion(body)
        # The front desk: not a step of the scenario's script, but a model call of the turn.
        self.log.append(f"{script.turn}:{FRONT_DESK}")
        script.llm_calls[script.turn] += 1
        count = self.front_desk_requests.get(script.turn, 0)
        self.front_desk_requests[script.turn] = count + 1
        if count:
            raise scripted_model.NotScripted(500, "the front desk asked twice in one turn")
        tag = script.scenario.name[:6]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_handoff_{tag}_{script.turn}",
                    "type": "function",
                    "function": {"name": HANDOFF_TOOL, "arguments": "{}"},
                }
            ],
        }
        return scripted_model.completion(
            body,
            message,
            response_id=f"chatcmpl_{script.scenario.name}_{script.turn}fd{count}",
            finish_reason="tool_calls",
        )


ROUTER = Router()
MODEL = scripted_model.ChatCompletions(ROUTER)  # MODEL.requests: every request body it received
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


def make_client() -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(
        model=common.MODEL_NAME,
        api_key="sk-offline",
        base_url=BASE_URL,
        model_info=MODEL_INFO,
    )


def make_team() -> tuple[Swarm, list[OpenAIChatCompletionClient]]:
    clients = [make_client(), make_client()]
    front_desk = AssistantAgent(
        name=FRONT_DESK,
        model_client=clients[0],
        handoffs=[STORE],
        description="The front desk of the Tunes & Co music store.",
        system_message=FRONT_DESK_PROMPT,
    )
    store = AssistantAgent(
        name=STORE,
        model_client=clients[1],
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        description="Customer support of the Tunes & Co music store: catalogue and invoices.",
        system_message=common.SYSTEM_PROMPT,
        reflect_on_tool_use=True,
        max_tool_iterations=10,
    )
    termination = TextMessageTermination(FRONT_DESK) | TextMessageTermination(STORE)
    return Swarm([front_desk, store], termination_condition=termination), clients


def final_text(result: TaskResult) -> str | None:
    texts = [m for m in result.messages if isinstance(m, TextMessage) and m.source != "user"]
    return texts[-1].content if texts else None


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    RECORDER.batches.clear()
    MODEL.requests.clear()
    ROUTER.reset()
    team, clients = make_team()  # emits create_agent spans, in traces of their own
    PROVIDER.force_flush()  # ... exported in a batch of their own
    finals: list[str | None] = []
    turn_traces: list[str] = []
    stop_reasons: list[str | None] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        # The AgentChat tracing guide's idiom: the application's own span around the run
        # (without it each agent's invoke_agent span starts a trace of its own).
        with APP_TRACER.start_as_current_span("run_team"):
            result = await team.run(task=text)
        finals.append(final_text(result))
        stop_reasons.append(result.stop_reason)
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
        session_id=None,  # no session or conversation id reaches any span
        tool_error_contains="RefundWindowExpired",
        extra={"model_requests_by_agent": list(ROUTER.log), "stop_reasons": stop_reasons},
    )
    common.check_labels(capture)
    for client in clients:
        await client.close()
    common.write_scenario(FOLDER, capture)


NOTES = (
    "AutoGen AgentChat Swarm: AssistantAgent front_desk (handoffs=['store'], offered the "
    "handoff tool transfer_to_store) and AssistantAgent store (the five tools, "
    "max_tool_iterations=10, reflect_on_tool_use=True), TextMessageTermination of either; "
    "OpenAIChatCompletionClient over a scripted loopback Chat Completions server; AutoGen's "
    "own spans only (global provider; no content switch exists). See NOTES.md for the "
    "span layout. No session id on any span (labelled null)."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
