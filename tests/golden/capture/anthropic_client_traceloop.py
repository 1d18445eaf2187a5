"""Capture the plain Anthropic Python SDK instrumented by OpenLLMetry's anthropic instrumentation.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-anthropic-client-traceloop
    /tmp/cap-anthropic-client-traceloop/bin/pip install anthropic \
        opentelemetry-instrumentation-anthropic opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common protobuf
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-anthropic-client-traceloop/bin/python \
        tests/golden/capture/anthropic_client_traceloop.py [scenario ...]'

Captured with anthropic 2.14.0, opentelemetry-instrumentation-anthropic 0.62.4,
opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-instrumentation 0.66b2,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/anthropic-client-traceloop/``.

The loop of ``anthropic_client_openinference.py``: no agent framework, the user's own
plain-Python loop calls ``client.messages.create`` (non-streaming) with the five tools
(``name`` / ``description`` / ``input_schema``) and the system prompt in ``system=``; it
appends the assistant's ``response.content`` and then ONE user message holding a
``tool_result`` block per ``tool_use`` block, until ``stop_reason`` is ``end_turn``. Tools run
in plain Python (no tool spans). The refused refund goes back as ``{"type": "tool_result",
"is_error": true, "content": "RefundWindowExpired: ..."}``. Each user turn runs under one
plain application span named after the agent, ``music_store_support`` (no attributes): one
trace per turn. Multi-turn memory is the message list kept across turns.

Instrumentation: ``AnthropicInstrumentor().instrument(tracer_provider=...)`` used directly
with the capture's TracerProvider (no traceloop-sdk, nothing phones home;
``TRACELOOP_TELEMETRY=false`` anyway, ``TRACELOOP_TRACE_CONTENT=true``, its documented
content switch). anthropic 2.x's own SDK spans are turned off with
``ANTHROPIC_OPEN_TELEMETRY=false`` (as the OpenInference capture's default). No session id:
the only documented Traceloop mechanism (association properties) belongs to traceloop-sdk.

The model is scripted by a loopback HTTP server speaking the Messages API (``POST
/v1/messages``, non-streaming: ``scripted_model.AnthropicMessages``); the real
``anthropic.Anthropic`` client talks to it. Spans go to ``common.make_provider``'s in-memory
recorder (one export batch per user turn, flushed after it) and are written by
``common.write_scenario``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
CAPTURE_ENV: dict[str, str] = {
    "ANTHROPIC_OPEN_TELEMETRY": "false",
    "TRACELOOP_TELEMETRY": "false",
    "TRACELOOP_TRACE_CONTENT": "true",
}
os.environ.update(CAPTURE_ENV)
for _key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_key]

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-anthropic")
trace.set_tracer_provider(PROVIDER)

from anthropic import Anthropic  # noqa: E402
from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor  # noqa: E402

AnthropicInstrumentor().instrument(tracer_provider=PROVIDER)

FOLDER = common.TRACES / "anthropic-client-traceloop"
PACKAGES = (
    "anthropic",
    "opentelemetry-instrumentation-anthropic",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-instrumentation",
    "opentelemetry-sdk",
)
AGENT_NAME = "music_store_support"
TRACER = trace.get_tracer("music_store.web")  # the application's own tracer


_script = common.active_script


SERVER = scripted_model.AnthropicMessages().serve()
BASE_URL = SERVER.url

TOOLS: list[Any] = [  # Anthropic tool params
    {
        "name": name,
        "description": common.TOOL_DESCRIPTIONS[name],
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": list(properties),
        },
    }
    for name, properties in common.TOOL_PARAMETERS.items()
]


def run_tool(block: Any) -> dict[str, Any]:
    """The application's tool dispatch: the ``tool_result`` block for one ``tool_use`` block."""
    try:
        result = _script().call(block.name, **dict(block.input))
    except common.StoreError as exc:
        return {
            "type": "tool_result",
            "tool_use_id": block.id,
            "content": str(exc),
            "is_error": True,
        }
    return {"type": "tool_result", "tool_use_id": block.id, "content": json.dumps(result)}


def support_turn(client: Anthropic, messages: list[Any], text: str) -> str | None:
    """One user turn of the plain-Python agent loop, under a span named after the agent."""
    with TRACER.start_as_current_span(AGENT_NAME):
        messages.append({"role": "user", "content": text})
        while True:
            response = client.messages.create(
                model=common.MODEL_NAME,
                max_tokens=1024,
                system=common.SYSTEM_PROMPT,
                messages=messages,
                tools=TOOLS,
            )
            messages.append({"role": "assistant", "content": response.content})
            if response.stop_reason != "tool_use":
                return "".join(b.text for b in response.content if b.type == "text") or None
            results = [run_tool(b) for b in response.content if b.type == "tool_use"]
            messages.append({"role": "user", "content": results})


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "toolu")
    client = Anthropic(api_key="sk-ant-offline", base_url=BASE_URL, max_retries=0)
    messages: list[Any] = []  # Anthropic message params
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        finals.append(support_turn(client, messages, text))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    notes = (
        "client-only instrumentation (no agent or tool spans): one plain application span "
        "'music_store_support' per user turn (no attributes) with one OpenLLMetry span "
        "'anthropic.chat' per request (gen_ai.prompt.<i>.* / gen_ai.completion.<i>.* incl. "
        "tool_use / tool_result blocks, llm.request.functions.*); the refused refund goes "
        "back as a tool_result with is_error: true (no span status anywhere); no session id "
        "(association properties need traceloop-sdk); anthropic's own SDK spans off "
        "(ANTHROPIC_OPEN_TELEMETRY=false)"
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
        extra={"telemetry_env": CAPTURE_ENV},
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
