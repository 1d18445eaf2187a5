"""Capture DSPy ``dspy.ReAct`` through openinference-instrumentation-dspy (+ -litellm).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-dspy
    /tmp/cap-dspy/bin/pip install dspy openinference-instrumentation-dspy \
        openinference-instrumentation-litellm opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    /tmp/cap-dspy/bin/python tests/golden/capture/dspy_react.py [scenario ...]

Captured with dspy 3.4.1, litellm 1.106.2, openai 2.54.0, openinference-instrumentation-dspy
0.1.48, openinference-instrumentation-litellm 0.1.51, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk / -api / -proto /
-exporter-otlp-proto-common 1.45.2, protobuf 7.36.2 (Python 3.12.1).

Writes ``tests/golden/traces/dspy-openinference/``.
``DSPyInstrumentor`` and ``LiteLLMInstrumentor`` (Arize's DSPy tracing docs instrument
both, DSPy "frequently uses LiteLLM under the hood"); content on (default TraceConfig).

One ``dspy.ReAct`` over a signature ``customer_message, history: dspy.History ->
response`` whose instructions are the system prompt, with the store functions as tools
(DSPy wraps them in ``dspy.Tool``). The LM is ``dspy.LM("openai/scripted-support-model",
api_base=<loopback>, engine="litellm", cache=False, num_retries=0)``: dspy 3.4's default
``engine="auto"`` prefers its vendored ``lm15`` HTTP client over LiteLLM; the brief asks
for the LiteLLM path, so it is chosen explicitly (see NOTES.md for what ``auto`` records).
The loopback server speaks Chat Completions and answers in DSPy's ``ChatAdapter`` text
format: one ``[[ ## next_thought ## ]] / next_tool_name / next_tool_args`` answer per
ReAct iteration (ReAct runs exactly ONE tool per iteration: the reference's parallel
round is flattened into consecutive iterations), then ``finish`` (ReAct's own pseudo-tool,
args ``{}``), then the extract step (``ChainOfThought``: ``reasoning`` + ``response``).
The refused refund raises inside the tool: ReAct catches it and the model sees the
observation "Execution error in refund: ...". Multi-turn memory is DSPy's idiom, a
``dspy.History`` input of the previous ``{customer_message, response}`` pairs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
DSPY_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of LiteLLM's price list at import
    "LITELLM_TELEMETRY": "False",
    "DSPY_CACHEDIR": "/tmp/cap-dspy-cache",
}
os.environ.update(DSPY_ENV)
ENGINE = "litellm"
for arg in list(sys.argv[1:]):
    if arg.startswith("--engine="):
        ENGINE = arg.split("=", 1)[1]

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-dspy")
trace.set_tracer_provider(PROVIDER)

from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.dspy import DSPyInstrumentor  # noqa: E402
from openinference.instrumentation.litellm import LiteLLMInstrumentor  # noqa: E402

DSPyInstrumentor().instrument(tracer_provider=PROVIDER)
LiteLLMInstrumentor().instrument(tracer_provider=PROVIDER)

import dspy  # noqa: E402

dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)

FOLDER = common.TRACES / (
    "dspy-openinference" if ENGINE == "litellm" else f"dspy-openinference-{ENGINE}"
)
PACKAGES = (
    "dspy",
    "litellm",
    "openai",
    "openinference-instrumentation-dspy",
    "openinference-instrumentation-litellm",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "opentelemetry-sdk",
)

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
        calls, final = script.next_response()
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


SERVER = scripted_model.ChatCompletions(_chat_completion).serve()
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
        engine=ENGINE,
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


def run(name: str) -> None:
    scenario = flattened(common.load_scenario(name))
    common.Active.script = script = common.Script(scenario, "call")
    agent = make_agent()
    history: list[dict[str, str]] = []
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    with dspy.context(lm=make_lm(), adapter=dspy.ChatAdapter()):
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
            before = len(RECORDER.spans)
            inputs = {"customer_message": text, "history": dspy.History(messages=list(history))}
            if scenario.session_id:
                with using_session(scenario.session_id):
                    prediction = agent(**inputs)
            else:
                prediction = agent(**inputs)
            finals.append(prediction.response or None)
            history.append({"customer_message": text, "response": prediction.response})
            PROVIDER.force_flush()
            turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
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
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=(
            f"dspy.ReAct, ChatAdapter text format, LM engine={ENGINE!r} over a scripted "
            "loopback Chat Completions server; DSPyInstrumentor + LiteLLMInstrumentor; each "
            "ReAct iteration is one LLM request choosing one tool (next_tool_name / "
            "next_tool_args); after the last tool the model picks ReAct's own 'finish' tool "
            "(a real dspy.Tool, traced like the store tools), then one extract request "
            "(ChainOfThought: reasoning + response); llm_calls_per_turn counts the finish "
            "and extract requests too; the refused refund raises: the tool span ends with "
            "status ERROR and an exception event, ReAct catches it and the model sees "
            "'Execution error in refund: ...'; session.id only through openinference "
            "using_session(); multi_turn history is a dspy.History input" + deviation
        ),
        session_id=scenario.session_id,
        extra={"env": DSPY_ENV, "lm_engine": ENGINE},
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
