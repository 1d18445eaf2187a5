"""Capture a Google ADK multi-agent run (root agent → store ``AgentTool``) with ADK's native tracer.

Not run in CI. Run it in a venv of its own (never evald's)::

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/cap-adk-agent-tool
    /tmp/cap-adk-agent-tool/bin/pip install google-adk==2.13.0 google-genai==2.34.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-common
    unshare -rn sh -c 'ip link set lo up; \
        /tmp/cap-adk-agent-tool/bin/python tests/golden/capture/adk_agent_tool.py [scenario ...]'

Captured with google-adk 2.13.0, google-genai 2.34.0, opentelemetry-sdk / -api 1.44.0
(what google-adk pins), opentelemetry-exporter-otlp-proto-common / -proto 1.45.2,
protobuf 7.36.2, Python 3.12.1, only loopback up. Writes
``tests/golden/traces/google-adk-agent-tool/`` (default schema, content capture
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``, as ``adk.py``).

Two real ``LlmAgent``s: the root ``music_store_front_desk`` whose only tool is
``AgentTool(agent=store)``, and the store agent ``music_store_support`` holding the five
store ``FunctionTool``s (plain functions, as in ``adk.py``). The hop is ADK's own
delegation mechanism: the root's model calls the tool ``music_store_support`` with
``{"request": <text>}``, and ``AgentTool.run_async`` runs the store agent in a child
``Runner`` (a fresh ``InMemorySessionService`` session per call) and returns its last
text as the tool result; the root's model then answers the user. Only the model is
scripted (one ``BaseLlm`` object shared by both agents), and it tells them apart by the
tool list of each request: a request offering the store tools is the store agent's and
follows the scenario script; any other is the root's, answered per turn first with the
``music_store_support`` call (the user's text as ``request``) and then, once the tool
result is in the request, with the store agent's final answer verbatim.
``llm_calls_per_turn`` counts every model request, the root's two per turn too. A
refused refund is returned the ADK way, as ``{"status": "error", "error_message"}``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_OTLP")]:
    del os.environ[_name]  # nothing may be sent anywhere
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

import common  # noqa: E402
from opentelemetry import trace  # noqa: E402

PROVIDER, RECORDER = common.make_provider("music-store-support-google-adk-agent-tool")
trace.set_tracer_provider(PROVIDER)

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.adk.tools.agent_tool import AgentTool  # noqa: E402
from google.genai import types  # noqa: E402

FOLDER = common.TRACES / "google-adk-agent-tool"
ROOT_NAME = "music_store_front_desk"
ROOT_INSTRUCTION = (
    "You are the front desk of Tunes & Co, a digital music store. You do not handle "
    "orders yourself: pass every customer request to the music_store_support tool and "
    "give the customer its answer."
)
STORE_TOOLS = {"lookup_track", "lookup_album", "lookup_artist", "lookup_invoice", "refund"}

_script = common.active_script


class Routing:
    """Per-turn state of the root agent's requests (the store agent's are the script's)."""

    turn = -1
    root_requests = 0
    store_final: str | None = None
    delegations: ClassVar[list[dict[str, Any]]] = []
    requests: ClassVar[list[dict[str, Any]]] = []


def _tool_names(llm_request: LlmRequest) -> set[str]:
    names: set[str] = set()
    for tool in (llm_request.config.tools if llm_request.config else None) or []:
        for declaration in getattr(tool, "function_declarations", None) or []:
            names.add(declaration.name)
    return names


def _usage(llm_request: LlmRequest) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=50 + 10 * len(llm_request.contents),
        candidates_token_count=12,
        total_token_count=62 + 10 * len(llm_request.contents),
    )


def _last_user_text(llm_request: LlmRequest) -> str:
    for content in reversed(llm_request.contents):
        if content.role == "user":
            text = "".join(part.text or "" for part in content.parts or [])
            if text:
                return text
    raise RuntimeError("no user text in the root's request")


def _tool_result(llm_request: LlmRequest) -> Any:
    last = llm_request.contents[-1] if llm_request.contents else None
    for part in (last.parts or []) if last else []:
        if part.function_response is not None:
            return part.function_response.response
    return None


class ScriptedModel(BaseLlm):
    """The store agent's requests get the scenario script's next response; the root's get
    the AgentTool call, then the store agent's answer."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        script = _script()
        tools = _tool_names(llm_request)
        is_store = bool(tools & STORE_TOOLS)
        Routing.requests.append(
            {"turn": script.turn, "agent": "store" if is_store else "root", "tools": sorted(tools)}
        )
        if is_store:
            calls, final = script.next_response()
            if final is not None:
                Routing.store_final = final
                parts = [types.Part(text=final)]
            else:
                parts = [
                    types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
                    for call_id, name, args in calls
                ]
        else:
            if Routing.turn != script.turn:
                Routing.turn, Routing.root_requests = script.turn, 0
                Routing.store_final = None
            Routing.root_requests += 1
            script.llm_calls[script.turn] += 1  # a model request, not a step of the script
            if Routing.root_requests == 1 and common.AGENT_NAME in tools:
                call_id = f"adk_{script.scenario.name[:6]}_{script.turn}delegate"
                args = {"request": _last_user_text(llm_request)}
                Routing.delegations.append({"turn": script.turn, "call_id": call_id, "args": args})
                parts = [
                    types.Part(
                        function_call=types.FunctionCall(
                            id=call_id, name=common.AGENT_NAME, args=args
                        )
                    )
                ]
            elif Routing.root_requests == 2 and Routing.store_final is not None:
                result = _tool_result(llm_request)
                Routing.delegations[-1]["result"] = result
                parts = [types.Part(text=Routing.store_final)]
            else:
                raise RuntimeError(f"unexpected root request {Routing.root_requests}: {tools}")
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=_usage(llm_request),
            finish_reason=types.FinishReason.STOP,
        )


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
    try:
        return dict(
            _script().call("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)
        )
    except common.StoreError as exc:  # ADK's idiom: report the failure in the result
        return {"status": "error", "error_message": str(exc)}


async def run(name: str) -> None:
    scenario = common.load_scenario(name)
    common.Active.script = script = common.Script(scenario, "adk")
    Routing.turn, Routing.root_requests, Routing.store_final = -1, 0, None
    Routing.delegations, Routing.requests = [], []
    model = ScriptedModel(model=common.MODEL_NAME)
    store = LlmAgent(
        name=common.AGENT_NAME,
        description="Customer support of the Tunes & Co music store: invoices, "
        "catalogue look-ups and refunds.",
        model=model,
        instruction=common.SYSTEM_PROMPT,
        tools=[lookup_track, lookup_album, lookup_artist, lookup_invoice, refund],
    )
    root = LlmAgent(
        name=ROOT_NAME,
        description="Front desk of the Tunes & Co music store.",
        model=model,
        instruction=ROOT_INSTRUCTION,
        tools=[AgentTool(agent=store)],
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name="music_store", agent=root, session_service=sessions)
    session_id = scenario.session_id or f"adk-{name}-{uuid.uuid4().hex[:8]}"
    await sessions.create_session(
        app_name="music_store", user_id="customer-17", session_id=session_id
    )
    RECORDER.batches.clear()
    finals: list[str | None] = []
    turn_traces: list[str] = []
    authors: list[list[str]] = []
    for turn, text in enumerate(scenario.user_inputs):
        script.start_turn(turn)
        before = len(RECORDER.spans)
        final: str | None = None
        turn_authors: list[str] = []
        async for event in runner.run_async(
            user_id="customer-17",
            session_id=session_id,
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        ):
            turn_authors.append(event.author)
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(part.text or "" for part in event.content.parts) or final
        finals.append(final)
        authors.append(turn_authors)
        PROVIDER.force_flush()
        turn_traces.extend(t for t in common.trace_ids_of(RECORDER.spans[before:]))
    notes = (
        "multi-agent: root LlmAgent 'music_store_front_desk' whose only tool is "
        "AgentTool(agent=music_store_support); per turn the root's first model call requests "
        "the tool 'music_store_support' with {'request': <user text>}, ADK runs it as an "
        "execute_tool span and the store agent inside it (a child Runner with a fresh "
        "InMemorySessionService session), and the root's second model call gives the store "
        "agent's answer verbatim; llm_calls_per_turn counts the root's two model calls too. "
        "gen_ai.conversation.id = the ADK session id of the root's spans (one-shot scenarios "
        "use a random 'adk-<scenario>-<hex>' session, labelled null); the refused refund is "
        "returned as {'status': 'error', 'error_message': ...}: execute_tool span status UNSET"
    )
    capture = common.Capture(
        scenario=scenario,
        script=script,
        batches=RECORDER.batches,
        turn_trace_ids=turn_traces,
        final_responses=finals,
        framework_versions=common.versions("google-adk", "google-genai", "opentelemetry-sdk"),
        notes=notes,
        session_id=scenario.session_id,
        extra={
            "telemetry_env": {
                k: v for k, v in os.environ.items() if k.startswith(("OTEL_", "ADK_"))
            },
            "agents": {"root": ROOT_NAME, "sub_agent": common.AGENT_NAME},
            "delegations": Routing.delegations,
            "model_requests": Routing.requests,
            "event_authors_per_turn": authors,
        },
    )
    common.check_labels(capture)
    common.write_scenario(FOLDER, capture)


def main() -> None:
    for name in common.selected(sys.argv[1:]):
        asyncio.run(run(name))
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
