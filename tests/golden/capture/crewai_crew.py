"""Capture CrewAI through openinference-instrumentation-crewai's event listener.

Not run in CI. Run it in a venv of its own (never evald's)::

    python3.12 -m venv /tmp/cap-crewai
    /tmp/cap-crewai/bin/pip install crewai openinference-instrumentation-crewai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    /tmp/cap-crewai/bin/python tests/golden/capture/crewai_crew.py [scenario ...]

Writes ``tests/golden/traces/crewai-openinference/``. ``CrewAIInstrumentor().instrument(
use_event_listener=True)``: spans built from CrewAI's event bus (the default wrapper mode
records no tool spans with crewai 1.15). One ``Crew`` of one ``Agent`` (role
``music_store_support``) and one ``Task`` whose description is the customer's message,
``@tool`` functions, sequential process, one ``crew.kickoff`` per user turn.

The model is CrewAI's own native OpenAI provider (``crewai.LLM(provider="openai")`` →
``OpenAICompletion``, a ``BaseLLM``) with its real ``openai.OpenAI`` client; only the
HTTP answers are scripted, by a loopback HTTP server in this process (no network). So
CrewAI takes its native function-calling path (the calls of one response run in a
thread pool) and emits the LLM call events its providers emit, from which the
listener builds LLM spans. A bare custom ``BaseLLM`` emits none (no LLM spans, so no
tool-call ids) and, without ``supports_function_calling()``, runs CrewAI's text ReAct
loop instead, where a raising tool is retried (3 tool spans). The tools return dicts,
which CrewAI hands on as ``str(value)`` (a Python repr in ``output.value``). The refused
refund raises inside the tool: one attempt, span status ERROR, and the model gets
"Error executing tool: …". Multi-turn memory is CrewAI's crew-chat idiom
(``inputs["crew_chat_messages"]``, as ``crewai.utilities.crew_chat`` does: the previous
turns are appended to the task description); the session id reaches the spans only
through OpenInference's ``using_session()``. CrewAI's own telemetry and tracing are off.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
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
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402

CrewAIInstrumentor().instrument(tracer_provider=PROVIDER, use_event_listener=True)

FOLDER = common.TRACES / "crewai-openinference"
PACKAGES = (
    "crewai",
    "openai",
    "openinference-instrumentation-crewai",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
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
        if scenario.session_id:
            with using_session(scenario.session_id):
                output = crew.kickoff(inputs=inputs)
        else:
            output = crew.kickoff(inputs=inputs)
        assert isinstance(output, CrewOutput)  # not a streaming crew
        finals.append(output.raw or None)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": output.raw}]
        crewai_event_bus.flush()  # the listener ends the crew span from the event bus
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
            "use_event_listener=True; CrewAI's native OpenAI provider talking to a scripted "
            "loopback HTTP server (native function calling: calls of one response run in a "
            "thread pool); tool outputs are Python reprs (CrewAI str()s the returned dict); "
            "the refused refund raises: one attempt, tool span status ERROR, the model gets "
            "'Error executing tool: ...'; session.id only through openinference "
            "using_session() around each kickoff; multi_turn history through "
            "inputs['crew_chat_messages'] (user/assistant texts only, appended to the task "
            "description)"
        ),
        session_id=scenario.session_id,
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
