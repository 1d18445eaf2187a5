"""Capture DSPy ``dspy.ReAct`` traced by Future AGI's traceAI (``traceai-dspy``).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-dspy-traceai
    /tmp/cap-dspy-traceai/bin/pip install traceai-dspy dspy opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-dspy-traceai/bin/python \
        tests/golden/capture/dspy_traceai.py [scenario ...]'

Captured with traceAI-DSPy 0.1.8, fi-instrumentation-otel 1.1.0, dspy 3.4.1, litellm
1.110.2, opentelemetry-sdk / -api / -exporter-otlp-proto-http / -exporter-otlp-proto-common /
-proto 1.45.2, opentelemetry-instrumentation 0.66b2, Python 3.12.1, in a network namespace
with only loopback up. Writes ``tests/golden/traces/dspy-traceai/``.

The program, tools and scripted model are those of ``dspy_react.py``: one ``dspy.ReAct`` over
the signature ``customer_message, history: dspy.History -> response`` (instructions = the
system prompt) with the store's five functions as tools, ``dspy.ChatAdapter()``, and
``dspy.LM("openai/scripted-support-model", api_base=<loopback>, engine="litellm",
cache=False, num_retries=0)`` against the scripted Chat Completions loopback server, which
answers in ChatAdapter text (one ``next_thought / next_tool_name / next_tool_args`` answer per
ReAct iteration, then ReAct's own ``finish``, then the extract step ``reasoning`` +
``response``). ReAct runs ONE tool per iteration, so the reference's parallel round is
flattened into consecutive iterations. The refused refund raises inside the tool; ReAct
catches it and the model sees "Execution error in refund: ...". Multi-turn memory is a
``dspy.History`` of the previous ``{customer_message, response}`` pairs. DSPy modules have no
name, so the agent is not named ``music_store_support`` anywhere.

Instrumentation, as traceAI's DSPy README shows: ``fi_instrumentation.register(project_type=
ProjectType.OBSERVE, project_name=...)`` (traceAI's own OTel SDK ``TracerProvider``, its
``BatchSpanProcessor`` and OTLP/HTTP protobuf ``HTTPSpanExporter``) and
``DSPyInstrumentor().instrument(tracer_provider=..., config=TraceConfig(...))`` with every
content switch on (the defaults). No key: ``FI_API_KEY`` / ``FI_SECRET_KEY`` are unset and
``FI_BASE_URL`` points at the loopback server, whose ``received_otlp.receiver`` route answers
traceAI's fixed path ``/tracer/v1/traces``; the ``.jsonl`` keeps its export requests as
received. ``force_flush`` after every user turn. Session id:
``fi_instrumentation.using_session(session id)`` around each turn of ``multi_turn``. Every
``OTEL_*`` / ``FI_*`` / ``OPENAI_*`` variable is removed first.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "FI_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver
DSPY_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of LiteLLM's price list at import
    "LITELLM_TELEMETRY": "False",
    "DSPY_CACHEDIR": "/tmp/cap-dspy-traceai-cache",
}
os.environ.update(DSPY_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

FOLDER = common.TRACES / "dspy-traceai"
PROJECT = "music-store-support-dspy-traceai"
TRACEAI_PATH = "/tracer/v1/traces"  # traceAI's HTTPSpanExporter appends this to FI_BASE_URL
PACKAGES = (
    "traceAI-DSPy",
    "fi-instrumentation-otel",
    "dspy",
    "litellm",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "protobuf",
)


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


_script = common.active_script


def _fields(**fields: str) -> str:
    """A completion in ChatAdapter's format: ``[[ ## name ## ]]`` sections, then completed."""
    parts = [f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items()]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


def _answer_text(body: dict[str, Any]) -> str:
    """What the scripted model writes for this request (ReAct step or extract step)."""
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    if isinstance(system, list):
        system = " ".join(part.get("text", "") for part in system)
    script = _script()
    if "next_tool_name" in system:  # a ReAct iteration (dspy.Predict over react_signature)
        calls, _final = script.next_response()
        if calls:
            (_call_id, name, args), *rest = calls
            assert not rest, "ReAct runs one tool per iteration (rounds are flattened)"
            return _fields(
                next_thought=f"I need to call {name} next.",
                next_tool_name=name,
                next_tool_args=json.dumps(args),
            )
        return _fields(
            next_thought="I have all the information needed to answer the customer.",
            next_tool_name="finish",
            next_tool_args="{}",
        )
    # the extract step (dspy.ChainOfThought over the fallback signature)
    script.llm_calls[script.turn] += 1
    final = script.scenario.turns[script.turn].final
    return _fields(reasoning="The trajectory holds everything the reply needs.", response=final)


def _chat_completion(body: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions answer whose text is the ChatAdapter completion of this request."""
    text = _answer_text(body)
    script = _script()
    return scripted_model.completion(
        body,
        {"role": "assistant", "content": text},
        response_id=f"chatcmpl_{script.scenario.name}_{script.turn}{script.llm_calls[script.turn]}",
        finish_reason="stop",
        completion_tokens=30,
    )


SERVER = scripted_model.LoopbackServer(
    {
        scripted_model.ChatCompletions.PATH: scripted_model.ChatCompletions(_chat_completion),
        TRACEAI_PATH: received_otlp.receiver(_keep_export),
    }
)
BASE_URL = f"{SERVER.url}/v1"
os.environ.update({"FI_BASE_URL": SERVER.url, "NO_PROXY": "127.0.0.1,localhost"})

from fi_instrumentation import TraceConfig, register, using_session  # noqa: E402
from fi_instrumentation.fi_types import ProjectType  # noqa: E402
from traceai_dspy import DSPyInstrumentor  # noqa: E402

PROVIDER = register(project_type=ProjectType.OBSERVE, project_name=PROJECT, verbose=False)
DSPyInstrumentor().instrument(
    tracer_provider=PROVIDER,
    config=TraceConfig(
        hide_inputs=False,
        hide_outputs=False,
        hide_input_messages=False,
        hide_output_messages=False,
        hide_input_text=False,
        hide_output_text=False,
    ),
)

import dspy  # noqa: E402

dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)


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


class SupportRequest(dspy.Signature):  # type: ignore[misc]  # dspy.Signature is untyped
    __doc__ = common.SYSTEM_PROMPT

    customer_message: str = dspy.InputField()
    history: dspy.History = dspy.InputField()
    response: str = dspy.OutputField()


def make_lm() -> dspy.LM:
    return dspy.LM(
        f"openai/{common.MODEL_NAME}",
        api_base=BASE_URL,
        api_key="sk-offline",
        engine="litellm",
        cache=False,
        num_retries=0,
    )


def make_agent() -> dspy.ReAct:
    return dspy.ReAct(
        SupportRequest, tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund]
    )


def flattened(scenario: common.Scenario) -> common.Scenario:
    """The scenario with one tool call per model step (ReAct's one tool per iteration)."""
    turns = [
        common.ModelTurn([[call] for round_ in turn.rounds for call in round_], turn.final)
        for turn in scenario.turns
    ]
    return common.Scenario(scenario.name, scenario.reference, turns)


NOTES = (
    "dspy.ReAct, ChatAdapter text format, dspy.LM engine='litellm' over a scripted loopback "
    "Chat Completions server, traced by Future AGI's traceAI: fi_instrumentation.register("
    "project_type=OBSERVE) (its own TracerProvider, BatchSpanProcessor, HTTPSpanExporter) and "
    "traceai_dspy.DSPyInstrumentor, every TraceConfig content switch on; exported over "
    "OTLP/HTTP protobuf to a loopback receiver at FI_BASE_URL + /tracer/v1/traces, no key; "
    "force_flush after every turn. Each ReAct iteration is one LLM request choosing one tool "
    "(next_tool_name / next_tool_args); after the last tool the model picks ReAct's own "
    "'finish' tool, then one extract request (ChainOfThought: reasoning + response); "
    "llm_calls_per_turn counts the finish and extract requests too; the refused refund raises, "
    "ReAct catches it and the model sees 'Execution error in refund: ...'; multi_turn: "
    "dspy.History input and fi_instrumentation.using_session(session id) around each turn; "
    "see NOTES.md"
)


def run(name: str) -> None:
    scenario = flattened(common.load_scenario(name))
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    session_id = scenario.session_id
    assert PROVIDER.force_flush()
    Received.requests = []
    history: list[dict[str, str]] = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    with dspy.context(lm=make_lm(), adapter=dspy.ChatAdapter()):
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
            before = len(Received.requests)
            inputs = {"customer_message": text, "history": dspy.History(messages=list(history))}
            scope = using_session(session_id) if session_id else contextlib.nullcontext()
            with scope:
                prediction = agent(**inputs)
            finals.append(prediction.response or None)
            history.append({"customer_message": text, "response": prediction.response})
            assert PROVIDER.force_flush(), "traceAI's export did not flush"
            turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
    if Received.content_types - {"application/x-protobuf"}:
        raise SystemExit(f"unexpected export encodings {Received.content_types}")
    deviation = (
        "; parallel_calls: ReAct runs one tool per iteration, so the reference's parallel "
        "round (lookup_invoice + lookup_track in one response) ran as two consecutive "
        "iterations (no parallel_group in actual_trajectory)"
        if name == "parallel_calls"
        else ""
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=[],
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES + deviation,
        session_id=session_id,
        extra={"env": DSPY_ENV, "lm_engine": "litellm"},
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
