"""Capture a Microsoft Agent Framework SEQUENTIAL workflow through the framework's own tracing.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-maf-sequential
    /tmp/cap-maf-sequential/bin/pip install agent-framework-core agent-framework-openai \
        agent-framework-orchestrations opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-maf-sequential/bin/python \
            tests/golden/capture/ms_agent_framework_sequential.py [scenario ...]'

Captured with agent-framework-core 1.23.0, agent-framework-openai 1.17.0,
agent-framework-orchestrations 1.4.0, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1. Writes
``tests/golden/traces/ms-agent-framework-sequential/``. The script is
``ms_agent_framework_sequential.py``: it cannot shadow ``agent_framework``.

Two real ``agent_framework.Agent``s (the former ``ChatAgent``) in a real sequential workflow
(``agent_framework_orchestrations.SequentialBuilder(participants=[triage, store])``):
``triage`` (no tools; its one model call per turn answers with text only: a short
instruction for the store) and ``store`` (the five store tools as ``@tool`` functions). The
builder chains them: the store agent receives the whole conversation (user text + triage's
instruction). Both agents use ``OpenAIChatCompletionClient`` (real ``openai`` client) pointed
at a loopback server in this process (``scripted_model.ChatCompletions``) whose answers this
script routes: a request offering no store tools is the triage agent's and gets the
instruction text; a request offering the store tools is the store agent's and gets the
scenario script's next response.

One ``workflow.run(text)`` per user turn on ONE workflow per scenario (a sequential workflow
has no pending request to answer; each ``AgentExecutor`` keeps its agent's ``AgentSession``
across runs, so ``multi_turn`` is three runs of the same workflow, the agents keeping their
in-memory histories). The final answer of a turn is the text of the turn's last workflow
output (the store agent's ``AgentResponse``).

Instrumentation: the framework's own, as ``ms_agent_framework.py`` (global tracer and
logger providers, ``enable_sensitive_telemetry()``, default semconv, message events as
OTLP log records, written as ``<scenario>.logs.jsonl`` / ``.logs.pb``).
The framework's feature marks (``mark_feature_used``) only go into the User-Agent of model
requests, which only the loopback server sees; the capture ran with only loopback up.
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

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-ms-agent-framework-sequential"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

from agent_framework import Agent, tool  # noqa: E402
from agent_framework.observability import enable_sensitive_telemetry  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from agent_framework_orchestrations import SequentialBuilder  # noqa: E402

enable_sensitive_telemetry()

FOLDER = common.TRACES / "ms-agent-framework-sequential"
PACKAGES = (
    "agent-framework-core",
    "agent-framework-openai",
    "agent-framework-orchestrations",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)
TRIAGE = "triage"
STORE = "store"
STORE_TOOLS = {"lookup_track", "lookup_album", "lookup_artist", "lookup_invoice", "refund"}
TRIAGE_PROMPT = (
    "You are the front desk of Tunes & Co, a digital music store. Rewrite the customer's "
    "latest request as one short instruction for the store agent. Do not answer it yourself."
)

_script = common.active_script


class Router:
    """The scripted model of both agents, told apart by the tools each request offers."""

    def __init__(self) -> None:
        self.triage_requests: dict[int, int] = {}  # per turn
        self.log: list[str] = []  # which agent asked, in order

    def reset(self) -> None:
        self.triage_requests.clear()
        self.log.clear()

    def __call__(self, body: scripted_model.Body) -> scripted_model.Body:
        script = _script()
        tools = {t["function"]["name"] for t in body.get("tools") or []}
        if tools & STORE_TOOLS:
            self.log.append(f"{script.turn}:{STORE}")
            return scripted_model.chat_completion(body)
        # The triage agent: not a step of the scenario's script, but a model call of the turn.
        self.log.append(f"{script.turn}:{TRIAGE}")
        script.llm_calls[script.turn] += 1
        count = self.triage_requests.get(script.turn, 0)
        self.triage_requests[script.turn] = count + 1
        if count:
            raise scripted_model.NotScripted(500, "the triage agent asked twice in one turn")
        user_text = script.scenario.user_inputs[script.turn]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": f"Store instruction: help the customer with this request: {user_text}",
        }
        return scripted_model.completion(
            body,
            message,
            response_id=f"chatcmpl_{script.scenario.name}_{script.turn}tr{count}",
            finish_reason="stop",
        )


ROUTER = Router()
MODEL = scripted_model.ChatCompletions(ROUTER)  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


@tool
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tool
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tool
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_client() -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(
        model=common.MODEL_NAME, api_key="sk-offline", base_url=BASE_URL
    )


def make_workflow() -> Any:
    triage = Agent(
        client=make_client(),
        instructions=TRIAGE_PROMPT,
        name=TRIAGE,
        description="The front desk of the Tunes & Co music store.",
    )
    store = Agent(
        client=make_client(),
        instructions=common.SYSTEM_PROMPT,
        name=STORE,
        description="Customer support of the Tunes & Co music store: catalogue and invoices.",
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    return SequentialBuilder(name="music_store_sequential", participants=[triage, store]).build()


def last_text(outputs: list[Any]) -> str | None:
    for output in reversed(outputs):
        text = getattr(output, "text", None)
        if text:
            return str(text)
    return None


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    MODEL.requests.clear()
    ROUTER.reset()
    workflow = make_workflow()
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    events_seen: list[list[str]] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        result = await workflow.run(text)
        events_seen.append([str(event.type) for event in result])
        finals.append(last_text(result.get_outputs()))
        PROVIDER.force_flush()
        LOG_PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=None,
        extra={"model_requests_by_agent": list(ROUTER.log), "workflow_events": events_seen},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


NOTES = (
    "Microsoft Agent Framework sequential workflow (SequentialBuilder: triage -> store), both "
    "Agents on OpenAIChatCompletionClient over a scripted loopback Chat Completions server; "
    "built-in instrumentation (scope agent_framework) with enable_sensitive_telemetry(), default "
    "semconv, message events as log records. Per turn one trace rooted at workflow.run "
    "(workflow.id/name) with edge_group.process / executor.process <executor> (AgentExecutor) / "
    "message.send plumbing as siblings; invoke_agent triage (no tools, one chat span, text "
    "output) under executor.process triage; invoke_agent store (input: user text + triage's "
    "instruction as an assistant message) under executor.process store, a later sibling, with "
    "chat and execute_tool children. No handoff call or span: the hop is the workflow's "
    "edge only. workflow.build is a trace of its own (stray_traces). multi_turn: one workflow, "
    "one workflow.run per turn, agent sessions kept by the executors; no session id on any "
    "span (labelled null). See NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
