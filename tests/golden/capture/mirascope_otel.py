"""Capture a Mirascope 2.x tool-calling agent loop traced by Mirascope's own OpenTelemetry ops.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-mirascope-otel
    /tmp/cap-mirascope-otel/bin/pip install 'mirascope[openai,anthropic,google,ops]' \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common opentelemetry-proto
    unshare -rn sh -c 'ip link set lo up && /tmp/cap-mirascope-otel/bin/python \
        tests/golden/capture/mirascope_otel.py [scenario ...]'

(``mirascope.ops`` refuses to load unless every module of its ``ops`` extra imports, the
OpenLLMetry Anthropic and contrib google-genai instrumentations included, and those need
the ``anthropic`` and ``google-genai`` SDKs: hence the two extra extras. Neither is used.)

Captured with mirascope 2.8.2, openai 2.54.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -proto 1.45.2, opentelemetry-semantic-conventions 0.66b2,
orjson 3.13.0, protobuf 7.36.2 (installed but unused: anthropic 0.125.0, google-genai
1.75.0, opentelemetry-instrumentation-openai-v2 2.3b0, -anthropic 0.62.4, -google-genai
0.7b2), Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/mirascope-otel/``.

The agent, as Mirascope's docs show it (``llm`` "Tools": the loop; ``ops`` "Tracing" and its
cloud example of a traced agent): the five tools are ``@llm.tool`` functions (name, docstring
and ``Args:`` section give the schema the model sees), each also ``@ops.trace``d under the
tool decorator; ``support_call`` is ``@ops.trace`` over ``@llm.call(model, tools=[...])``
returning the system prompt and the user's message; the per-turn function
``music_store_support`` (``@ops.trace``, the agent's name is its span's name) calls it, then
loops ``while response.tool_calls: response = response.resume(response.execute_tools())`` and
returns ``response.text()``. Later turns of ``multi_turn`` continue the conversation with
``previous_response.resume(user text)`` (the documented way to continue), so the history is
the previous response's messages. ``execute_tools`` runs the calls of one response one after
the other (sync tools); the refused refund raises inside the tool, Mirascope catches it
(``Tool.execute``) and sends the exception's text back as the tool output
(``ToolOutput(result=str(exc), error=ToolExecutionError)``).

The model is ``openai/scripted-support-model:completions`` (Mirascope's OpenAI provider on
the Chat Completions API, as the ``:completions`` suffix selects), registered with
``llm.register_provider("openai", api_key=…, base_url=…)`` to a loopback HTTP server in
this process that scripts the answers (``scripted_model.ChatCompletions``); the real
``openai`` client talks to it.

Instrumentation, as Mirascope's ``ops`` docs show: ``ops.configure(tracer_provider=…)`` with
an SDK ``TracerProvider`` (``common.make_provider``: a ``BatchSpanProcessor`` into the
in-memory ``BatchRecorder``, flushed after every user turn), then ``ops.instrument_llm()``
(GenAI spans ``chat <model>`` for every ``Model`` call and resume; it sets
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` itself). Content capture has no
switch: messages, tool definitions, arguments and results are always recorded. The session id
(multi_turn only) is set with ``ops.session(id=…)`` around each turn (Mirascope's Sessions
API). Every ``OTEL_*`` / ``OPENAI_*`` / ``MIRASCOPE_*`` variable is removed first.
"""

# mirascope ships no py.typed: its decorators are untyped for mypy
# mypy: disable-error-code="untyped-decorator"

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith(("OTEL_", "OPENAI_", "MIRASCOPE_"))]:
    del os.environ[_name]  # nothing may be sent anywhere but to the loopback server
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

import common  # noqa: E402
import scripted_model  # noqa: E402

FOLDER = common.TRACES / "mirascope-otel"
PACKAGES = (
    "mirascope",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-proto",
    "opentelemetry-semantic-conventions",
    "orjson",
    "protobuf",
)

PROVIDER, RECORDER = common.make_provider("music-store-support-mirascope")
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()

from mirascope import llm, ops  # noqa: E402

ops.configure(tracer_provider=PROVIDER)
ops.instrument_llm()
llm.register_provider("openai", api_key="sk-offline", base_url=f"{SERVER.url}/v1")
MODEL_ID = f"openai/{common.MODEL_NAME}:completions"

_script = common.active_script


# ------------------------------------------------------------------ the tools


@llm.tool
@ops.trace
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name.

    Args:
        track_name: The exact track name.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


@llm.tool
@ops.trace
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title.

    Args:
        album_title: The album title.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


@llm.tool
@ops.trace
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them.

    Args:
        artist_name: The artist's name.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@llm.tool
@ops.trace
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids).

    Args:
        customer_id: The customer's id.
        invoice_id: The invoice id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@llm.tool
@ops.trace
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice.

    Args:
        invoice_id: The invoice id.
        track_id: The track to refund.
        reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [lookup_invoice, lookup_track, lookup_album, lookup_artist, refund]


@ops.trace
@llm.call(MODEL_ID, tools=TOOLS)
def support_call(query: str) -> list[llm.Message]:
    """The first request of a conversation: the system prompt and the user's message."""
    return [llm.messages.system(common.SYSTEM_PROMPT), llm.messages.user(query)]


# ------------------------------------------------------------------ the agent loop


def make_agent() -> Any:
    """A fresh conversation: ``music_store_support(text)`` runs one user turn of it."""
    last: list[llm.Response] = []  # the previous turn's final response

    @ops.trace
    def music_store_support(query: str) -> str:
        """One user turn: call (or continue) the conversation, run tools until done."""
        response = support_call(query) if not last else last[-1].resume(query)
        while response.tool_calls:
            tool_outputs = response.execute_tools()
            response = response.resume(tool_outputs)
        last.append(response)
        return str(response.text())

    return music_store_support


# ------------------------------------------------------------------ capture

NOTES = (
    "Mirascope 2.x agent loop (@llm.call with five @llm.tool tools, each also @ops.trace'd; "
    "@ops.trace on the call and on the per-turn function music_store_support, which loops "
    "response.execute_tools() / response.resume() until no tool calls; later turns "
    "previous_response.resume(text)) over Mirascope's OpenAI provider on Chat Completions "
    "(loopback scripted server), traced by Mirascope's own ops: ops.configure(tracer_provider) "
    "+ ops.instrument_llm() (GenAI 'chat <model>' spans); multi_turn: ops.session(id) around "
    "each turn. Content always recorded (no switch). See NOTES.md"
)


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session_id = scenario.session_id
    PROVIDER.force_flush()
    RECORDER.batches.clear()
    MODEL.requests.clear()
    agent = make_agent()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        if session_id:
            with ops.session(id=session_id):
                finals.append(agent(text))
        else:
            finals.append(agent(text))
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    last_request = MODEL.requests[-1] if MODEL.requests else {}
    tool_messages_sent = [
        message.get("content")
        for message in last_request.get("messages") or []
        if message.get("role") == "tool"
    ]
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions(*PACKAGES),
        notes=NOTES,
        session_id=session_id,
        extra={"tool_messages_in_last_request": tool_messages_sent},
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    try:
        for name in common.selected(sys.argv[1:]):
            run(name)
    finally:
        ops.uninstrument_llm()
        PROVIDER.shutdown()
        SERVER.shutdown()


if __name__ == "__main__":
    main()
