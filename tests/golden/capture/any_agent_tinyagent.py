"""Capture Mozilla.ai's any-agent running its own ``tinyagent`` framework, traced by any-agent.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-any-agent-tinyagent
    /tmp/cap-any-agent-tinyagent/bin/pip install any-agent 'mcp<2' opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-proto
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-any-agent-tinyagent/bin/python \
        tests/golden/capture/any_agent_tinyagent.py [scenario ...]'

Captured with any-agent 1.18.0 (its ``tinyagent`` framework), any-llm-sdk 1.40.2, openai
3.57.0, mcp 1.30.0 (``mcp<2``: with mcp 2.3.0, which pip picks otherwise, ``import any_agent``
fails, ``streamablehttp_client`` having been renamed), opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-common 1.45.2, opentelemetry-semantic-conventions 0.66b2, protobuf
7.36.2 (Python 3.12.1), in a network namespace with only loopback up. Writes
``tests/golden/traces/any-agent-tinyagent/``.

The agent: ``AnyAgent.create("tinyagent", AgentConfig(name="music_store_support",
model_id="openai/scripted-support-model", api_base=<loopback>/v1, api_key=dummy,
instructions=<system prompt>, tools=[the five store tools]))``, created once per scenario,
``agent.run(...)`` per user turn. The tools are plain typed Python functions whose docstrings
are the store's descriptions, as any-agent's docs pass callables to tinyagent; tinyagent builds
their JSON schema itself from the signature (every parameter ``{"type": "string"}``, required,
``additionalProperties: false``, ``strict: true`` for the OpenAI provider) and casts the
model's arguments to the annotations. tinyagent's loop (any-llm's ``acompletion`` through the
OpenAI provider, i.e. the real ``openai`` ``AsyncOpenAI`` client, non-streaming, against a
loopback HTTP server in this process that scripts the answers, ``scripted_model.ChatCompletions``)
runs each requested call in order (sequentially, also the two calls of ``parallel_calls``),
appends one ``tool`` message per call (``str()`` of the returned dict, a Python repr), until
the model answers with text. The refund raises ``StoreError``; tinyagent's ``ToolExecutor``
catches it and returns ``"Error calling tool: RefundWindowExpired: ..."`` as the result.

Multi-turn: any-agent has no session or conversation concept. Its documented way to continue
a conversation with tinyagent is to pass ``run`` a list of Chat Completions messages instead
of a string ("forwarded directly to the underlying LLM"); ``multi_turn`` passes one list (the
system prompt, then each user message appended before its turn), which tinyagent extends in
place with the assistant and tool messages, so each turn's model sees the whole conversation.
No session id is recorded anywhere (``session_id`` null in the labels).

Instrumentation: any-agent's own OpenTelemetry tracing, always on (no switch; content is
always recorded): it takes the global tracer provider, making its own ``TracerProvider`` only
when none is set (``any_agent.tracing``), so, as its tracing docs show for exporting, the
application sets its SDK provider (with its span processor) globally before importing
any-agent. Per ``run``: ``invoke_agent [music_store_support]`` (``gen_ai.operation.name``
``invoke_agent``, ``gen_ai.agent.name``, ``gen_ai.agent.description``,
``gen_ai.request.model``, ``any_agent.version``), children ``call_llm <model>`` and
``execute_tool <tool>`` (see NOTES.md). any-agent's default ``ConsolePrintSpan`` callback
prints the spans to the console (left as configured by default).

Export: common's in-memory ``BatchRecorder`` on the SDK provider, flushed after every user turn
(one export batch per turn); every ``OTEL_*``, ``OPENAI_*`` and ``ANY_*`` variable is removed
first (nothing is sent anywhere).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "OPENAI_", "ANY_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
CAPTURE_ENV = {"NO_PROXY": "127.0.0.1,localhost"}
os.environ.update(CAPTURE_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-any-agent"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)  # before any-agent is imported: it takes the global one

from any_agent import AgentConfig, AnyAgent  # noqa: E402

FOLDER = common.TRACES / "any-agent-tinyagent"
PACKAGES = (
    "any-agent",
    "any-llm-sdk",
    "openai",
    "mcp",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "opentelemetry-semantic-conventions",
    "protobuf",
)

_script = common.active_script

MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def lookup_track(track_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS: list[Callable[..., Any]] = [
    lookup_invoice,
    lookup_track,
    lookup_album,
    lookup_artist,
    refund,
]
for _tool in TOOLS:
    _tool.__doc__ = common.TOOL_DESCRIPTIONS[_tool.__name__]  # the store's descriptions


def make_agent() -> Any:
    return AnyAgent.create(
        "tinyagent",
        AgentConfig(
            name=common.AGENT_NAME,
            model_id=f"openai/{common.MODEL_NAME}",
            api_base=BASE_URL,
            api_key="sk-offline",
            instructions=common.SYSTEM_PROMPT,
            tools=list(TOOLS),
        ),
    )


NOTES = (
    "any-agent 1.18 running its own tinyagent framework (any-llm's OpenAI provider over a "
    "scripted Chat Completions loopback server) traced by any-agent's own OpenTelemetry "
    "tracing: per run 'invoke_agent [music_store_support]' (gen_ai.agent.name) with children "
    "'call_llm scripted-support-model' (gen_ai.input.messages on the first only, gen_ai.output) "
    "and 'execute_tool <tool>' (gen_ai.tool.name, gen_ai.tool.args, gen_ai.output, no call id); "
    "the refused refund is the result 'Error calling tool: RefundWindowExpired: ...' with span "
    "status ERROR. No session concept. See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    RECORDER.batches.clear()
    MODEL.requests.clear()
    agent = make_agent()
    history: list[dict[str, Any]] = [{"role": "system", "content": common.SYSTEM_PROMPT}]
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        if len(scenario.user_inputs) > 1:  # the conversation, as a message list
            history.append({"role": "user", "content": text})
            result = agent.run(history)
        else:
            result = agent.run(text)
        output = result.final_output
        finals.append(output if isinstance(output, str) else None)
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    last = (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=None,
        extra={
            "env": CAPTURE_ENV,
            "tool_messages_in_last_request": [
                m.get("content") for m in last if m.get("role") == "tool"
            ],
            "model_requests": len(MODEL.requests),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
