"""Capture a Haystack ``Agent`` traced by Langfuse through langfuse-haystack's connector.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-haystack-langfuse
    /tmp/cap-haystack-langfuse/bin/pip install haystack-ai langfuse-haystack langfuse \
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up && \
        /tmp/cap-haystack-langfuse/bin/python \\
            tests/golden/capture/haystack_langfuse.py [scenario ...]'

Captured with haystack-ai 3.4.1, langfuse-haystack 8.0.0, langfuse 5.0.4, openai 3.57.0,
opentelemetry-sdk / -api / -proto / -exporter-otlp-proto-common / -exporter-otlp-proto-http
1.45.2, protobuf 7.36.2 (Python 3.12.1), in a network namespace with only loopback up.
Writes ``tests/golden/traces/haystack-langfuse/``.

The agent of ``haystack_agent.py``: ``Agent`` with ``OpenAIChatGenerator`` pointed at the
scripted Chat Completions loopback server (``scripted_model.ChatCompletions``, so the real
``openai.OpenAI`` client runs), tools from ``create_tool_from_function`` with the store's
descriptions, default ``exit_conditions=["text"]``, ``raise_on_tool_invocation_failure=False``.
One ``Agent.run`` per user turn; multi-turn memory is the Haystack idiom: the previous
``result["messages"]`` (without the system message, which the Agent prepends again) plus the
new user message. The refused refund raises inside the tool; the Agent turns it into a tool
``ChatMessage`` with ``error=True``.

Instrumentation, as langfuse-haystack documents it: ``HAYSTACK_CONTENT_TRACING_ENABLED=true``
set before Haystack is imported (content tracing on: the integration records inputs and
outputs only then), ``LangfuseConnector("music_store_support", ...)`` whose ``warm_up()``
builds the Langfuse client and calls ``haystack.tracing.enable_tracing(LangfuseTracer(...))``
(what a pipeline holding the connector does at warm-up; the Agent runs on its own here, as in
``haystack_agent.py``, so the connector is warmed up once by hand). The trace name given to
the connector names the root observation of each ``Agent.run``. Langfuse's client gets its
options through the connector's ``langfuse_client_kwargs`` the way ``langfuse_langgraph.py``
builds it: dummy keys, ``base_url``/``host`` a closed local port, ``tracer_provider=<our
common.make_provider>``, ``span_exporter=<a second in-memory BatchRecorder>``: Langfuse adds
its own ``LangfuseSpanProcessor`` to our provider with that exporter instead of its OTLP/HTTP
one, so nothing is sent anywhere. The files are written from the provider's own
``BatchRecorder``; each scenario checks that Langfuse's exporter received the same spans with
the same attributes (``langfuse_export_identical`` in each ``expected.json``).
``HAYSTACK_LANGFUSE_ENFORCE_FLUSH`` is left at its default (``true``): the tracer flushes the
client after every span it ends, so the SDK exports one batch per span.

Session (``multi_turn``): Langfuse's documented mechanism, ``langfuse.propagate_attributes(
session_id=...)`` around each ``Agent.run`` (the connector's ``run`` takes no session; the
integration's root ``propagate_attributes`` passes ``None`` for it, which keeps the outer
value). ``OTEL_EXPORTER_OTLP*``, ``LANGFUSE_*`` and ``LANGSMITH_*`` variables are removed first.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
_OFF = ("OTEL_EXPORTER_OTLP", "LANGFUSE_", "LANGSMITH_", "LANGCHAIN_", "HAYSTACK_")
for _name in [n for n in os.environ if n.startswith(_OFF)]:
    del os.environ[_name]  # nothing may be sent anywhere
for _name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER"):
    os.environ.pop(_name, None)
LANGFUSE_HOST = "http://127.0.0.1:9"  # closed port: the Langfuse API is never reachable
os.environ["LANGFUSE_HOST"] = LANGFUSE_HOST
os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"  # before Haystack is imported
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

import common  # noqa: E402
import scripted_model  # noqa: E402
from opentelemetry import trace  # noqa: E402

SERVICE = "music-store-support-haystack-langfuse"
PROVIDER, RECORDER = common.make_provider(SERVICE)
trace.set_tracer_provider(PROVIDER)
LANGFUSE_EXPORT = common.BatchRecorder()  # what Langfuse's own processor would have sent

from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools.from_function import create_tool_from_function  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from haystack_integrations.components.connectors.langfuse import LangfuseConnector  # noqa: E402
from langfuse import propagate_attributes  # noqa: E402

CONNECTOR = LangfuseConnector(
    common.AGENT_NAME,
    public_key=Secret.from_token("pk-lf-offline"),
    secret_key=Secret.from_token("sk-lf-offline"),
    host=LANGFUSE_HOST,
    langfuse_client_kwargs={
        "tracer_provider": PROVIDER,
        "span_exporter": LANGFUSE_EXPORT,
        "flush_at": 2048,
        "flush_interval": 60,
    },
)
CONNECTOR.warm_up()  # builds the Langfuse client and enables Haystack tracing with it
assert CONNECTOR.tracer is not None
LANGFUSE_TRACER = CONNECTOR.tracer

FOLDER = common.TRACES / "haystack-langfuse"
PACKAGES = (
    "haystack-ai",
    "langfuse-haystack",
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


def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name.

    :param track_name: The exact name of the track.
    """
    return dict(_script().call("lookup_track", track_name=track_name))


def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title.

    :param album_title: The title of the album.
    """
    return dict(_script().call("lookup_album", album_title=album_title))


def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them.

    :param artist_name: The name of the artist.
    """
    return dict(_script().call("lookup_artist", artist_name=artist_name))


def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids).

    :param customer_id: The customer's id.
    :param invoice_id: The invoice's id.
    """
    return dict(_script().call("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id))


def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice.

    :param invoice_id: The invoice's id.
    :param track_id: The id of the track to refund.
    :param reason: Why the customer wants the refund.
    """
    return dict(_script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason))


TOOLS = [
    create_tool_from_function(fn, description=common.TOOL_DESCRIPTIONS[fn.__name__])
    for fn in (lookup_track, lookup_album, lookup_artist, lookup_invoice, refund)
]


def make_agent() -> Agent:
    generator = OpenAIChatGenerator(
        api_key=Secret.from_token("sk-offline"),
        model=common.MODEL_NAME,
        api_base_url=BASE_URL,
        max_retries=0,
        timeout=30,
    )
    return Agent(chat_generator=generator, tools=TOOLS, system_prompt=common.SYSTEM_PROMPT)


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
    agent = make_agent()
    history: list[ChatMessage] = []
    PROVIDER.force_flush()
    RECORDER.batches.clear()
    LANGFUSE_EXPORT.batches.clear()
    MODEL.requests.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        messages = [*history, ChatMessage.from_user(text)]
        if session:
            with propagate_attributes(session_id=session):
                result = agent.run(messages=messages)
        else:
            result = agent.run(messages=messages)
        finals.append(result["last_message"].text or None)
        history = [m for m in result["messages"] if not m.is_from("system")]
        LANGFUSE_TRACER.flush()  # = PROVIDER.force_flush(): both processors export
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
        tool_error_contains="RefundWindowExpired",
        extra={
            "tool_messages_in_last_request": tool_messages_sent,
            "langfuse_export_identical": identical,
            "langfuse_export_batches": len([b for b in LANGFUSE_EXPORT.batches if b]),
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)
    if os.environ.get("CAPTURE_DEBUG"):
        print(json.dumps(MODEL.requests[-1], indent=1)[:3000], file=sys.stderr)


NOTES = (
    "Haystack Agent + OpenAIChatGenerator over a scripted loopback Chat Completions server, "
    "traced by langfuse-haystack's LangfuseConnector (LangfuseTracer on the Langfuse Python "
    "SDK, OTel spans with langfuse.observation.* attributes) on our TracerProvider; Langfuse's "
    "own processor exported to an in-memory exporter (same spans). See NOTES.md"
)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        run(name)
    LANGFUSE_TRACER.flush()
    PROVIDER.shutdown()
    SERVER.shutdown()


if __name__ == "__main__":
    main()
