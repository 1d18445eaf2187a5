"""Capture a hand-written agent loop instrumented manually with Langfuse's ``@observe``.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-langfuse
    /tmp/cap-langfuse/bin/pip install langfuse openai \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-langfuse/bin/python tests/golden/capture/langfuse_observe_manual.py [scenario ...]'

Captured with langfuse 5.0.4, openai 3.57.0, opentelemetry-sdk / -api /
-exporter-otlp-proto-common / -exporter-otlp-proto-http / -proto 1.45.2, protobuf 7.36.2,
Python 3.12.1, in a network namespace with only loopback up. Writes
``tests/golden/traces/langfuse-observe-manual/``.

No agent framework: the user's own plain-Python while-loop calls
``client.chat.completions.create`` (non-streaming) with the five tools and the system prompt,
appends the assistant message, runs each ``tool_call`` in order (sequentially, also the two
calls of ``parallel_calls``) and appends one ``tool`` message per call, until the model answers
without tool calls. The refused refund raises in the tool; the loop catches it and sends
``"Error: RefundWindowExpired: ..."`` back as the tool message.

Instrumentation, by hand, as Langfuse's docs show for custom agents (Python SDK v3+ API,
OpenTelemetry-based): ``@observe(as_type="agent", name="music_store_support")`` on the
agent's method that runs one user turn (``SupportAgent.run(user_input)``: the decorator
skips ``self``), ``@observe(as_type="tool")`` on each tool function, and the model call
through Langfuse's OpenAI drop-in (``from langfuse.openai import OpenAI``: one ``generation``
observation per request). Multi-turn memory is the message list kept across turns; the
session id is given the documented v3+ way, ``langfuse.propagate_attributes(session_id=...)``
entered first thing inside the agent method (multi_turn only; the one-shot scenarios have
none). Input/output are what the decorators capture by default (the function's arguments and
return value).

Export: the client is built explicitly, ``Langfuse(public_key=dummy, secret_key=dummy,
base_url=http://127.0.0.1:9, tracer_provider=<common.make_provider>, span_exporter=<a second
in-memory BatchRecorder>, flush_at=2048, flush_interval=60)``, exactly as
``langfuse_langgraph.py``: Langfuse's own ``LangfuseSpanProcessor`` sits on OUR provider with
the given exporter instead of its OTLP/HTTP exporter to ``{host}/api/public/otel/v1/traces``,
so nothing is sent (the host is a closed local port anyway). Files are written from the
provider's ``BatchRecorder``; each scenario checks that Langfuse's exporter got exactly the same
spans and attributes (``langfuse_export_identical``). ``OTEL_EXPORTER_OTLP_*``, ``LANGFUSE_*``
and ``OPENAI_*`` variables are removed first.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_EXPORTER_OTLP", "LANGFUSE_", "OPENAI_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
LANGFUSE_HOST = "http://127.0.0.1:9"  # closed port: the Langfuse API is never reachable
os.environ["LANGFUSE_HOST"] = LANGFUSE_HOST

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-langfuse-observe"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
LANGFUSE_EXPORT = common.BatchRecorder()  # what Langfuse's own processor would have sent

from langfuse import Langfuse, observe, propagate_attributes  # noqa: E402

LANGFUSE = Langfuse(
    public_key="pk-lf-offline",
    secret_key="sk-lf-offline",
    base_url=LANGFUSE_HOST,
    tracer_provider=PROVIDER,
    span_exporter=LANGFUSE_EXPORT,
    flush_at=2048,
    flush_interval=60,
)

from langfuse.openai import OpenAI  # type: ignore[attr-defined]  # noqa: E402

FOLDER = Path(os.environ.get("CAPTURE_OUT") or common.TRACES) / "langfuse-observe-manual"
PACKAGES = (
    "langfuse",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-api",
    "opentelemetry-exporter-otlp-proto-common",
    "opentelemetry-exporter-otlp-proto-http",
    "protobuf",
)

_script = common.active_script
MODEL = scripted_model.ChatCompletions()  # MODEL.requests: every request body it received
SERVER = MODEL.serve()
BASE_URL = f"{SERVER.url}/v1"

TOOL_SCHEMAS: list[Any] = [  # Chat Completions tool params
    {
        "type": "function",
        "function": {
            "name": name,
            "description": common.TOOL_DESCRIPTIONS[name],
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
            },
        },
    }
    for name, properties in common.TOOL_PARAMETERS.items()
]


# ------------------------------------------------------------------ the tools (observed)


@observe(as_type="tool")
def lookup_track(track_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_track", track_name=track_name))


@observe(as_type="tool")
def lookup_album(album_title: str) -> dict[str, Any]:
    return dict(_script().call("lookup_album", album_title=album_title))


@observe(as_type="tool")
def lookup_artist(artist_name: str) -> dict[str, Any]:
    return dict(_script().call("lookup_artist", artist_name=artist_name))


@observe(as_type="tool")
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


@observe(as_type="tool")
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS: dict[str, Any] = {
    "lookup_track": lookup_track,
    "lookup_album": lookup_album,
    "lookup_artist": lookup_artist,
    "lookup_invoice": lookup_invoice,
    "refund": refund,
}


def run_tool(name: str, arguments: str) -> str:
    """The application's tool dispatch: the content of the ``tool`` message for one call."""
    try:
        return json.dumps(TOOLS[name](**json.loads(arguments)))
    except common.StoreError as exc:
        return f"Error: {exc}"


# ------------------------------------------------------------------ the agent loop


class SupportAgent:
    """The hand-written agent: the conversation so far and one ``run`` per user turn."""

    def __init__(self, session_id: str | None = None) -> None:
        self.client = OpenAI(api_key="sk-offline", base_url=BASE_URL, max_retries=0)
        self.messages: list[Any] = [{"role": "system", "content": common.SYSTEM_PROMPT}]
        self.session_id = session_id

    @observe(as_type="agent", name=common.AGENT_NAME)
    def run(self, user_input: str) -> str | None:
        """One user turn (the Langfuse trace root; ``self`` is not captured as input)."""
        if self.session_id is None:
            return self._loop(user_input)
        with propagate_attributes(session_id=self.session_id):
            return self._loop(user_input)

    def _loop(self, user_input: str) -> str | None:
        self.messages.append({"role": "user", "content": user_input})
        while True:
            response = self.client.chat.completions.create(
                model=common.MODEL_NAME, messages=self.messages, tools=TOOL_SCHEMAS
            )
            message = response.choices[0].message
            self.messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                assert call.type == "function"  # (no custom tools declared)
                content = run_tool(call.function.name, call.function.arguments)
                self.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


# ------------------------------------------------------------------ capture


def _span_record(span: Any) -> tuple[Any, ...]:
    return (
        span.context.trace_id,
        span.context.span_id,
        span.name,
        json.dumps(dict(span.attributes or {}), sort_keys=True, default=str),
        span.status.status_code.name,
    )


def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "call")
    session = scenario.session_id
    RECORDER.batches.clear()
    LANGFUSE_EXPORT.batches.clear()
    MODEL.requests.clear()
    agent = SupportAgent(session)
    PROVIDER.force_flush()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        finals.append(agent.run(text))
        LANGFUSE.flush()  # = PROVIDER.force_flush(): both processors export
        PROVIDER.force_flush()
        turn_traces.extend(common.trace_ids_of(RECORDER.spans[before:]))
    ours = sorted(_span_record(s) for s in RECORDER.spans)
    langfuse_sent = sorted(_span_record(s) for s in LANGFUSE_EXPORT.spans)
    identical = ours == langfuse_sent
    if not identical:
        print(f"{name}: Langfuse's exporter got other spans than the provider", file=sys.stderr)
    tool_messages_sent = [
        message["content"]
        for message in (MODEL.requests[-1].get("messages") if MODEL.requests else []) or []
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
        session_id=session,
        extra={
            "tool_messages_in_last_request": tool_messages_sent,
            "langfuse_export_identical": identical,
            "langfuse_export_batches": len([b for b in LANGFUSE_EXPORT.batches if b]),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


NOTES = (
    "hand-written Chat Completions agent loop (openai client over a scripted loopback server), "
    "instrumented by hand with Langfuse @observe (agent: as_type='agent', tools: as_type='tool') "
    "and the langfuse.openai drop-in (one generation per request); session id via "
    "propagate_attributes (multi_turn). Langfuse's own processor exported to an in-memory "
    "exporter (same spans). See NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    LANGFUSE.shutdown()
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
