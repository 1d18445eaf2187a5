"""Golden tests: real framework traces → trajectories, through the real decoders.

Inputs and labels are ``tests/golden/traces/<framework>/<scenario>.{jsonl,pb,expected.json}``:
copied from shared/traces (``SHARED``), or captured here from the real packages by
``tests/golden/capture/*.py`` (``CAPTURED``; see its README). Every scenario, framework
and form must reproduce the labelled executed tool calls (with their results), user
inputs, final responses and session; the full ``Trajectory.to_json()`` is pinned in
``tests/golden/trajectories`` so any output change shows up in review. Regenerate on
purpose with ``EVALD_REGEN_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from support.captures import (
    NO_CONTENT_RECORDED,
    SESSION_NOT_RECORDED,
    TOOL_PREFIXES,
    not_read,
    user_mappings,
)
from support.paths import GOLDEN

from collector.assembly.log_join import join
from collector.core.records import AttrValue, CompletionReason, LogRecord, Span, Trace
from collector.decode import (
    AttributeSelector,
    decode_json,
    decode_logs_json,
    decode_logs_protobuf,
    decode_protobuf,
)
from collector.decode.common import KEEP_ALL
from collector.decode.log_records import log_selector
from collector.normalize import (
    ATTRIBUTE_SELECTOR,
    Mappings,
    normalize,
    normalize_runs,
    session_key,
)
from evaluators.depth import EVERYTHING
from evaluators.matching import bare_name
from evaluators.trajectory import Step, StepKind, Trajectory

TRACES = GOLDEN / "traces"
TRAJECTORIES = GOLDEN / "trajectories"
REGENERATE = os.environ.get("EVALD_REGEN_GOLDEN") == "1"
SCENARIOS = sorted(
    (path.parent.name, path.name.removesuffix(".expected.json"))
    for path in TRACES.glob("*/*.expected.json")
)
FORMS = ("jsonl", "pb")
SHARED = {"pydantic-ai", "langchain-openinference", "langchain-traceloop", "vercel-ai-sdk"}
CAPTURED = {
    "google-adk-content",
    "google-adk-legacy",
    "strands",
    "strands-latest-semconv",
    "openai-agents-openinference",
    "openai-agents-traceloop",
    "langchain-langsmith-otel",
    "crewai-openinference",
    "anthropic-client-openinference",
    "anthropic-client-openinference-sdk-spans",
    "dspy-openinference",
    "haystack-openinference",
    "langchainjs-openinference",
    "mcp-tools-openai-agents",
    "google-genai-afc-otel",
    "google-genai-afc-chat-otel",
    "ms-agent-framework",
    "openai-client-otel-v2",
    "openai-client-otel-v2-legacy",
    "smolagents-openinference",
    "llamaindex-openinference",
    "agno-openinference",
    "autogen-agentchat",
    "langgraph-openlit",
    "mastra",
    "semantic-kernel",
    "llamaindex-traceloop",
    "google-adk-openinference",
    "crewai-traceloop",
    "openai-agents-logfire",
    "langgraph-langfuse",
    "beeai-openinference",
    "vercel-ai-sdk-agent",
    "haystack-traceloop",
    "langgraph-mlflow",
    "smolagents-code-openinference",
    "openai-agents-openlit",
    "pydantic-ai-openinference",
    "dspy-mlflow",
    "genkit",
    "langgraph-supervisor-openinference",
    "openai-agents-handoff-openinference",
    "google-adk-sub-agents",
    "pydantic-ai-delegation",
    "crewai-hierarchical-openinference",
    "agno-team-openinference",
    "smolagents-managed-openinference",
    "openai-agents-as-tool-traceloop",
    "strands-multi-agent",
    "google-adk-agent-tool",
    "autogen-swarm",
    "langgraph-swarm-langfuse",
    "openai-agents-handoff-logfire",
    "openai-agents-otel-genai",
    "ms-agent-framework-handoff",
    "burr-openllmetry",
    "griptape-otel",
    "semantic-kernel-handoff",
    "llamaindex-agentworkflow-openinference",
    "langgraph-langtrace",
    "litellm-otel",
    "ag2-otel",
    "autogen-agentchat-openinference",
    "voltagent",
    "openai-agents-handoff-mlflow",
    "haystack-otel-native",
    "langfuse-observe-manual",
    "traceloop-decorators-manual",
    "vercel-ai-openinference",
    "crewai-openlit",
    "claude-agent-sdk-otel",
    "ms-agent-framework-sequential",
    "mlflow-manual",
    "agentops-manual",
    "llamaindex-openlit",
    "phoenix-decorators-manual",
    "langgraphjs-langfuse",
    "pydantic-ai-openlit",
    "langchainjs-traceloop",
    "agno-openlit",
    "google-adk-openlit",
    "mastra-langfuse",
    "haystack-openlit",
    "dspy-openlit",
    "openai-agents-laminar",
    "llamaindex-otel-native",
    "langgraph-azure-ai-otel",
    "langgraph-langwatch",
    "langgraph-laminar",
    "openai-client-laminar",
    "llamaindex-mlflow",
    "openai-agents-traceai",
    "haystack-langfuse",
    "strands-openinference",
    "openai-agents-js-openinference",
    "mirascope-otel",
    "agno-traceloop",
    "openai-client-elastic",
    "openai-client-openinference",
    "openai-js-traceloop",
    "openai-agents-agentops",
    "openai-client-logfire",
    "crewai-mlflow",
    "smolagents-mlflow",
    "langgraph-traceai",
    "anthropic-client-traceloop",
    "openai-js-openinference",
    "google-adk-traceai",
    "anthropic-client-logfire",
    "crewai-traceai",
    "openai-agents-langsmith",
    "smolagents-traceai",
    "langroid-openinference",
    "vercel-ai-traceloop",
    "pydantic-ai-mlflow",
    "dspy-langtrace",
    "google-adk-agentops",
    "litellm-openinference",
    "google-genai-openinference",
    "llamaindex-traceai",
    "haystack-traceai",
    "agno-agentops",
    "mistral-client-openinference",
    "camel-ai-agentops",
    "pydantic-ai-otel-v6",
    "crewai-agentops",
    "adk-js-otel",
    "any-agent-tinyagent",
    "fast-agent-otel",
    "google-genai-traceloop",
    "gemini-cli-otel",
    "beeai-js-openinference",
    "ag2-openlit",
    "deepagents-openinference",
    "mcp-agent-otel",
    "crewai-langtrace",
    "codex-cli-otel",
    "agno-mlflow",
    "smolagents-openlit",
    "agentscope-otel",
    "langgraph-agentops",
    "llamaindex-langtrace",
    "mastra-arize",
    "mastra-otel-exporter",
    "crewai-laminar",
    "agno-traceai",
    "opencode-cli-otel",
    "autogen-agentchat-mlflow",
    "dspy-traceai",
    "ag2-agentops",
    "llamaindex-laminar",
    "strands-mlflow",
    "pydantic-ai-traceai",
    "agent-framework-openinference",
    "agno-langtrace",
    "autogen-agentchat-agentops",
    "claude-agent-sdk-openinference",
    "wayflow-agentspec-openinference",
    "strands-openlit",
    "mastra-laminar",
    "dynamiq-openlit",
}
# Instrumentations that record no agent name anywhere (client-level instrumentation,
# or a framework whose run span is named after its class or method: LlamaIndex
# ``FunctionAgent.run``, smolagents ``<agent>.run``): the trajectory's agent is
# whatever the run root is called, not the labelled agent.
AGENT_NAME_NOT_RECORDED = {
    "dspy-openlit",  # (OpenLIT has no DSPy instrumentation: only the model calls)
    "haystack-openlit",
    "openai-client-otel-v2",
    "openai-client-otel-v2-legacy",
    "anthropic-client-openinference",
    "anthropic-client-openinference-sdk-spans",
    "dspy-openinference",
    "haystack-openinference",
    "google-genai-afc-otel",
    "google-genai-afc-chat-otel",
    "smolagents-openinference",
    "llamaindex-openinference",
    "llamaindex-traceloop",
    "openai-agents-logfire",  # only under a bare ``name`` on a span no convention reads
    "haystack-traceloop",
    "smolagents-code-openinference",
    "dspy-mlflow",
    "burr-openllmetry",  # a state machine's action spans; the model calls name no agent
    # workflow steps only: the hand-over's name ("store") is read, the entry agent's is not
    "llamaindex-agentworkflow-openinference",
    "litellm-otel",  # an LLM gateway's spans only, under the application's own turn span
    "haystack-otel-native",  # Haystack's own tracer: the agent's spans name no agent
    "claude-agent-sdk-otel",  # Claude Code: the turn span is its only name
    "llamaindex-openlit",  # OpenLIT records the model calls only, under the app's turn span
    "llamaindex-otel-native",  # LlamaIndex's own OTel handler: class-named spans, no agent
    # LangWatch's LangChain callback: the agent is only the name of LangGraph's graph span,
    # typed ``chain`` as every node is, below the decorated turn function
    "langgraph-langwatch",
    # Laminar's @observe: the agent is only the name of the span the user decorated
    "openai-client-laminar",
    # MLflow's LlamaIndex autolog: the agent span is named after the class
    # (``FunctionAgent.run``); the name is only a field (``current_agent_name``) of the run's
    # output object and of the workflow steps' inputs, as with OpenInference
    "llamaindex-mlflow",
    # Mirascope's @ops.trace: the agent is only the name (and ``mirascope.fn.qualname``) of
    # the function the user decorated, as every traced function's (the tools' too)
    "mirascope-otel",
    # client-only instrumentations (Elastic's EDOT OpenAI, OpenInference's OpenAI) under the
    # application's own turn span: the agent is only that plain span's name (no attributes)
    "openai-client-elastic",
    "openai-client-openinference",
    # Logfire's instrument_openai under the application's ``logfire.span`` per turn: the
    # agent is only that span's name (and its ``logfire.msg``), no agent key
    "openai-client-logfire",
    # OpenLLMetry's anthropic instrumentation under the application's turn span: the agent
    # is only that plain span's name (no attributes)
    "anthropic-client-traceloop",
    "anthropic-client-logfire",  # the same with instrument_anthropic
    # traceAI's smolagents instrumentation: the run span is named after the class
    # (``ToolCallingAgent.run``) and its smolagents.* keys hold no agent name
    "smolagents-traceai",
    # traceAI's LlamaIndex instrumentation: spans named after the class and method
    # (``FunctionAgent.run``, a CHAIN); the name is only ``current_agent_name`` inside the
    # JSON of the workflow steps' input.value / output.value, as with OpenInference
    "llamaindex-traceai",
    # traceAI's Haystack instrumentation: spans named after the class (``Pipeline.run``,
    # ``Agent.run``); the name is only the pipeline's component key inside the root's
    # input.value / output.value JSON
    "haystack-traceai",
    # AgentOps has no CAMEL instrumentor (CAMEL's own AgentOps hooks are v3 events, no-ops
    # in agentops 0.4): only the OpenAI client's spans under the application's
    # start_trace root; the ChatAgent's role_name and agent_id reach no span or message
    "camel-ai-agentops",
    # fast-agent's own OTel support: the agent is only the name of its plain INTERNAL span
    # ``Agent: 'music_store_support' generate`` (no attributes); the root is the app's name
    "fast-agent-otel",
    # Gemini CLI names no agent of the user's: every span says gen_ai.agent.name
    # "gemini-cli" (the CLI itself; nothing in its settings or flags renames it)
    "gemini-cli-otel",
    # OpenInference's BeeAI-JS instrumentation: the ToolCallingAgent's meta.name reaches no
    # span or message (the run root is ``beeai-framework-main``, ``source`` the class name)
    "beeai-js-openinference",
    # Codex CLI's own telemetry: no agent name (``agent_name`` on its tool records is its
    # agent path ``/root``); the name is only in the developer instructions, not exported
    "codex-cli-otel",
    # traceAI's DSPy instrumentation: a DSPy module has no name; the run span is named after
    # the class (``ReAct.forward``, a CHAIN), as with OpenInference
    "dspy-traceai",
    # Laminar over OpenLLMetry's LlamaIndex instrumentation: spans named after the class and
    # method (``FunctionAgent.workflow``, ``BaseWorkflowAgent.task``), as llamaindex-traceloop;
    # the name is only ``current_agent_name`` inside the steps' traceloop.entity.output JSON
    # (and in the application's handle_turn lmnr.span.input, its serialized arguments)
    "llamaindex-laminar",
    # OpenInference's Claude Agent SDK instrumentation: the run span is named after the
    # method (``ClaudeAgentSDK.ClaudeSDKClient.receive_response``); the SDK has no name for its
    # main agent (``agents=`` names subagents only), and agent.name is set on subagent spans only
    "claude-agent-sdk-openinference",
    # Mastra's Laminar exporter: the agent is only in the run span's name
    # (``agent run: 'music_store_support'``); no key names it (Mastra's metadata holds runId,
    # and threadId/resourceId with a memory thread)
    "mastra-laminar",
}
# Multi-agent captures: the agent the run starts in, and the sub-agent that ran the
# store's tools (each executed tool step is that agent's).
MULTI_AGENT: dict[str, tuple[str | None, str]] = {
    "langgraph-supervisor-openinference": ("music_store_support", "store"),
    "openai-agents-handoff-openinference": ("triage", "music_store_support"),
    "google-adk-sub-agents": ("music_store_front_desk", "music_store_support"),
    "pydantic-ai-delegation": ("music_store_support", "store"),
    "crewai-hierarchical-openinference": ("music_store_support", "store"),
    "agno-team-openinference": ("music_store_support", "store"),
    # smolagents names its run spans ``<agent name>.run`` and records no agent name
    "smolagents-managed-openinference": ("music_store_support.run", "store.run"),
    "openai-agents-as-tool-traceloop": ("music_store_support", "store"),
    "strands-multi-agent": ("front_desk", "store"),
    "google-adk-agent-tool": ("music_store_front_desk", "music_store_support"),
    "autogen-swarm": ("front_desk", "store"),
    "langgraph-swarm-langfuse": ("front_desk", "store"),
    # Logfire names the store agent only under a bare ``name``, confirmed by the
    # hand-over; the triage agent (nothing hands over to it) is named nowhere
    "openai-agents-handoff-logfire": (None, "music_store_support"),
    "ms-agent-framework-handoff": ("triage", "store"),
    # a sequential workflow: triage answers in text, the store agent runs after it
    "ms-agent-framework-sequential": ("triage", "store"),
    # AG2's two-agent chat: the conversation is the initiating agent's (the user proxy,
    # which also runs the tools); the assistant's model calls are its own
    "ag2-otel": ("customer", "customer"),
    # the same chat traced by OpenLIT: no tool span, so each executed call is read from
    # the assistant's model reply that requested it and is the assistant's (the user
    # proxy runs it inside its generate_reply span, which records no call)
    "ag2-openlit": ("customer", "music_store_support"),
    # MLflow's root is the runner (an agent span naming no agent); the agents are named
    # by their span names only
    "openai-agents-handoff-mlflow": ("AgentRunner.run", "music_store_support"),
}
# Tool calls carry no id in these captures: the model's calls are text (DSPy's ReAct
# adapter) or the SDK sends none (Gemini API function calls).
CALL_IDS_NOT_RECORDED = {
    "dspy-openinference",
    "google-genai-afc-otel",
    "smolagents-code-openinference",  # the calls are Python source the model wrote
    "dspy-mlflow",
    # the contrib GenAI instrumentation of the OpenAI Agents SDK writes the model's calls
    # as Python reprs in text parts, and tool spans without ids
    "openai-agents-otel-genai",
    # LangWatch's LangChain callback: the model's replies keep no calls and the tool spans
    # no ids (they are only in the input of LangGraph's ``tools`` node span, not read)
    "langgraph-langwatch",
    # MLflow's smolagents autolog records no model call (it patches ``Model.__call__``,
    # which smolagents 1.26 never calls) and tool spans without ids
    "smolagents-mlflow",
    # traceAI's smolagents instrumentation records no model call (it wraps
    # ``Model.__call__``, which smolagents 1.26 never calls) and tool spans without ids
    "smolagents-traceai",
    # DSPy's ReAct (the model writes its calls as ChatAdapter text) traced by Langtrace,
    # and by OpenLIT (its LiteLLM model calls only)
    "dspy-langtrace",
    "dspy-openlit",
    # a hand-written google-genai loop: the Gemini API's function calls carry no id, so
    # neither do the loop's function responses (OpenInference records neither)
    "google-genai-openinference",
    # the same loop traced by OpenLLMetry's google-generativeai instrumentation: its
    # tool_call / tool_call_response parts carry "id": "" (the Gemini API sent none)
    "google-genai-traceloop",
    # AgentOps' Agno instrumentation records no model call (its OpenAI client
    # instrumentation is off beside an agentic library) and tool spans without ids
    "agno-agentops",
    # any-agent's own tracing (tinyagent): tool spans without ids, the model's calls only as
    # {"tool.name", "tool.args"} objects in gen_ai.output, and the request messages (with the
    # tool messages' ids) only on the first model span of a run
    "any-agent-tinyagent",
    # DSPy's ReAct (the model writes its calls as ChatAdapter text) traced by traceAI
    "dspy-traceai",
    # AgentOps' AG2 instrumentation: the model's replies with calls are not recorded (no
    # gen_ai.completion.* on those model spans) and the tool spans carry no call id
    "ag2-agentops",
    # traceAI's pydantic-ai instrumentation: one span per Agent.run, no model or tool span
    "pydantic-ai-traceai",
}
# Scenarios whose instrumentation lost a call's id and request: OpenLIT records only the
# last of several tool calls of one Responses-API reply, and tool spans without ids.
CALL_IDS_LOST = {("openai-agents-openlit", "parallel_calls")}
# One model span covers the whole automatic-function-calling loop (the requests inside
# it have no span of their own): the count of model requests is not recorded.
MODEL_LOOP_IN_ONE_SPAN = {"google-genai-afc-otel"}
# Every model request of a turn written onto one span, chats too: the OpenInference
# instrumentation of ADK 2.13's default schema suppresses ADK's per-request spans and
# lets each request overwrite ADK's agent span (an upstream bug; see its NOTES.md).
MODEL_CALLS_IN_ONE_SPAN = {"google-adk-openinference", "voltagent"}  # (VoltAgent: its one
# llm:generateText span covers the whole tool loop and records only the first request)
# No model call recorded at all (traceai-smolagents 0.1.5 wraps Model.__call__ and the
# step method, which smolagents 1.26 never calls): the trajectory says so (the
# ``model_calls`` gap) instead of counting none.
MODEL_CALLS_NOT_RECORDED = {
    "smolagents-traceai",
    # AgentOps' Agno instrumentation wraps Agent.arun and FunctionCall.execute only, and
    # takes its own OpenAI client instrumentation off beside an agentic library
    "agno-agentops",
    # traceai-pydantic-ai 0.1.0 wraps Agent.run only: the run's token totals, no model span
    "pydantic-ai-traceai",
    # OpenInference's Claude Agent SDK instrumentation: the model requests are made by the
    # Claude Code CLI process, which it does not see; the run span's llm.output_messages.N
    # are the SDK's AssistantMessages, one per content block (a reply with two tool_use blocks
    # is two of them), and its token counts the turn's sums: no count of model requests
    "claude-agent-sdk-openinference",
}
# (NO_CONTENT_RECORDED, support.captures): the trajectory states the gaps instead of
# arguments, results, input and answer (evaluators answer "not recorded", never a
# verdict on the agent).
NO_CONTENT_GAPS = {"tool_args", "tool_results", "input", "output", "content"}
# Tools recorded under their plugin's name (TOOL_PREFIXES, support.captures); the labels
# name the function, as a spec may (``evaluators.matching.names_match``).
QUALIFIED_TOOL_NAMES = set(TOOL_PREFIXES)
CORE_SCENARIOS = {"correct", "extra_call", "wrong_order", "tool_error", "parallel_calls"}


def decode_file(path: Path, selector: AttributeSelector = ATTRIBUTE_SELECTOR) -> list[Span]:
    """All spans of a ``.jsonl`` (one request per line) or ``.pb`` (one request) file."""
    if path.suffix == ".pb":
        return decode_protobuf(path.read_bytes(), selector).spans
    spans: list[Span] = []
    for line in path.read_bytes().splitlines():
        if line.strip():
            spans.extend(decode_json(line, selector).spans)
    return spans


def decode_logs(path: Path, selector: AttributeSelector = ATTRIBUTE_SELECTOR) -> list[LogRecord]:
    """The log records captured beside a trace file (``<scenario>.logs.jsonl|pb``), if any."""
    logs = path.with_name(path.name.replace(".", ".logs.", 1))
    if not logs.exists():
        return []
    if logs.suffix == ".pb":
        return decode_logs_protobuf(logs.read_bytes(), log_selector(selector)).records
    records: list[LogRecord] = []
    for line in logs.read_bytes().splitlines():
        if line.strip():
            records.extend(decode_logs_json(line, log_selector(selector)).records)
    return records


def group_traces(spans: list[Span], records: Sequence[LogRecord] = ()) -> dict[str, Trace]:
    """Spans grouped by trace id (hex), in arrival order, with their log records joined,
    as the assembler releases them."""
    grouped: dict[bytes, list[Span]] = {}
    for span in spans:
        grouped.setdefault(span.trace_id, []).append(span)
    logs: dict[bytes, list[LogRecord]] = {}
    for record in records:
        logs.setdefault(record.trace_id, []).append(record)
    return {
        trace_id.hex(): Trace(
            trace_id,
            join(group, logs.get(trace_id, ())).spans,
            CompletionReason.END_OF_INPUT,
            0,
            0,
        )
        for trace_id, group in grouped.items()
    }


def load(framework: str, scenario: str, form: str) -> tuple[dict[str, Any], dict[str, Trace]]:
    """A scenario's labels and traces, decoded as evald decodes them (with the mapping a
    user of that capture's instrumentation writes, ``USER_MAPPINGS``)."""
    folder = TRACES / framework
    expected = json.loads((folder / f"{scenario}.expected.json").read_text())
    path = folder / f"{scenario}.{form}"
    mappings = user_mappings(framework)
    selector = ATTRIBUTE_SELECTOR if mappings is None else mappings.selector(ATTRIBUTE_SELECTOR)
    return expected, group_traces(decode_file(path, selector), decode_logs(path, selector))


def turn_trace_ids(expected: dict[str, Any]) -> list[str]:
    stray = set(expected.get("stray_traces", ()))
    return [trace_id for trace_id in expected["trace_ids"] if trace_id not in stray]


def turn_trajectories(
    expected: dict[str, Any], traces: dict[str, Trace], mappings: Mappings | None = None
) -> list[Trajectory]:
    """Each labelled turn's trajectory, as the daemon evaluates it: the runs of the
    turns' traces in order (``normalize_runs``). A trace labelled with k turns holds
    k runs (a conversation recorded in one trace) or one, read as all of them."""
    ids = turn_trace_ids(expected)
    found: list[Trajectory] = []
    for trace_id in dict.fromkeys(ids):
        runs = [run.trajectory for run in normalize_runs(traces[trace_id], mappings, EVERYTHING)]
        found.extend(runs if len(runs) > 1 else runs * ids.count(trace_id))
    return found


def grouped_calls(calls: list[tuple[str, Any, bool]], groups: list[Any]) -> list[list[str]]:
    """Calls as JSON texts, chunked into parallel groups (order inside a group is meaningless)."""
    chunks: list[list[str]] = []
    previous: Any = object()
    for call, group in zip(calls, groups, strict=True):
        if group is None or group != previous:
            chunks.append([])
        chunks[-1].append(json.dumps(call, sort_keys=True))
        previous = group
    return [sorted(chunk) for chunk in chunks]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("framework", "scenario"), SCENARIOS)
def test_trajectory_matches_labels(framework: str, scenario: str, form: str) -> None:
    expected, traces = load(framework, scenario, form)
    assert_labels_hold(framework, expected, traces)


@pytest.mark.parametrize(("framework", "scenario"), SCENARIOS)
def test_labels_hold_whatever_the_scope_is_called(framework: str, scenario: str) -> None:
    """No reading depends on the instrumentation scope's name: tracers get renamed between
    versions, and re-exporters (a Collector pipeline, a vendor bridge) may drop scopes, so
    a rule keyed to a scope name would misread a framework it otherwise knows."""
    expected, traces = load(framework, scenario, "pb")
    renamed = {
        trace_id: trace._replace(
            spans=tuple(span._replace(scope_name="renamed.tracer") for span in trace.spans)
        )
        for trace_id, trace in traces.items()
    }
    assert_labels_hold(framework, expected, renamed)


def _later_arrival(trace: Trace) -> Trace:
    """The spans delivered latest-start first (a Collector or an exporter may deliver a
    trace's spans in any order); spans that start together keep their order, which
    alone says which of them ran first (``normalize.tree``)."""
    order = sorted(trace.spans, key=lambda span: -span.start_unix_nano)
    return trace._replace(spans=tuple(order))


def _new_ids(trace: Trace) -> Trace:
    """Every span id replaced, consistently (parents and log records follow): ids are
    random, so no reading may depend on their values or their order."""
    fresh = {span.span_id: bytes(8 - len(str(n))) + str(n).encode()
             for n, span in enumerate(reversed(trace.spans), 1)}  # fmt: skip
    return trace._replace(
        spans=tuple(
            span._replace(
                span_id=fresh[span.span_id],
                parent_span_id=fresh.get(span.parent_span_id, span.parent_span_id),
            )
            for span in trace.spans
        )
    )


def _reversed_attributes(trace: Trace) -> Trace:
    """Each span's attributes in the reverse order (attribute processors reorder them):
    no reading may depend on which key came first."""
    return trace._replace(
        spans=tuple(
            span._replace(attributes=dict(reversed(span.attributes.items())))
            for span in trace.spans
        )
    )


def _an_hour_later(trace: Trace) -> Trace:
    """Every timestamp an hour later: only durations and order may count."""
    hour = 3_600_000_000_000
    return trace._replace(
        spans=tuple(
            span._replace(
                start_unix_nano=span.start_unix_nano + hour,
                end_unix_nano=span.end_unix_nano + hour,
                events=tuple(
                    event._replace(time_unix_nano=event.time_unix_nano + hour)
                    for event in span.events
                ),
            )
            for span in trace.spans
        )
    )


EVIDENCE_KEPT = {
    "later_arrival": _later_arrival,
    "new_ids": _new_ids,
    "reversed_attributes": _reversed_attributes,
    "an_hour_later": _an_hour_later,
}


@pytest.mark.parametrize("change", sorted(EVIDENCE_KEPT))
@pytest.mark.parametrize(("framework", "scenario"), SCENARIOS)
def test_labels_hold_whatever_carries_no_evidence(
    framework: str, scenario: str, change: str
) -> None:
    """Labels hold when what changes records nothing about the run: the order spans
    arrive in, the values of ids, the order of a span's attributes, the clock's epoch.
    A reading that depends on one of these would misread a framework delivered another
    way (a Collector in between, another exporter, another SDK)."""
    expected, traces = load(framework, scenario, "pb")
    changed = {trace_id: EVIDENCE_KEPT[change](trace) for trace_id, trace in traces.items()}
    assert_labels_hold(framework, expected, changed)


def assert_labels_hold(framework: str, expected: dict[str, Any], traces: dict[str, Trace]) -> None:
    """Each turn's trajectory reproduces the labelled calls, errors, input, output, session."""
    skip_if_not_read(framework, expected["scenario"])
    labelled_errors = {e["tool"]: e["message_contains"] for e in expected["labels"]["tool_errors"]}
    no_content = framework in NO_CONTENT_RECORDED
    mappings = user_mappings(framework)
    trajectories = turn_trajectories(expected, traces, mappings)
    assert len(trajectories) == len(expected["user_inputs"])  # no turn split or merged
    for turn, trajectory in enumerate(trajectories):
        tools = [step for step in trajectory.tool_calls if step.executed]
        labelled = [call for call in expected["actual_trajectory"] if call["turn"] == turn]
        actual = [(tool_name(framework, s), s.args, s.error is not None) for s in tools]
        wanted = [(c["tool"], None if no_content else c["args"], c["error"] is not None)
                  for c in labelled]  # fmt: skip
        groups = [c.get("parallel_group") for c in labelled]
        assert grouped_calls(actual, groups) == grouped_calls(wanted, groups)
        for step in tools:
            if step.error is not None:
                assert labelled_errors[tool_name(framework, step)] in step.error
        assert all(step.executed for step in trajectory.tool_calls)  # nothing went missing
        if no_content:
            assert (trajectory.input, trajectory.output) == (None, None)
            assert set(trajectory.gaps) >= NO_CONTENT_GAPS
        else:
            assert trajectory.input == expected["user_inputs"][turn]
            assert trajectory.output == expected["final_responses"][turn]
        assert trajectory.failed == bool(expected["labels"].get("run_failed"))
        if framework in MULTI_AGENT:
            entry, worker = MULTI_AGENT[framework]
            # (ADK continues a session with the agent that answered last: no entry hop)
            assert trajectory.agent in (entry, worker) and worker in trajectory.agents
            assert {step.agent for step in tools} <= {worker}
        elif framework not in AGENT_NAME_NOT_RECORDED:
            assert trajectory.agent == "music_store_support"
        if expected["session_id"] is not None and framework not in SESSION_NOT_RECORDED:
            assert trajectory.session_id == expected["session_id"]


def skip_if_not_read(framework: str, scenario: str) -> None:
    """Captures evald does not read right yet (``NOT_READ``) skip the label tests, saying why."""
    why = not_read(framework, scenario)
    if why is not None:
        pytest.skip(f"{framework}/{scenario}: not read yet: {why}")


def tool_name(framework: str, step: Step) -> str:
    """The step's tool name as the labels write it (``QUALIFIED_TOOL_NAMES``: the
    capture's registered prefix, whatever joins it to the name, else the bare name)."""
    prefix = TOOL_PREFIXES.get(framework, "")
    if prefix and step.name.startswith(prefix):
        return step.name[len(prefix) :]
    return bare_name(step.name) if framework in QUALIFIED_TOOL_NAMES else step.name


def test_every_framework_folder_is_golden_tested() -> None:
    """No folder goes missing unnoticed, and each has the core scenarios and pinned output."""
    folders = {path.name for path in TRACES.iterdir() if path.is_dir()}
    assert folders == SHARED | CAPTURED
    for framework in sorted(folders):
        scenarios = {scenario for name, scenario in SCENARIOS if name == framework}
        assert scenarios >= CORE_SCENARIOS, framework
        assert {path.stem for path in (TRAJECTORIES / framework).glob("*.json")} == scenarios


@pytest.mark.parametrize(("framework", "scenario"), SCENARIOS)
def test_tool_results_match_labels(framework: str, scenario: str) -> None:
    """What each successful call returned, unwrapped from the framework's envelope."""
    skip_if_not_read(framework, scenario)
    expected, traces = load(framework, scenario, "jsonl")
    for turn, trajectory in enumerate(turn_trajectories(expected, traces)):
        tools = trajectory.tool_calls
        actual = [[tool_name(framework, s), s.args, s.result] for s in tools if s.error is None]
        labelled = [call for call in expected["actual_trajectory"] if call["turn"] == turn]
        wanted = [[c["tool"], c["args"], c["result"]] for c in labelled if c["error"] is None]
        if framework in NO_CONTENT_RECORDED:
            wanted = [[name, None, None] for name, _, _ in wanted]
        assert sorted(map(_canonical, actual)) == sorted(map(_canonical, wanted))


def _canonical(value: object) -> str:
    """``value`` as JSON text whatever its objects' key order (a tool that answers with
    sorted keys returns the same object)."""
    return json.dumps(value, sort_keys=True)


COMPLETED = [
    (framework, scenario)
    for framework, scenario in SCENARIOS
    if not json.loads((TRACES / framework / f"{scenario}.expected.json").read_text())["labels"].get(
        "run_failed"
    )
]  # an aborted run's label counts the LLM calls it planned, not the ones it made


@pytest.mark.parametrize(("framework", "scenario"), COMPLETED)
def test_one_llm_step_per_model_call_and_every_call_id_known(framework: str, scenario: str) -> None:
    """ADK's legacy schema records each model call twice (nested): it is still one step."""
    skip_if_not_read(framework, scenario)
    expected, traces = load(framework, scenario, "jsonl")
    counts = []
    for trajectory in turn_trajectories(expected, traces):
        counts.append(sum(step.kind is StepKind.LLM for step in trajectory.steps))
        if framework in MODEL_CALLS_NOT_RECORDED:
            assert "model_calls" in trajectory.gaps
        if framework not in CALL_IDS_NOT_RECORDED and (framework, scenario) not in CALL_IDS_LOST:
            assert all(step.call_id for step in trajectory.tool_calls)
    if (framework in MODEL_LOOP_IN_ONE_SPAN and scenario != "multi_turn") or (
        framework in MODEL_CALLS_IN_ONE_SPAN
    ):  # (google-genai's chat: a span each)
        assert counts == [1] * len(counts)  # one step per recorded model span
    elif framework in NO_CONTENT_RECORDED or framework in MODEL_CALLS_NOT_RECORDED:
        assert counts == [0] * len(counts)  # no model spans
    else:
        assert counts == expected["llm_calls_per_turn"]


@pytest.mark.parametrize(("framework", "scenario"), SCENARIOS)
def test_stray_traces_have_no_steps(framework: str, scenario: str) -> None:
    expected, traces = load(framework, scenario, "jsonl")
    for trace_id in expected.get("stray_traces", ()):
        assert normalize(traces[trace_id]).steps == ()


def golden_json(traces: dict[str, Trace], expected: dict[str, Any]) -> list[dict[str, Any]]:
    stray = set(expected.get("stray_traces", ()))
    turns = iter(turn_trajectories(expected, traces))
    return [
        normalize(traces[trace_id]).to_json() if trace_id in stray else next(turns).to_json()
        for trace_id in expected["trace_ids"]
    ]


@pytest.mark.parametrize(("framework", "scenario"), SCENARIOS)
def test_golden_trajectories(framework: str, scenario: str) -> None:
    expected, traces = load(framework, scenario, "jsonl")
    produced = golden_json(traces, expected)
    path = TRAJECTORIES / framework / f"{scenario}.json"
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(produced, indent=1, sort_keys=True) + "\n")
    assert produced == json.loads(path.read_text()), f"re-run with EVALD_REGEN_GOLDEN=1: {path}"
    _, pb_traces = load(framework, scenario, "pb")
    assert golden_json(pb_traces, expected) == produced


@pytest.mark.parametrize(("framework", "scenario"), SCENARIOS)
def test_selected_attributes_give_the_same_trajectory(framework: str, scenario: str) -> None:
    path = TRACES / framework / f"{scenario}.pb"
    selected = group_traces(decode_file(path, ATTRIBUTE_SELECTOR), decode_logs(path))
    everything = group_traces(decode_file(path, KEEP_ALL), decode_logs(path, KEEP_ALL))
    assert selected.keys() == everything.keys()
    for trace_id, trace in everything.items():
        assert normalize(selected[trace_id]).to_json() == normalize(trace).to_json()


class RecordingAttributes(Mapping[str, AttrValue]):
    """Span attributes that remember every key the normalizer asks about."""

    def __init__(self, data: Mapping[str, AttrValue], seen: set[str]) -> None:
        self._data, self._seen = data, seen

    def __getitem__(self, key: str) -> AttrValue:
        self._seen.add(key)
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        self._seen.add(str(key))
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        # Iterating is how a key is found by an ending the decoder keeps (rule 99's
        # ``*.agent.name``); each key then read goes through ``__getitem__``, checked below.
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def test_every_attribute_read_is_selected() -> None:
    """The selector is complete: each key looked up on any golden span is in it."""
    seen: set[str] = set()
    for framework, scenario in SCENARIOS:
        spans = decode_file(TRACES / framework / f"{scenario}.pb", KEEP_ALL)
        recorded = [  # (root spans are decoded whole: any key of theirs may be read)
            s._replace(attributes=RecordingAttributes(s.attributes, seen))
            if s.parent_span_id
            else s
            for s in spans
        ]
        for trace in group_traces(recorded).values():
            normalize(trace)
    assert seen, "nothing was recorded"
    assert sorted(key for key in seen if not ATTRIBUTE_SELECTOR.wants(key)) == []


def all_golden_traces() -> list[Trace]:
    traces: list[Trace] = []
    for framework, scenario in SCENARIOS:
        path = TRACES / framework / f"{scenario}.pb"
        traces.extend(group_traces(decode_file(path), decode_logs(path)).values())
    return traces


def test_normalize_is_fast_enough() -> None:
    """A coarse guard against pathological slowdowns (e.g. quadratic walks), not a benchmark.

    CPU time, and a bound ~25x above the measured cost, so that a loaded machine passes.
    """
    traces = all_golden_traces()
    spans = sum(len(trace.spans) for trace in traces)
    started = time.process_time()
    for _ in range(3):
        for trace in traces:
            normalize(trace)
    per_span = (time.process_time() - started) / (3 * spans)
    assert per_span < 500e-6, f"{per_span * 1e6:.1f} µs per span"


def test_steps_are_in_start_order() -> None:
    for framework, scenario in SCENARIOS:
        path = TRACES / framework / f"{scenario}.pb"
        for trace in group_traces(decode_file(path), decode_logs(path)).values():
            trajectory: Trajectory = normalize(trace)
            starts = [step.start_unix_nano for step in trajectory.steps]
            assert starts == sorted(starts)
            if not_read(framework, scenario) is not None:
                continue  # a misread may leave a call as ``other`` (NOT_READ says which)
            others = {step.name for step in trajectory.steps if step.kind is StepKind.OTHER}
            assert others <= OPERATIONS_OF_THEIR_OWN  # wrappers and parts of calls: plumbing


# Operations of their own that are neither model nor tool calls: ``other`` steps. Mastra
# records its memory reads and writes so; its wrappers (``model_generation``, each loop
# ``agent_step``) and the stream chunks inside a model call are looked through. AgentScope
# records its formatter (messages into the provider's format) as a GenAI operation,
# ``format``, beside the model call: an operation the conventions do not name.
OPERATIONS_OF_THEIR_OWN = {
    "memory_operation MessageHistory",
    "processor_run MemoryInputFilter",
    "format openai",
}


def test_session_key_is_the_trajectorys_service_and_session() -> None:
    # Replay workers shard by it: it must agree with normalize on every real trace.
    for trace in all_golden_traces():
        trajectory = normalize(trace)
        assert session_key(trace) == (trajectory.service, trajectory.session_id)
