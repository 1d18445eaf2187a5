"""Capture a Langroid ``ChatAgent`` (OpenAI tools API) traced by OpenInference's OpenAI tracing.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-langroid-openinference
    /tmp/cap-langroid-openinference/bin/pip install langroid \
        openinference-instrumentation-openai opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common opentelemetry-proto
    # Langroid's parser loads tiktoken's cl100k_base at import, which tiktoken downloads from
    # a blob store this machine cannot reach; the llama-index-core wheel on PyPI ships the
    # same file (hash-named, checked by tiktoken): take it from there.
    /tmp/cap-langroid-openinference/bin/pip download llama-index-core==0.14.25 --no-deps \
        -d /tmp/lr-wheel
    mkdir -p /tmp/cap-langroid-openinference/tiktoken_cache && cd $_ && unzip -j \
        /tmp/lr-wheel/llama_index_core-0.14.25-py3-none-any.whl \
        'llama_index/core/_static/tiktoken_cache/*' && cd -
    unshare -rn sh -c 'ip link set lo up && PYTHONHASHSEED=0 \
        TIKTOKEN_CACHE_DIR=/tmp/cap-langroid-openinference/tiktoken_cache \
        /tmp/cap-langroid-openinference/bin/python \
        tests/golden/capture/langroid_openinference.py [scenario ...]'
    rm -r logs  # Langroid's own task logs (music_store_support.{log,tsv,html})

(``PYTHONHASHSEED=0``: Langroid sends the tools in the order of a set of their names, which
varies with the hash seed; with it fixed a re-capture compares equal, ``compare_capture.py``;
the trace ids repeat anyway: Langroid's ``langroid/parsing/utils.py`` calls ``random.seed(43)``
at import, and the SDK draws its ids from ``random``.)

Captured with langroid 0.69.16, openai 3.57.0, openinference-instrumentation-openai 0.1.66,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.2, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/langroid-openinference/``.

The agent: a Langroid ``ChatAgent`` named ``music_store_support`` (``ChatAgentConfig(name=...,
system_message=common.SYSTEM_PROMPT)``) whose five store tools are Langroid ``ToolMessage``
subclasses (``request`` = the tool's name, ``purpose`` = its description, one pydantic field per
argument with its description), enabled with ``agent.enable_message`` and offered through the
OpenAI tools API (``use_functions_api=True``, ``use_tools_api=True``, ``use_tools=False``: no
Langroid JSON-in-text tool instructions). Its model is Langroid's ``OpenAIGPT`` with
``OpenAIGPTConfig(chat_model=common.MODEL_NAME, api_base=<loopback>/v1, stream=False,
cache_config=None)``: Langroid's own ``openai`` client, non-streaming, against a loopback HTTP
server in this process that scripts the answers (``scripted_model.ChatCompletions``); Langroid's
response cache is off (it would answer a repeated request without calling the model). The
agent runs in a ``Task(agent, interactive=False, restart=False)``; ``handle_llm_no_tool="done"``
(``NonToolAction.DONE``) ends the task when the model answers without a tool call (Langroid's
documented way to end a non-interactive tool loop), and ``task.run(user text)`` returns the
answer. Langroid handles every tool call of one response in turn (sequentially, also the two
calls of ``parallel_calls``) and sends each result back as a ``tool`` message with its
``tool_call_id``. A tool handler that raises propagates out of ``Task.run`` (Langroid does not
turn it into a tool result: the run would abort), so the store's tools return the refused
refund as their result text, ``"Error: RefundWindowExpired: ..."``, as Langroid's examples
return errors to the model. Multi-turn memory: the same task and agent for the three turns
(``restart=False`` keeps the agent's message history).

Instrumentation: Langroid has no OpenTelemetry instrumentation of its own. The ``openai``
client it uses is traced by ``openinference.instrumentation.openai.OpenAIInstrumentor().
instrument(tracer_provider=...)`` with its defaults (inputs, outputs and messages recorded:
OpenInference's content capture is on unless hidden by ``OPENINFERENCE_HIDE_*``), as a user of
an uninstrumented framework would trace it. Each user turn runs under one span the application
starts itself, the way OpenInference's session docs group a turn: named after the agent,
``music_store_support`` (tracer ``music_store.web``), ``openinference.span.kind`` ``AGENT``,
``agent.name``, ``input.value`` (the user's text), ``output.value`` (the answer); in
``multi_turn`` also ``session.id`` on that span and ``using_session(session_id)`` around the
turn (so OpenInference copies ``session.id`` onto its LLM spans).

Export: common's in-memory ``BatchRecorder`` on the SDK provider, flushed after every user turn
(one export batch per turn); every ``OTEL_*``, ``OPENAI_*`` and ``LANGROID_*`` variable is
removed first (nothing is sent anywhere).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "OPENAI_", "LANGROID_"))]:
    del os.environ[_name]  # nothing may be sent anywhere

import common  # noqa: E402
import scripted_model  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: E402
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-langroid"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
OpenAIInstrumentor().instrument(tracer_provider=PROVIDER)

import langroid as lr  # noqa: E402
import langroid.language_models as lm  # noqa: E402
from langroid.mytypes import NonToolAction  # noqa: E402
from pydantic import Field  # noqa: E402

FOLDER = common.TRACES / "langroid-openinference"
PACKAGES = (
    "langroid",
    "openai",
    "openinference-instrumentation-openai",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)
TRACER = trace.get_tracer("music_store.web")  # the application's own tracer

_script = common.active_script

MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"


def run_tool(name: str, **args: Any) -> str:
    """The store's answer as the tool's result text; a refused call as an error text."""
    try:
        return json.dumps(_script().call(name, **args))
    except common.StoreError as exc:
        return f"Error: {exc}"


_PARAMS = common.TOOL_PARAMETERS


class LookupInvoice(lr.ToolMessage):
    request: str = "lookup_invoice"
    purpose: str = common.TOOL_DESCRIPTIONS["lookup_invoice"]
    customer_id: int = Field(
        ..., description=_PARAMS["lookup_invoice"]["customer_id"]["description"]
    )
    invoice_id: int = Field(..., description=_PARAMS["lookup_invoice"]["invoice_id"]["description"])

    def handle(self) -> str:
        return run_tool("lookup_invoice", customer_id=self.customer_id, invoice_id=self.invoice_id)


class LookupTrack(lr.ToolMessage):
    request: str = "lookup_track"
    purpose: str = common.TOOL_DESCRIPTIONS["lookup_track"]
    track_name: str = Field(..., description=_PARAMS["lookup_track"]["track_name"]["description"])

    def handle(self) -> str:
        return run_tool("lookup_track", track_name=self.track_name)


class LookupAlbum(lr.ToolMessage):
    request: str = "lookup_album"
    purpose: str = common.TOOL_DESCRIPTIONS["lookup_album"]
    album_title: str = Field(..., description=_PARAMS["lookup_album"]["album_title"]["description"])

    def handle(self) -> str:
        return run_tool("lookup_album", album_title=self.album_title)


class LookupArtist(lr.ToolMessage):
    request: str = "lookup_artist"
    purpose: str = common.TOOL_DESCRIPTIONS["lookup_artist"]
    artist_name: str = Field(
        ..., description=_PARAMS["lookup_artist"]["artist_name"]["description"]
    )

    def handle(self) -> str:
        return run_tool("lookup_artist", artist_name=self.artist_name)


class Refund(lr.ToolMessage):
    request: str = "refund"
    purpose: str = common.TOOL_DESCRIPTIONS["refund"]
    invoice_id: int = Field(..., description=_PARAMS["refund"]["invoice_id"]["description"])
    track_id: int = Field(..., description=_PARAMS["refund"]["track_id"]["description"])
    reason: str = Field(..., description=_PARAMS["refund"]["reason"]["description"])

    def handle(self) -> str:
        return run_tool(
            "refund", invoice_id=self.invoice_id, track_id=self.track_id, reason=self.reason
        )


TOOLS: list[type[lr.ToolMessage]] = [LookupInvoice, LookupTrack, LookupAlbum, LookupArtist, Refund]


def make_task() -> lr.Task:
    """The agent and its task: one per scenario (the three turns of multi_turn share it)."""
    llm = lm.OpenAIGPTConfig(
        chat_model=common.MODEL_NAME,
        api_base=BASE_URL,
        api_key="sk-offline",
        stream=False,
        cache_config=None,
        timeout=30,
    )
    agent = lr.ChatAgent(
        lr.ChatAgentConfig(
            name=common.AGENT_NAME,
            system_message=common.SYSTEM_PROMPT,
            llm=llm,
            use_tools=False,
            use_functions_api=True,
            use_tools_api=True,
            handle_llm_no_tool=NonToolAction.DONE,
        )
    )
    agent.enable_message(TOOLS)
    return lr.Task(agent, interactive=False, restart=False)


@contextlib.contextmanager
def session(session_id: str | None) -> Iterator[None]:
    """OpenInference's documented session context (multi_turn only)."""
    if session_id:
        with using_session(session_id):
            yield
    else:
        yield


def run_turn(task: lr.Task, text: str, session_id: str | None) -> str | None:
    """One user turn under the application's span named after the agent."""
    attributes: dict[str, Any] = {
        SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.AGENT.value,
        SpanAttributes.AGENT_NAME: common.AGENT_NAME,
        SpanAttributes.INPUT_VALUE: text,
    }
    if session_id:
        attributes[SpanAttributes.SESSION_ID] = session_id
    with (
        session(session_id),
        TRACER.start_as_current_span(common.AGENT_NAME, attributes=attributes) as span,
    ):
        result = task.run(text)
        answer = None if result is None else result.content
        if answer is not None:
            span.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
        return answer


NOTES = (
    "Langroid ChatAgent 'music_store_support' (five ToolMessages over the OpenAI tools API, "
    "OpenAIGPT over a scripted Chat Completions loopback server, Task(interactive=False, "
    "handle_llm_no_tool='done')) traced only by openinference-instrumentation-openai (defaults: "
    "content on): one LLM span 'ChatCompletion' per request under the application's turn span "
    "'music_store_support' (openinference.span.kind AGENT, agent.name, input.value, "
    "output.value; session.id and using_session in multi_turn); no tool spans; the refused "
    "refund is only the tool message 'Error: RefundWindowExpired: ...'. See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    RECORDER.batches.clear()
    MODEL.requests.clear()
    task = make_task()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        finals.append(run_turn(task, text, session_id))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    last = (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
    extra: dict[str, Any] = {
        "tool_messages_in_last_request": [
            m.get("content") for m in last if m.get("role") == "tool"
        ],
        "model_requests": len(MODEL.requests),
    }
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session_id,
        extra=extra,
    )
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests, indent=1)[:6000], file=sys.stderr)
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
