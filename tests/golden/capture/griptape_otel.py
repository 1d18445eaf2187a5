"""Capture Griptape through its own OpenTelemetry observability driver.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-griptape
    /tmp/cap-griptape/bin/pip install griptape opentelemetry-instrumentation-threading \
        "opentelemetry-sdk==1.45.1" "opentelemetry-exporter-otlp-proto-common==1.45.1" \
        "opentelemetry-proto==1.45.1"
    unshare -rn sh -c 'ip link set lo up; \
        /tmp/cap-griptape/bin/python tests/golden/capture/griptape_otel.py [scenario ...]'

(opentelemetry-instrumentation-threading, which Griptape's driver imports, exists only up to
0.66b1, which pins opentelemetry-api 1.45.1: the SDK is pinned to match.)
Captured with griptape 1.13.0, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.1, opentelemetry-instrumentation(-threading)
0.66b1, protobuf 7.36.2 (Python 3.12.1). Writes ``tests/golden/traces/griptape-otel/``.

Real ``griptape.structures.Agent`` (the system prompt as its one ``Rule``) with one real
Griptape tool, ``MusicStore`` (a ``BaseTool`` whose five ``@activity`` methods call the
store), and ``OpenAiChatPromptDriver`` (native tool calling, ``use_native_tools=True``, its
default; real ``openai.OpenAI`` client) pointed at a loopback HTTP server in this process
that scripts the model's Chat Completions answers; nothing else is faked. Griptape declares
each activity to the model as ``<tool name>_<activity>`` (``MusicStore_lookup_track``), so
the scripted model calls them by those names (the only change to
``scripted_model.chat_completion``'s answer). One ``agent.run(text)`` per user turn, inside
one ``with Observability(observability_driver=OpenTelemetryObservabilityDriver(...))`` per
turn, as Griptape documents it: the driver opens a ``main`` root span on enter and flushes on
exit. The driver builds its own ``TracerProvider`` (service name, deployment env) and is given
the span processor: a ``BatchSpanProcessor`` over ``common.BatchRecorder``, in place of an
OTLP exporter. ``multi_turn`` is one Agent (Griptape's default in-memory conversation
memory keeps the earlier turns); Griptape has no session id, and the driver records none.
The prompt driver gets Griptape's ``SimpleTokenizer`` (4 characters a token): its default
``OpenAiTokenizer`` knows no tiktoken encoding for the scripted model's name and would try to
download one (offline: the run fails when conversation memory is fitted, from turn 2 on).
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
from griptape.artifacts import ErrorArtifact, TextArtifact  # noqa: E402
from griptape.drivers.observability.open_telemetry import (  # noqa: E402
    OpenTelemetryObservabilityDriver,
)
from griptape.drivers.prompt.openai import OpenAiChatPromptDriver  # noqa: E402
from griptape.observability import Observability  # noqa: E402
from griptape.rules import Rule  # noqa: E402
from griptape.structures import Agent  # noqa: E402
from griptape.tokenizers import SimpleTokenizer  # noqa: E402
from griptape.tools import BaseTool  # noqa: E402
from griptape.utils.decorators import activity  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from schema import Literal, Schema  # noqa: E402

FOLDER = common.TRACES / "griptape-otel"
PACKAGES = (
    "griptape",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-instrumentation",
    "opentelemetry-instrumentation-threading",
    "protobuf",
)
TOOL = "MusicStore"

RECORDER = common.BatchRecorder()
PROCESSOR = BatchSpanProcessor(
    RECORDER, schedule_delay_millis=60_000, max_queue_size=8192, max_export_batch_size=4096
)
DRIVER = OpenTelemetryObservabilityDriver(
    service_name="music-store-support-griptape",
    deployment_env="acceptance-test",
    span_processor=PROCESSOR,
)

_script = common.active_script


def griptape_chat_completion(body: scripted_model.Body) -> scripted_model.Body:
    """``scripted_model.chat_completion`` calling the tools by the names Griptape declared."""
    declared = {tool["function"]["name"] for tool in body.get("tools") or []}
    reply = scripted_model.chat_completion(body)
    for call in reply["choices"][0]["message"].get("tool_calls") or []:
        native = f"{TOOL}_{call['function']['name']}"
        assert native in declared, (native, declared)
        call["function"]["name"] = native
    return reply


MODEL = scripted_model.ChatCompletions(griptape_chat_completion)
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


def _props(tool: str) -> dict[Any, Any]:
    """The activity's input schema, from common.TOOL_PARAMETERS (all required)."""
    types = {"string": str, "integer": int}
    return {
        Literal(name, description=spec["description"]): types[spec["type"]]
        for name, spec in common.TOOL_PARAMETERS[tool].items()
    }


def _config(tool: str) -> dict[str, Any]:
    return {"description": common.TOOL_DESCRIPTIONS[tool], "schema": Schema(_props(tool))}


def _text(value: Any) -> TextArtifact:
    return TextArtifact(json.dumps(value))


class MusicStore(BaseTool):  # type: ignore[misc]
    """The music store: one Griptape tool, one activity per store call."""

    @activity(config=_config("lookup_track"))  # type: ignore[untyped-decorator]
    def lookup_track(self, track_name: str) -> TextArtifact:
        return _text(_script().call("lookup_track", track_name=track_name))

    @activity(config=_config("lookup_album"))  # type: ignore[untyped-decorator]
    def lookup_album(self, album_title: str) -> TextArtifact:
        return _text(_script().call("lookup_album", album_title=album_title))

    @activity(config=_config("lookup_artist"))  # type: ignore[untyped-decorator]
    def lookup_artist(self, artist_name: str) -> TextArtifact:
        return _text(_script().call("lookup_artist", artist_name=artist_name))

    @activity(config=_config("lookup_invoice"))  # type: ignore[untyped-decorator]
    def lookup_invoice(self, customer_id: int, invoice_id: int) -> TextArtifact:
        return _text(
            _script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id)
        )

    @activity(config=_config("refund"))  # type: ignore[untyped-decorator]
    def refund(self, invoice_id: int, track_id: int, reason: str) -> TextArtifact:
        return _text(
            _script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)
        )


def make_agent() -> Agent:
    driver = OpenAiChatPromptDriver(
        model=common.MODEL_NAME,
        api_key="sk-offline",
        base_url=BASE_URL,
        use_native_tools=True,
        # tiktoken knows no encoding for the scripted model's name and would download one:
        # Griptape's own character-count tokenizer (used to fit conversation memory).
        tokenizer=SimpleTokenizer(
            characters_per_token=4, max_input_tokens=128_000, max_output_tokens=4_096
        ),
    )
    return Agent(
        prompt_driver=driver,
        tools=[MusicStore(name=TOOL)],
        rules=[Rule(common.SYSTEM_PROMPT)],
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    RECORDER.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    run_errors: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        with Observability(observability_driver=DRIVER):
            agent.run(text)
        output = agent.output
        if isinstance(output, ErrorArtifact):
            run_errors.append(f"turn {turn}: {output.value}")
        finals.append(output.to_text() if output is not None else None)
        PROCESSOR.force_flush()
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
        run_errors=run_errors,
        extra={
            "tool_messages_in_last_request": [
                m.get("content") for m in last if m.get("role") == "tool"
            ],
            "messages_in_last_request": len(last),
            "reference_session_id": scenario.session_id,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "Griptape Agent + OpenAiChatPromptDriver (native tool calling, real openai client) over a "
    "scripted loopback Chat Completions server; Griptape's own OpenTelemetryObservabilityDriver "
    "(one Observability context per turn). See NOTES.md."
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    DRIVER.trace_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
