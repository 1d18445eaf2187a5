"""Capture DSPy ``dspy.ReAct`` traced by Langtrace (langtrace-python-sdk).

Not run in CI. Run it in a venv of its own (never evald's), offline (loopback only)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-dspy-langtrace
    /tmp/cap-dspy-langtrace/bin/pip install dspy==2.6.27 langtrace-python-sdk \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common importlib_metadata \
        "setuptools<81"
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-dspy-langtrace/bin/python tests/golden/capture/dspy_langtrace.py [scenario ...]'

Captured with langtrace-python-sdk 3.8.21, trace-attributes 7.2.1, dspy 2.6.27, litellm
1.97.0 (what pip resolves: langtrace pins boto3==1.38.0, which newer LiteLLM releases
exclude), openai 2.54.0, opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common
1.45.2, opentelemetry-instrumentation 0.66b2, protobuf 7.36.2, importlib_metadata 8.9.0,
setuptools 80.10.2, Python 3.12.1. (langtrace imports ``importlib_metadata`` and
``pkg_resources`` without declaring them: installed by hand.)
Writes ``tests/golden/traces/dspy-langtrace/``.

DSPy 2.6.27, not the newest (3.4.1): Langtrace's DSPy instrumentation wraps, in order,
``BootstrapFewShot.compile``, ``Predict.forward``, ``ChainOfThought.forward``,
``ChainOfThoughtWithHint.forward``, ``ReAct.forward`` ...; DSPy 3.0 removed
``dspy.predict.chain_of_thought_with_hint``, so on any DSPy 3 ``init`` logs "Skipping dspy
due to error while instrumenting" after the first three and ``ReAct.forward`` is never
wrapped: no run span, and every Predict call is a trace of its own (5 traces for one
``correct`` turn with 3.4.1, seen in a first run). 2.6.27 is the newest DSPy with that module.
Its ``dspy.LM`` always goes through LiteLLM (no ``engine`` argument). Langtrace's LiteLLM
instrumentation also stops half-way ("Skipping litellm ...: module 'litellm.main' has no
attribute 'image_generation'"), after wrapping ``completion``, ``text_completion`` and
``acompletion``: the chat path DSPy takes is traced.

The agent is the one of ``dspy_react.py``: one ``dspy.ReAct`` over a signature
``customer_message, history: dspy.History -> response`` whose instructions are the system
prompt, with the store functions as tools (DSPy wraps them in ``dspy.Tool``), and
``dspy.LM("openai/scripted-support-model", api_base=<loopback>, engine="litellm",
cache=False, num_retries=0)`` with ``dspy.ChatAdapter()``. The loopback server
(``scripted_model.ChatCompletions``) answers in DSPy's ChatAdapter text format: one
``next_thought / next_tool_name / next_tool_args`` answer per ReAct iteration (ONE tool per
iteration: the reference's parallel round runs as two consecutive iterations), then
``finish``, then the extract step (``ChainOfThought``: ``reasoning`` + ``response``). The
refused refund raises inside the tool; ReAct catches it and the model sees
"Execution error in refund: ...". Multi-turn memory is a ``dspy.History`` input.

Instrumentation, as Langtrace's DSPy page shows (``langtrace.init`` before importing DSPy;
every instrumentation whose package is installed: dspy, litellm, openai, sqlalchemy ...):
``langtrace.init(custom_remote_exporter=<in-memory BatchRecorder>, service_name=...,
api_key="offline")``, which installs its OWN global ``TracerProvider`` (LangtraceSampler)
with a default ``BatchSpanProcessor`` around the given exporter (the script flushes it
after each turn). Content capture: ``TRACE_PROMPT_COMPLETION_DATA=true`` (Langtrace's
switch; also its default). Each turn runs inside Langtrace's documented
``inject_additional_attributes(fn, {...})``: ``langtrace.span.name`` =
``music_store_support`` (its "custom span naming", shown with a DSPy module; DSPy itself
names no agent) and, in ``multi_turn``, ``session.id`` (docs.langtrace.ai
tracing/filter_by_session_id). That helper attaches the baggage and never detaches it, so
each turn runs in a copied ``contextvars`` context. Phone-home off:
``LANGTRACE_ERROR_REPORTING=False`` (no Sentry), ``OTEL_EXPORTER_OTLP_*`` / ``LANGTRACE_*``
removed, and its SDK-version check (api.github.com) fails offline under ``unshare -rn``.
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "LANGTRACE_"))]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
DSPY_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of LiteLLM's price list at import
    "LITELLM_TELEMETRY": "False",
    "DSPY_CACHEDIR": "/tmp/cap-dspy-langtrace-cache",
    "LANGTRACE_ERROR_REPORTING": "False",  # no Sentry
    "TRACE_PROMPT_COMPLETION_DATA": "true",  # Langtrace's content switch (on)
}
os.environ.update(DSPY_ENV)

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-dspy-langtrace"
RECORDER = common.BatchRecorder()

from langtrace_python_sdk import inject_additional_attributes, langtrace  # noqa: E402

langtrace.init(custom_remote_exporter=RECORDER, service_name=SERVICE, api_key="offline")
PROVIDER: Any = trace.get_tracer_provider()
assert hasattr(PROVIDER, "force_flush"), "Langtrace did not set an SDK tracer provider"

import dspy  # noqa: E402

dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)

FOLDER = common.TRACES / "dspy-langtrace"
PACKAGES = (
    "langtrace-python-sdk",
    "trace-attributes",
    "dspy",
    "litellm",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
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
    PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    attributes: dict[str, str] = {"langtrace.span.name": common.AGENT_NAME}
    if scenario.session_id:
        attributes["session.id"] = scenario.session_id
    with dspy.context(lm=make_lm(), adapter=dspy.ChatAdapter()):
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
            before = len(RECORDER.spans)
            inputs = {"customer_message": text, "history": dspy.History(messages=list(history))}

            def turn_run(inputs: dict[str, Any] = inputs) -> Any:
                return agent(**inputs)

            prediction = contextvars.copy_context().run(
                inject_additional_attributes, turn_run, dict(attributes)
            )
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
            "dspy.ReAct, ChatAdapter text format, LM (LiteLLM) over a scripted "
            "loopback Chat Completions server, traced by Langtrace (langtrace.init, every "
            "instrumentation it has for the installed packages); each ReAct iteration is one "
            "LLM request choosing one tool (next_tool_name / next_tool_args); after the last "
            "tool the model picks ReAct's own 'finish' tool, then one extract request "
            "(ChainOfThought: reasoning + response); llm_calls_per_turn counts the finish "
            "and extract requests too; the refused refund raises, ReAct catches it and the "
            "model sees 'Execution error in refund: ...'; each turn inside "
            "inject_additional_attributes({'langtrace.span.name': 'music_store_support'"
            "[, 'session.id': ...]}); multi_turn history is a dspy.History input; see "
            "NOTES.md for what is recorded" + deviation
        ),
        session_id=scenario.session_id,
        extra={"env": DSPY_ENV},
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
