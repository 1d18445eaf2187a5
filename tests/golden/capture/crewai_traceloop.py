"""Capture CrewAI through Traceloop OpenLLMetry's opentelemetry-instrumentation-crewai.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-crewai-tl
    /tmp/cap-crewai-tl/bin/pip install crewai opentelemetry-instrumentation-crewai \
        opentelemetry-instrumentation-openai opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-crewai-tl/bin/python tests/golden/capture/crewai_traceloop.py [scenario ...]'

Captured with crewai 1.15.30, openai 2.54.0, opentelemetry-instrumentation-crewai 0.62.4,
opentelemetry-instrumentation-openai 0.62.4, opentelemetry-semantic-conventions-ai 0.5.1,
opentelemetry-sdk / -api / -exporter-otlp-proto-common / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/crewai-traceloop/``.

The crew of ``crewai_crew.py`` (the OpenInference capture: one ``Crew`` of one ``Agent``,
role ``music_store_support``, one ``Task`` whose description is the customer's message,
``@tool`` functions, sequential process, one ``crew.kickoff`` per user turn, CrewAI's
native OpenAI provider ``LLM(provider="openai")`` → ``OpenAICompletion`` with its real
``openai.OpenAI`` client against the scripted Chat Completions loopback server, the
crew-chat idiom for multi-turn memory, CrewAI's own telemetry off); only the
instrumentation differs. Traceloop's instrumentors are used directly with the capture's
TracerProvider (no traceloop-sdk, nothing phones home; ``TRACELOOP_TELEMETRY=false``
anyway, ``OTEL_EXPORTER_OTLP*`` removed, ``TRACELOOP_TRACE_CONTENT=true``, the default).
The crewai instrumentor wraps ``Crew.kickoff``, ``Agent.execute_task``,
``Task.execute_sync`` and ``crewai.llm.LLM.call``; CrewAI's native providers are
``BaseLLM`` subclasses, not ``LLM``, so the model calls are recorded by
opentelemetry-instrumentation-openai around the ``openai`` client (both instrumentors
installed, as traceloop-sdk does). No tool spans: the instrumentor wraps no tool method.
No session id: the only documented Traceloop mechanism (association properties) belongs to
traceloop-sdk, not to the instrumentors.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["TRACELOOP_TELEMETRY"] = "false"
os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
for _key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_key]
CREWAI_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",  # CrewAI's anonymous telemetry (its own provider)
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",  # CrewAI AMP tracing, and its first-run prompt
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # no PyPI look-up from the console formatter
}
os.environ.update(CREWAI_ENV)  # not OTEL_SDK_DISABLED: it would disable our provider too

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-crewai")
trace.set_tracer_provider(PROVIDER)

from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.crews.crew_output import CrewOutput  # noqa: E402
from crewai.events.event_bus import crewai_event_bus  # noqa: E402
from crewai.tools import tool  # noqa: E402
from opentelemetry.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

OpenAIInstrumentor().instrument(tracer_provider=PROVIDER)
CrewAIInstrumentor().instrument(tracer_provider=PROVIDER)

FOLDER = common.TRACES / "crewai-traceloop"
PACKAGES = (
    "crewai",
    "openai",
    "opentelemetry-instrumentation-crewai",
    "opentelemetry-instrumentation-openai",
    "opentelemetry-semantic-conventions-ai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-proto",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
)
TASK_DESCRIPTION = "{customer_message}"
EXPECTED_OUTPUT = "The reply to send to the customer."


_script = common.active_script


SERVER = scripted_model.ChatCompletions().serve()
BASE_URL = f"{SERVER.url}/v1"


def scripted_llm() -> LLM:
    """CrewAI's native OpenAI provider (``OpenAICompletion``), pointed at the scripted server."""
    return LLM(
        model=common.MODEL_NAME,
        provider="openai",
        api_key="sk-offline",
        base_url=BASE_URL,
        max_retries=0,
    )


@tool("lookup_track")
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return dict(_script().call("lookup_track", track_name=track_name))


@tool("lookup_album")
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return dict(_script().call("lookup_album", album_title=album_title))


@tool("lookup_artist")
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@tool("lookup_invoice")
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@tool("refund")
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


def make_crew() -> Crew:
    agent = Agent(
        role=common.AGENT_NAME,
        goal="Answer the customers of the Tunes & Co music store and settle their requests.",
        backstory=common.SYSTEM_PROMPT,
        llm=scripted_llm(),
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
        allow_delegation=False,
        verbose=False,
    )
    task = Task(description=TASK_DESCRIPTION, expected_output=EXPECTED_OUTPUT, agent=agent)
    return Crew(
        agents=[agent], tasks=[task], process=Process.sequential, verbose=False, tracing=False
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    crew = make_crew()
    history: list[dict[str, str]] = []
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        inputs: dict[str, Any] = {"customer_message": text}
        if history:  # CrewAI's crew-chat idiom (crewai.utilities.crew_chat)
            inputs["crew_chat_messages"] = json.dumps(history)
        output = crew.kickoff(inputs=inputs)
        assert isinstance(output, CrewOutput)  # not a streaming crew
        finals.append(output.raw or None)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": output.raw}]
        crewai_event_bus.flush()  # let CrewAI's event handlers finish before the flush
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=(
            "Traceloop opentelemetry-instrumentation-crewai + -openai used directly (no "
            "traceloop-sdk); CrewAI's native OpenAI provider talking to a scripted loopback "
            "HTTP server (native function calling: calls of one response run in a thread "
            "pool), its model calls recorded by the openai instrumentor (the crewai one wraps "
            "only crewai.llm.LLM.call); no tool spans; the refused refund raises, the model "
            "gets 'Error executing tool: ...'; multi_turn history through "
            "inputs['crew_chat_messages'] (user/assistant texts only, appended to the task "
            "description); no session id (association properties need traceloop-sdk)"
        ),
        session_id=None,
        extra={"telemetry_env": CREWAI_ENV},
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
