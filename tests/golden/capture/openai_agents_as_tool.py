"""Capture the OpenAI Agents SDK's *agents as tools* (an orchestrator agent whose tool runs a
store agent) through Traceloop's OpenLLMetry instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-oai-astool
    /tmp/cap-oai-astool/bin/pip install openai-agents opentelemetry-instrumentation-openai-agents \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-oai-astool/bin/python tests/golden/capture/openai_agents_as_tool.py [scenario ...]'

Captured with openai-agents 0.24.0, openai 3.57.0 (httpx2 2.16.2),
opentelemetry-instrumentation-openai-agents 0.62.4, opentelemetry-semantic-conventions-ai
0.5.1, opentelemetry-instrumentation 0.66b2, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1, under
``unshare -rn`` (only loopback up; the model needs no socket at all).
Writes ``tests/golden/traces/openai-agents-as-tool-traceloop/``.

Two real ``Agent``s on the SDK's default ``OpenAIResponsesModel`` with a real
``AsyncOpenAI`` client; only the Responses-API answers are scripted (an
``httpx.MockTransport``, no network):

* ``music_store_support``, the orchestrator (the run's entry agent), whose only tool is
  ``store_agent.as_tool(tool_name="ask_store", tool_description=...)`` (the SDK's documented
  "agents as tools" pattern: the tool runs the store agent in a nested ``Runner.run`` with
  the model's ``input`` and returns its final output);
* ``store`` (``common.SYSTEM_PROMPT``), with the five ``@function_tool``s.

The instrumentation is Traceloop's ``OpenAIAgentsInstrumentor(replace_existing_processors=
True)`` (the SDK's own exporter to api.openai.com is replaced), as ``openai_agents.py
traceloop`` does. The scripted model tells the agents apart by the request's
``instructions`` (and checks the tools it declares): the orchestrator's first request of a
turn is answered with ``ask_store(input="Customer request forwarded by the front desk:
<user text>")``, its second (after the tool's output) with the scenario's final text; the
store agent's requests follow the scenario's script (``common.Script``), its final text
being ``"Store team report for the front desk: <final text>"`` (so a trajectory that took
the sub-agent's answer for the run's would show). The answers echo the request's
``instructions`` and ``tools`` as the API does, so each LLM span records its agent's system
prompt and tool definitions. The refused refund raises inside the store's tool; the SDK's
default failure handler reports it to the store agent's model (redacted on the span).

Multi-turn memory is a ``SQLiteSession`` (in memory) for the orchestrator's runs, and
``RunConfig(workflow_name=..., group_id=<session id>)`` is set too (the nested run
inherits it); the store agent runs without a session, as ``as_tool`` does by default.
Traceloop records neither the group id nor any session: the labels' ``session_id`` is null.
``llm_calls_per_turn`` counts every model request of the turn (orchestrator's two and the
store's); ``store_llm_calls_per_turn`` the store agent's. ``--sub-agent=NAME`` renames the
store agent (a check of a reader that must not lean on ``ask_store`` ending with the
sub-agent's name; write it elsewhere with ``CAPTURE_OUT``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

for _key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_key]  # nothing may be sent anywhere
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "0"  # the SDK's traces feed the processor
os.environ["TRACELOOP_METRICS_ENABLED"] = "false"  # no meters: spans only

import common  # noqa: E402

try:  # openai >= 3 ships its HTTP client as httpx2
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-openai-agents-as-tool")
trace.set_tracer_provider(PROVIDER)

from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool  # noqa: E402
from agents.models.openai_responses import OpenAIResponsesModel  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

# Only Traceloop's processor: the SDK's default exporter to api.openai.com is replaced.
OpenAIAgentsInstrumentor(replace_existing_processors=True).instrument(tracer_provider=PROVIDER)
PACKAGES = (
    "openai-agents",
    "openai",
    "httpx2",
    "opentelemetry-instrumentation-openai-agents",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-instrumentation",
    "opentelemetry-sdk",
)

FOLDER = common.TRACES / "openai-agents-as-tool-traceloop"
WORKFLOW = "music store support turn"
# ``--sub-agent=NAME`` renames the store agent (a check, not a golden: write it elsewhere
# with CAPTURE_OUT): with the default the tool's name ends with ``_store``.
STORE_NAME = next(
    (a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--sub-agent=")), "store"
)
ASK_TOOL = "ask_store"
ORCHESTRATOR_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. You cannot look anything "
    "up yourself: hand every store question to the store team with ask_store, then answer "
    "the customer from its report."
)
FORWARD = "Customer request forwarded by the front desk: "
REPORT = "Store team report for the front desk: "
STORE_TOOLS = sorted(common.TOOL_DESCRIPTIONS)

_script = common.active_script


class Router:
    """Per-turn routing of the scripted model: which agent asked, and what it gets.

    The orchestrator (its instructions, ``ask_store`` as its only tool) asks ``ask_store``
    first and answers with the scenario's final text once the tool's output came back; the
    store agent's requests follow the scenario's script (``common.Script``), so ``llm_step``
    counts the store agent's calls. ``llm_calls_per_turn`` counts every model request.
    """

    def __init__(self) -> None:
        self.turn = -1
        self.front_calls = 0
        self.store_calls = 0
        self.user_text = ""
        self.log: list[tuple[int, str]] = []  # (turn, agent) per model request
        self.forwarded: list[str] = []
        self.store_calls_per_turn: list[int] = []

    def start_turn(self, turn: int, text: str) -> None:
        self.turn, self.front_calls, self.store_calls, self.user_text = turn, 0, 0, text
        self.store_calls_per_turn.append(0)

    def answer(self, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The response id and output items for one Responses-API request."""
        tools = sorted(t.get("name", "") for t in body.get("tools") or [])
        script = _script()
        tag = script.scenario.name
        if body.get("instructions") == ORCHESTRATOR_PROMPT:
            if tools != [ASK_TOOL]:
                raise RuntimeError(f"orchestrator request with tools {tools}")
            self.front_calls += 1
            script.llm_calls[script.turn] += 1
            self.log.append((self.turn, common.AGENT_NAME))
            if self.front_calls == 1:
                if self.store_calls:
                    raise RuntimeError("the store agent was asked before ask_store")
                call_id = f"call_front_{tag[:6]}_{self.turn}0"
                question = FORWARD + self.user_text
                self.forwarded.append(question)
                return f"resp_{tag}_{self.turn}f0", [
                    {
                        "type": "function_call",
                        "id": f"fc_{call_id}",
                        "call_id": call_id,
                        "name": ASK_TOOL,
                        "arguments": json.dumps({"input": question}),
                        "status": "completed",
                    }
                ]
            if self.front_calls == 2 and self.store_calls:
                answer = script.scenario.turns[script.turn].final
                return f"resp_{tag}_{self.turn}f1", [_message(f"msg_front_{self.turn}1", answer)]
            raise RuntimeError(f"orchestrator request {self.front_calls} in turn {self.turn}")
        if body.get("instructions") != common.SYSTEM_PROMPT:
            raise RuntimeError(f"request of an unknown agent: {body.get('instructions')!r}")
        if tools != STORE_TOOLS:
            raise RuntimeError(f"store request with tools {tools}")
        if self.front_calls != 1:
            raise RuntimeError("the store agent was asked outside ask_store")
        self.store_calls += 1
        self.store_calls_per_turn[-1] += 1
        self.log.append((self.turn, STORE_NAME))
        calls, final = script.next_response()
        step = script.step
        if final is not None:
            return f"resp_{tag}_{self.turn}{step}", [
                _message(f"msg_{self.turn}{step}", REPORT + final)
            ]
        return f"resp_{tag}_{self.turn}{step}", [
            {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
            for call_id, name, args in calls
        ]


def _message(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


ROUTER = Router()


def _response(request: httpx.Request) -> httpx.Response:
    """The Responses API answer of the scripted model (``POST /v1/responses``)."""
    if not request.url.path.endswith("/responses"):
        return httpx.Response(404, json={"error": f"not scripted: {request.url.path}"})
    body = json.loads(request.content)
    if body.get("stream"):
        return httpx.Response(400, json={"error": "streaming not scripted"})
    response_id, output = ROUTER.answer(body)
    prompt_tokens = 50 + 10 * len(body.get("input") or [])
    payload = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": common.MODEL_NAME,
        "output": output,
        # Echoed from the request, as the Responses API does: the LLM spans then say which
        # agent asked (its instructions as the system message, its tools).
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "usage": {
            "input_tokens": prompt_tokens,
            "output_tokens": 12,
            "total_tokens": prompt_tokens + 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    return httpx.Response(200, json=payload)


@function_tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@function_tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@function_tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@function_tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@function_tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    client = AsyncOpenAI(
        api_key="sk-offline",
        base_url="http://scripted-model.invalid/v1",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(_response)),
        max_retries=0,
    )
    model = OpenAIResponsesModel(model=common.MODEL_NAME, openai_client=client)
    store_agent = Agent(
        name=STORE_NAME,
        instructions=common.SYSTEM_PROMPT,
        model=model,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    orchestrator = Agent(
        name=common.AGENT_NAME,
        instructions=ORCHESTRATOR_PROMPT,
        model=model,
        tools=[
            store_agent.as_tool(
                tool_name=ASK_TOOL,
                tool_description="Ask the store team: it looks up tracks, albums, artists "
                "and invoices, and refunds purchased tracks.",
            )
        ],
    )
    session = SQLiteSession(scenario.session_id) if scenario.session_id else None
    RECORDER.batches.clear()
    ROUTER.log.clear()
    ROUTER.forwarded.clear()
    ROUTER.store_calls_per_turn.clear()
    finals: list[str | None] = []
    last_agents: list[str] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        ROUTER.start_turn(turn, text)
        before = len(RECORDER.spans)
        config = RunConfig(workflow_name=WORKFLOW, group_id=scenario.session_id)
        result = await Runner.run(orchestrator, text, session=session, run_config=config)
        finals.append(result.final_output if isinstance(result.final_output, str) else None)
        last_agents.append(result.last_agent.name)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    notes = (
        "agents as tools: every turn runs the orchestrator music_store_support, whose first "
        f"model call requests {ASK_TOOL}(input=...); the tool runs the store agent in a nested "
        "Runner.run (same trace) whose model calls follow the scenario and whose final text is "
        "a report to the front desk; the orchestrator's second model call gives the final "
        "answer; llm_calls_per_turn counts both agents' model calls; multi_turn: SQLiteSession "
        "memory for the orchestrator and RunConfig(group_id=session id): Traceloop records "
        "neither (no session id in the spans, session_id null); the refused refund raises "
        "inside the store's tool and the SDK's default failure handler reports it to the store "
        "agent's model; the tool span says only 'Error running tool (non-fatal)' (redacted)"
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=notes,
        session_id=None,
        tool_error_contains="Error running tool (non-fatal)",
        extra={
            "agents": [common.AGENT_NAME, STORE_NAME],
            "delegation": {
                "orchestrator": common.AGENT_NAME,
                "sub_agent": STORE_NAME,
                "tool": ASK_TOOL,
                "forwarded_inputs": list(ROUTER.forwarded),
            },
            "model_requests": [[turn, agent] for turn, agent in ROUTER.log],
            "store_llm_calls_per_turn": list(ROUTER.store_calls_per_turn),
            "last_agent_per_turn": last_agents,
            "group_id": scenario.session_id,
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
