"""Capture DSPy ``dspy.ReAct`` traced by MLflow Tracing (``mlflow.dspy.autolog()``) over OTLP.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-dspy-mlflow
    /tmp/cap-dspy-mlflow/bin/pip install mlflow==3.17.2 dspy==3.4.1 litellm==1.106.2 \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common \
        opentelemetry-exporter-otlp-proto-http
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-dspy-mlflow/bin/python tests/golden/capture/dspy_mlflow.py [scenario ...]'

Captured with mlflow / mlflow-skinny / mlflow-tracing 3.17.2, dspy 3.4.1, litellm 1.106.2,
openai 2.54.0, opentelemetry-sdk / -api / -exporter-otlp-proto-common /
-exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2, Python 3.12.1, in a network
namespace with only loopback up. Writes ``tests/golden/traces/dspy-mlflow/``.

The agent is the one of ``dspy_react.py``: one ``dspy.ReAct`` over a signature
``customer_message, history: dspy.History -> response`` whose instructions are the system
prompt, the store functions as tools (DSPy wraps them in ``dspy.Tool``; the refused refund
raises, ReAct catches it and the model sees "Execution error in refund: ..."), the LM
``dspy.LM("openai/scripted-support-model", api_base=<loopback>, engine="litellm",
cache=False, num_retries=0)`` (LiteLLM, explicitly: dspy 3.4's ``auto`` prefers its vendored
``lm15`` client), ``ChatAdapter``. The loopback Chat Completions route answers in
ChatAdapter text: one ``next_thought / next_tool_name / next_tool_args`` answer per ReAct
iteration (one tool per iteration: parallel rounds are flattened), then ``finish``, then
the extract step (``reasoning`` + ``response``). Multi-turn memory is a ``dspy.History``
input; ``multi_turn`` runs inside ``mlflow.tracing.context(session_id=...)`` (MLflow's
documented way to give the traces of a scope a session).

Instrumentation and export exactly as ``mlflow_langgraph.py``: ``mlflow.dspy.autolog()`` with
its defaults (no other autolog), MLflow's own tracer provider,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` = the ``received_otlp.receiver`` route of the loopback
server in this process and ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf``, so MLflow
installs only its ``OtelSpanProcessor`` (no tracking-store processor, no MLflow server;
``MLFLOW_TRACKING_URI`` is a SQLite file under /tmp that tracing never writes). MLflow's
provider is force-flushed after every user turn. ``MLFLOW_DISABLE_TELEMETRY`` / ``DO_NOT_TRACK``
/ ``LITELLM_TELEMETRY`` off, LiteLLM's local cost map; every other ``OTEL_*`` / ``MLFLOW_*`` /
``LITELLM_*`` / ... variable is removed first.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_", "MLFLOW_", "LANGSMITH_", "LANGCHAIN_", "DATABRICKS_", "LITELLM_", "DSPY_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback receiver
DSPY_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of LiteLLM's price list at import
    "LITELLM_TELEMETRY": "False",
    "DSPY_CACHEDIR": "/tmp/cap-dspy-mlflow-cache",
}
os.environ.update(DSPY_ENV)

import common  # noqa: E402
import received_otlp  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

SERVICE = "music-store-support-dspy-mlflow"
FOLDER = common.TRACES / "dspy-mlflow"
PACKAGES = (
    "mlflow",
    "mlflow-skinny",
    "mlflow-tracing",
    "dspy",
    "litellm",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-proto",
    "protobuf",
)

_script = common.active_script


class Received:
    """The OTLP export requests the loopback receiver got for the scenario being captured."""

    requests: ClassVar[list[ExportTraceServiceRequest]] = []
    content_types: ClassVar[set[str]] = set()


def _keep_export(request: ExportTraceServiceRequest, content_type: str) -> None:
    Received.requests.append(request)
    Received.content_types.add(content_type)


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


MODEL = scripted_model.ChatCompletions(_chat_completion)  # MODEL.requests: every request body


SERVER = scripted_model.LoopbackServer(
    {
        received_otlp.TRACES_PATH: received_otlp.receiver(_keep_export),
        scripted_model.ChatCompletions.PATH: MODEL,
    }
)
BASE_URL = f"{SERVER.url}/v1"

_STORE = Path(tempfile.mkdtemp(prefix="mlflow-dspy-capture-"))
os.environ.update(
    {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{SERVER.url}{received_otlp.TRACES_PATH}",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_SERVICE_NAME": SERVICE,
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=acceptance-test",
        "MLFLOW_TRACKING_URI": f"sqlite:///{_STORE / 'mlflow.db'}",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
        "NO_PROXY": "127.0.0.1,localhost",
    }
)

import dspy  # noqa: E402
import mlflow  # noqa: E402
import mlflow.tracing.provider  # noqa: E402

mlflow.dspy.autolog()
dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)


def _flush() -> None:
    """Export what MLflow's OTLP span processor holds (one request per turn)."""
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    if hasattr(tracer_provider, "force_flush"):  # none before MLflow's first span
        assert tracer_provider.force_flush(30_000), "MLflow's OTLP export did not flush"


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


def run(name: str) -> None:
    scenario = flattened(common.load_scenario(name))
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    agent = make_agent()
    history: list[dict[str, str]] = []
    MODEL.requests.clear()
    _flush()
    Received.requests = []
    finals: list[str | None] = []
    turn_traces: list[str] = []
    with dspy.context(lm=make_lm(), adapter=dspy.ChatAdapter()):
        for turn, text in enumerate(scenario.user_inputs):
            script.start_turn(turn)
            before = len(Received.requests)
            inputs = {"customer_message": text, "history": dspy.History(messages=list(history))}
            with mlflow.tracing.context(session_id=session) if session else _Nothing():
                prediction = agent(**inputs)
            finals.append(prediction.response or None)
            history.append({"customer_message": text, "response": prediction.response})
            _flush()
            turn_traces.extend(received_otlp.ids_of(Received.requests[before:]))
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
        session_id=session,
        extra={
            "env": DSPY_ENV,
            "lm_engine": "litellm",
            "otlp_transport": "OTLP/HTTP protobuf ("
            + ", ".join(sorted(Received.content_types))
            + ") from MLflow's OtelSpanProcessor with opentelemetry-exporter-otlp-proto-http",
        },
    )
    common.check_labels(capture)
    received_otlp.write_scenario(FOLDER, capture, Received.requests)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


NOTES = (
    "dspy.ReAct, ChatAdapter text format, LM engine='litellm' over a scripted loopback Chat "
    "Completions server, traced by MLflow Tracing (mlflow.dspy.autolog) on MLflow's own tracer "
    "provider, exported by MLflow's OtelSpanProcessor over OTLP/HTTP protobuf "
    "(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) to a loopback receiver (the .jsonl holds each "
    "received request); each ReAct iteration is one LLM request choosing one tool; after the "
    "last tool the model picks ReAct's own 'finish' tool, then one extract request "
    "(ChainOfThought); llm_calls_per_turn counts the finish and extract requests too; the "
    "refused refund raises inside the tool, ReAct catches it and the model sees "
    "'Execution error in refund: ...'; multi_turn inside mlflow.tracing.context(session_id=...) "
    "with a dspy.History input; see NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    tracer_provider: Any = mlflow.tracing.provider.provider.get()
    tracer_provider.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
