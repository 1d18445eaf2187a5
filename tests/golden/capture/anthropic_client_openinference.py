"""Capture the plain Anthropic Python SDK instrumented by openinference-instrumentation-anthropic.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/venv-anthropic-oi
    /tmp/venv-anthropic-oi/bin/pip install anthropic openinference-instrumentation-anthropic \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/venv-anthropic-oi/bin/python tests/golden/capture/anthropic_client_openinference.py \
        [--sdk-spans] [scenario ...]

Versions used: anthropic 2.12.0, openinference-instrumentation-anthropic 3.1.0,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2,
opentelemetry-instrumentation 0.66b2, protobuf 7.36.2 (Python 3.12.1).

Writes ``tests/golden/traces/anthropic-client-openinference/``, or with ``--sdk-spans``
``anthropic-client-openinference-sdk-spans/``.

No agent framework: the user's own plain-Python loop calls ``client.messages.create``
(non-streaming) with the five tools (``name`` / ``description`` / ``input_schema``) and the
system prompt in ``system=``; it appends the assistant's ``response.content`` and then ONE user
message holding a ``tool_result`` block per ``tool_use`` block (Anthropic's tool-use guide),
until ``stop_reason`` is ``end_turn``. Tools run in plain Python (no tool spans). The refused
refund goes back as ``{"type": "tool_result", "is_error": true, "content": "RefundWindowExpired:
..."}``. Each user turn runs under one plain root span ``support_turn`` (no attributes, as a
web handler's span would be): one trace per turn. Multi-turn memory is the message list kept
across turns; the session id reaches the spans only through OpenInference's ``using_session()``
around each turn (multi_turn only).

anthropic 2.x traces its own API calls (``open_telemetry`` client option, on by default with the
global tracer provider, metadata only: a CLIENT span ``anthropic.messages.create`` per
call, a child of the OpenInference span). This capture
is about OpenInference, so by default the SDK's own spans are turned off with
``ANTHROPIC_OPEN_TELEMETRY=false``; ``--sdk-spans`` leaves the SDK default on (both span sets,
as a user who sets a global tracer provider gets them).

The model is scripted by a loopback HTTP server speaking the Messages API (``POST
/v1/messages``, non-streaming: ``scripted_model.AnthropicMessages``); the real
``anthropic.Anthropic`` client talks to it (no network).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
SDK_SPANS = "--sdk-spans" in sys.argv
CAPTURE_ENV: dict[str, str] = {} if SDK_SPANS else {"ANTHROPIC_OPEN_TELEMETRY": "false"}
os.environ.update(CAPTURE_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-anthropic")
trace.set_tracer_provider(PROVIDER)

from anthropic import Anthropic  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.anthropic import AnthropicInstrumentor  # noqa: E402

AnthropicInstrumentor().instrument(tracer_provider=PROVIDER)

FOLDER = common.TRACES / (
    "anthropic-client-openinference-sdk-spans" if SDK_SPANS else "anthropic-client-openinference"
)
PACKAGES = (
    "anthropic",
    "openinference-instrumentation-anthropic",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
)
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
    """One user turn of the plain-Python agent loop, under the application's root span."""
    with TRACER.start_as_current_span("support_turn"):
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
        if scenario.session_id:
            with using_session(scenario.session_id):
                finals.append(support_turn(client, messages, text))
        else:
            finals.append(support_turn(client, messages, text))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    notes = (
        "client-only instrumentation (no agent or tool spans): one plain root span "
        "'support_turn' per user turn (no attributes) with one OpenInference LLM span "
        "'messages.create' per request (llm.input_messages.* incl. tool_use / tool_result "
        "blocks, llm.output_messages.*, llm.tools.*, input.value / output.value); the refused "
        "refund goes back as a tool_result with is_error: true (no span status anywhere); "
        "session.id only through openinference using_session() around each turn (multi_turn)"
    )
    notes += (
        "; anthropic's own SDK spans left on (its default with a global tracer provider)"
        if SDK_SPANS
        else "; anthropic's own SDK spans off (ANTHROPIC_OPEN_TELEMETRY=false)"
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=notes,
        session_id=scenario.session_id,
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
