"""Capture DSPy ``dspy.ReAct`` through OpenLIT (``openlit.init``; its ``litellm`` instrumentor).

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-dspy-openlit
    /tmp/cap-dspy-openlit/bin/pip install dspy==3.4.1 litellm==1.106.2 openlit \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; /tmp/cap-dspy-openlit/bin/python \
        tests/golden/capture/dspy_openlit.py [scenario ...]'

Captured with dspy 3.4.1, litellm 1.106.2, openai 2.54.0, openlit 1.45.0 (the newest on PyPI),
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common 1.45.1,
opentelemetry-instrumentation(-httpx) 0.66b1, protobuf 7.36.2 (Python 3.12.1). Writes
``tests/golden/traces/dspy-openlit/``.

**OpenLIT 1.45.0 has no DSPy instrumentation**: ``openlit/instrumentation/`` holds no
``dspy`` module and ``openlit._instrumentors`` lists none (OpenLIT's docs list DSPy among
its integrations, the installed package does not ship it). What OpenLIT records of a DSPy
program is therefore its ``litellm`` instrumentor (it wraps ``litellm.completion``, which
DSPy's ``LM(engine="litellm")`` calls): one ``chat <model>`` span per model request, and
nothing of ReAct or of its tools. As in ``llamaindex_openlit.py``, each user turn runs
inside OpenLIT's documented ``openlit.start_trace("support_turn")`` (one CLIENT span, no
attributes), without which every model request would be a one-span trace of its own.

The agent is the one of ``dspy_react.py``: one ``dspy.ReAct`` over a signature
``customer_message, history: dspy.History -> response`` whose instructions are the system
prompt, the store functions as tools (DSPy wraps them in ``dspy.Tool``; the refused refund
raises, ReAct catches it and the model sees "Execution error in refund: ..."), the LM
``dspy.LM("openai/scripted-support-model", api_base=<loopback>, engine="litellm",
cache=False, num_retries=0)``, ``ChatAdapter``. The loopback Chat Completions route answers in
ChatAdapter text: one ``next_thought / next_tool_name / next_tool_args`` answer per ReAct
iteration (one tool per iteration: parallel rounds are flattened), then ``finish``, then the
extract step (``reasoning`` + ``response``). Multi-turn memory is a ``dspy.History`` input.

Instrumentation: ``openlit.init`` with its defaults (every instrumentor it finds) except
``disable_metrics=True``, ``collect_gpu_stats=False``, ``capture_message_content=True``, no
``otlp_endpoint``, and ``pricing_json`` = an empty local file (otherwise it downloads its
price list from GitHub). OpenLIT reuses the SDK ``TracerProvider`` / ``LoggerProvider`` set
globally first (asserted). Log records go to our logger provider (``<scenario>.logs.*``).
Session id: none. OpenLIT documents none for DSPy or LiteLLM (its litellm instrumentor reads
no conversation id), so ``multi_turn`` is three unrelated traces (labels: ``session_id: null``).
``OTEL_EXPORTER_OTLP*`` / ``OPENLIT_*`` / ``OPENAI_*`` are unset, LiteLLM's telemetry and
price-list download are off, and the capture runs with only loopback up.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_EXPORTER_OTLP", "OPENLIT_", "OPENAI_"))]:
    del os.environ[_name]  # nothing may be sent anywhere, no token of any kind
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
DSPY_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of LiteLLM's price list at import
    "LITELLM_TELEMETRY": "False",
    "DSPY_CACHEDIR": "/tmp/cap-dspy-openlit-cache",
}
os.environ.update(DSPY_ENV)

import common  # noqa: E402
import common_logs  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

SERVICE = "music-store-support-dspy-openlit"
PROVIDER, RECORDER = common.make_provider(SERVICE)
LOG_PROVIDER, LOG_RECORDER = common_logs.make_logger_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
_logs.set_logger_provider(LOG_PROVIDER)

import openlit  # noqa: E402

_PRICING = Path(tempfile.mkdtemp(prefix="openlit-pricing-")) / "pricing.json"
_PRICING.write_text("{}", encoding="utf-8")
openlit.init(
    service_name=SERVICE,
    environment="acceptance-test",
    capture_message_content=True,
    disable_metrics=True,
    collect_gpu_stats=False,
    pricing_json=str(_PRICING),
)
assert trace.get_tracer_provider() is PROVIDER, "OpenLIT replaced the tracer provider"
assert _logs.get_logger_provider() is LOG_PROVIDER, "OpenLIT replaced the logger provider"

import dspy  # noqa: E402

dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
ENGINE = "litellm"
FOLDER = common.TRACES / "dspy-openlit"
PACKAGES = (
    "dspy",
    "litellm",
    "openai",
    "openlit",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-instrumentation",
    "opentelemetry-instrumentation-httpx",
    "opentelemetry-proto",
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
    PROVIDER.force_flush()
    LOG_PROVIDER.force_flush()
    RECORDER.batches.clear()
    LOG_RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    with dspy.context(lm=make_lm(), adapter=dspy.ChatAdapter()):
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
            before = len(RECORDER.spans)
            inputs = {"customer_message": text, "history": dspy.History(messages=list(history))}
            # OpenLIT's documented grouping of calls into one trace (nothing records the agent)
            with openlit.start_trace("support_turn"):
                prediction = agent(**inputs)
            finals.append(prediction.response or None)
            history.append({"customer_message": text, "response": prediction.response})
            PROVIDER.force_flush()
            LOG_PROVIDER.force_flush()
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
        notes=NOTES + deviation,
        session_id=None,
        extra={"env": DSPY_ENV, "lm_engine": ENGINE},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    common_logs.write_logs(FOLDER, name, LOG_RECORDER.batches)
    spans = [span for batch in RECORDER.batches for span in batch]
    (FOLDER / f"{name}.tree.txt").write_text(
        common_logs.tree_text_with_logs(spans, LOG_RECORDER.records), encoding="utf-8"
    )


NOTES = (
    "dspy.ReAct, ChatAdapter text format, LM engine='litellm' over a scripted loopback Chat "
    "Completions server, traced by OpenLIT 1.45.0 (openlit.init reusing the global SDK "
    "providers). OpenLIT ships no DSPy instrumentation: only its litellm instrumentor records "
    "(one 'chat <model>' span per model request + a log record each), no agent or tool span; "
    "each turn runs under openlit.start_trace('support_turn'). Each ReAct iteration is one LLM "
    "request choosing one tool; after the last tool the model picks ReAct's own 'finish' tool, "
    "then one extract request (ChainOfThought); llm_calls_per_turn counts the finish and "
    "extract requests too; the refused refund raises inside the tool, ReAct catches it and the "
    "model sees 'Execution error in refund: ...'; no session id recorded; multi_turn history "
    "is a dspy.History input; see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    PROVIDER.shutdown()
    LOG_PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
