"""Capture a LlamaIndex multi-agent ``AgentWorkflow`` (root hands off to ``store``),
through OpenInference.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-liaw
    /tmp/cap-liaw/bin/pip install llama-index-core llama-index-llms-openai \
        llama-index-llms-openai-like openinference-instrumentation-llama-index \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-liaw/bin/python tests/golden/capture/llamaindex_agent_workflow.py'

Captured with llama-index-core 0.14.25, llama-index-workflows 2.26.1,
llama-index-instrumentation 0.6.0, llama-index-llms-openai 0.8.3,
llama-index-llms-openai-like 0.8.1, openai 2.54.0,
openinference-instrumentation-llama-index 4.6.1, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-common 1.45.2, protobuf 7.36.2, Python 3.12.1. Writes
``tests/golden/traces/llamaindex-agentworkflow-openinference/``.

Two real ``FunctionAgent``s in a real ``AgentWorkflow`` (``root_agent`` =
``music_store_support``, ``can_handoff_to=["store"]``, no tools of its own; ``store`` owns
the five store tools of ``llamaindex_function_agent.py`` and ``can_handoff_to=[]``, so it
gets no handoff tool). The hop is LlamaIndex's own ``handoff(to_agent, reason)`` tool,
which the workflow adds to the root agent's tools (``return_direct=True``; it sets
``next_agent``, the workflow switches ``current_agent_name`` and runs the store agent on
the same memory; the store agent's answer ends the run). Both agents use ``OpenAILike``
(real ``openai`` client, ``streaming=False``) against one scripted Chat Completions
loopback server whose answers this script routes by the tools offered: a request offering
``handoff`` is the root agent's (answered with the handoff call), a request offering the
store tools is the store agent's and gets the scenario script's next response.

``multi_turn``: one ``Context(workflow)`` reused across the turns (LlamaIndex's documented
way to keep the chat), session id via OpenInference's ``using_session()``. The context
keeps ``current_agent_name``, so turns 2 and 3 start with the store agent (no second hop):
the framework's own behaviour, left as is. ``OTEL_EXPORTER_OTLP*`` / ``OPENAI_*`` removed.
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

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-llamaindex-workflow")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor  # noqa: E402

LlamaIndexInstrumentor().instrument(tracer_provider=PROVIDER)

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

FOLDER = common.TRACES / "llamaindex-agentworkflow-openinference"
ROOT = common.AGENT_NAME  # music_store_support
STORE = "store"
HANDOFF_TOOL = "handoff"
PACKAGES = (
    "llama-index-core",
    "llama-index-workflows",
    "llama-index-instrumentation",
    "llama-index-llms-openai",
    "llama-index-llms-openai-like",
    "openai",
    "openinference-instrumentation-llama-index",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)

_script = common.active_script


class Router:
    """The scripted model of both agents, told apart by the tools each request offers."""

    def __init__(self) -> None:
        self.root_requests: dict[int, int] = {}
        self.log: list[str] = []

    def reset(self) -> None:
        self.root_requests.clear()
        self.log.clear()

    def __call__(self, body: scripted_model.Body) -> scripted_model.Body:
        script = _script()
        tools = {t["function"]["name"] for t in body.get("tools") or []}
        if HANDOFF_TOOL not in tools:
            if "refund" not in tools:
                raise scripted_model.NotScripted(500, f"request of an unknown agent: {tools}")
            self.log.append(f"{script.turn}:{STORE}")
            return scripted_model.chat_completion(body)
        # The root agent: not a step of the scenario's script, but a model call of the turn.
        self.log.append(f"{script.turn}:{ROOT}")
        script.llm_calls[script.turn] += 1
        count = self.root_requests.get(script.turn, 0)
        self.root_requests[script.turn] = count + 1
        if count:
            raise scripted_model.NotScripted(500, "the root agent asked twice in one turn")
        tag = script.scenario.name[:6]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_handoff_{tag}_{script.turn}",
                    "type": "function",
                    "function": {
                        "name": HANDOFF_TOOL,
                        "arguments": json.dumps(
                            {"to_agent": STORE, "reason": "The store agent handles store requests."}
                        ),
                    },
                }
            ],
        }
        return scripted_model.completion(
            body,
            message,
            response_id=f"chatcmpl_{script.scenario.name}_{script.turn}root{count}",
            finish_reason="tool_calls",
        )


ROUTER = Router()
MODEL = scripted_model.ChatCompletions(ROUTER)
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


TOOLS = [
    FunctionTool.from_defaults(
        fn, name=fn.__name__, description=common.TOOL_DESCRIPTIONS[fn.__name__]
    )
    for fn in (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund)
]


def llm() -> OpenAILike:
    return OpenAILike(
        model=common.MODEL_NAME,
        api_base=BASE_URL,
        api_key="sk-offline",
        max_retries=0,
        is_chat_model=True,
        is_function_calling_model=True,
        context_window=32000,
        timeout=30,
    )


def make_workflow() -> AgentWorkflow:
    root = FunctionAgent(
        name=ROOT,
        description="Front desk of Tunes & Co: hands store requests to the store agent",
        tools=[],
        llm=llm(),
        system_prompt=common.SYSTEM_PROMPT,
        can_handoff_to=[STORE],
        streaming=False,
    )
    store = FunctionAgent(
        name=STORE,
        description="Looks up tracks, albums, artists and invoices, and refunds tracks",
        tools=TOOLS,
        llm=llm(),
        system_prompt="You are the store agent of Tunes & Co. Use the store tools.",
        can_handoff_to=[],
        streaming=False,
    )
    return AgentWorkflow(agents=[root, store], root_agent=ROOT)


async def run_turns(  # noqa: PLR0917 - the capture's state, passed as the others do
    workflow: AgentWorkflow,
    scenario: common.Scenario,
    script: common.Script,
    finals: list[str | None],
    turn_traces: list[str],
    answered_by: list[str],
) -> None:
    ctx = Context(workflow)
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        if scenario.session_id:
            with using_session(scenario.session_id):
                result = await workflow.run(user_msg=text, ctx=ctx)
        else:
            result = await workflow.run(user_msg=text, ctx=ctx)
        finals.append(result.response.content or None)
        answered_by.append(result.current_agent_name)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    workflow = make_workflow()
    RECORDER.batches.clear()
    MODEL.requests.clear()
    ROUTER.reset()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    answered_by: list[str] = []
    asyncio.run(run_turns(workflow, scenario, script, finals, turn_traces, answered_by))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=(
            "LlamaIndex AgentWorkflow: root FunctionAgent music_store_support "
            "(can_handoff_to=[store], no tools) hands off with LlamaIndex's own handoff tool "
            "to FunctionAgent store (the five store tools); OpenAILike over the scripted Chat "
            "Completions server + openinference-instrumentation-llama-index; one Context "
            "reused across turns (turns 2+ start with the store agent); see NOTES.md"
        ),
        session_id=scenario.session_id,
        extra={
            "agents": {"root": ROOT, "sub_agents": [STORE], "handoff_tool": HANDOFF_TOOL},
            "model_requests_by_agent": list(ROUTER.log),
            "answered_by": answered_by,
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
