"""One labelled turn of a golden capture, normalized (for rule tests built on captures)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from collector.core.records import CompletionReason, Trace
from collector.decode import decode_json
from collector.normalize import ATTRIBUTE_SELECTOR, Mappings, normalize
from evaluators.trajectory import Trajectory
from support.paths import GOLDEN

TRACES = GOLDEN / "traces"
# Captures whose instrumentation records no text at all (AutoGen's own tracing: agent
# and tool spans with names, call ids and statuses, no model spans): no arguments,
# results, input or answer, so no spec that selects or judges on them applies.
NO_CONTENT_RECORDED = frozenset({"autogen-agentchat", "autogen-swarm"})
# Captures whose session id reaches no exported span (MLflow keeps it as trace metadata,
# which its OTLP export leaves out; DSPy puts no thread id in the run's inputs either).
SESSION_NOT_RECORDED = frozenset(
    {
        "dspy-mlflow",
        "burr-openllmetry",
        "openai-agents-handoff-mlflow",
        "mlflow-manual",
        "llamaindex-mlflow",
        "crewai-mlflow",
        "smolagents-mlflow",
        # MLflow's AutoGen autolog: its session is trace metadata, and AutoGen's
        # AssistantAgent has no conversation id of its own
        "autogen-agentchat-mlflow",
        # OpenLLMetry's anthropic instrumentation alone: association properties (its only
        # session mechanism) belong to traceloop-sdk
        "anthropic-client-traceloop",
        # fast-agent's own OTel support: its session history (kept on disk) names no span
        "fast-agent-otel",
        # OpenLIT's AG2 instrumentor records no conversation id, and AG2 has no session
        # (a new chat_id per initiate_chat, recorded nowhere here)
        "ag2-openlit",
        # smolagents has no session id (memory is ``run(reset=False)``), and OpenLIT's
        # smolagents instrumentor records no conversation id
        "smolagents-openlit",
        # MLflow's Strands autolog: the same MLflow trace metadata; the spans are Strands' own,
        # which carry a session only when the agent is given trace_attributes (not done here)
        "strands-mlflow",
        # traceAI's pydantic-ai instrumentation starts its span on a plain OTel tracer:
        # using_session's context attribute (copied only by FITracer) never reaches it, and
        # pydantic-ai's conversation_id is not recorded
        "pydantic-ai-traceai",
        # Agent Framework's own spans (rewritten by OpenInference's processor) write
        # gen_ai.conversation.id only for a provider-side conversation: the id given to a
        # local AgentSession reaches no span, so OpenInference has no session.id to copy
        "agent-framework-openinference",
        # OpenInference's agentspec processor writes session.id = the id of the one Agent
        # Spec Trace its instrumentor starts for the whole process (the same on every span
        # of every conversation); the WayFlow Conversation's id reaches no span
        "wayflow-agentspec-openinference",
    }
)
# Captures whose conversation id is new for every turn (AG2 starts a conversation per
# ``initiate_chat``): each turn is a session of its own, never the labelled conversation.
SESSION_PER_TURN = frozenset({"ag2-otel"})
# Captures whose SDK fixes ``service.name`` (AgentOps builds its own resource: always
# "agentops"; Laminar's is the script's path, whatever framework it traces): the example
# specs, which match the music store by service, are given to them matching by the
# agent's name instead (``specs_by_agent``), as a user of that SDK would write them.
# traceAI's ``register()`` builds its resource without any ``service.name`` (its project
# keys only; ``OTEL_SERVICE_NAME`` is not read): the service is always unknown, whatever
# traceAI instrumentor runs under it (OpenAI Agents SDK, LangChain/LangGraph, Google ADK).
SERVICE_FIXED_BY_SDK = frozenset(
    {
        "agentops-manual",
        "openai-agents-laminar",
        "langgraph-laminar",
        "openai-client-laminar",
        "crewai-laminar",
        "llamaindex-laminar",
        "openai-agents-traceai",
        "openai-agents-agentops",
        "langgraph-traceai",
        "google-adk-traceai",
        "crewai-traceai",
        "smolagents-traceai",
        "google-adk-agentops",
        "llamaindex-traceai",
        "haystack-traceai",
        "agno-agentops",
        "camel-ai-agentops",
        "crewai-agentops",
        "langgraph-agentops",
        "agno-traceai",
        # opencode builds its resource in code with serviceName "opencode"
        "opencode-cli-otel",
        "dspy-traceai",
        "ag2-agentops",
        "pydantic-ai-traceai",
        "autogen-agentchat-agentops",
    }
)
# Captures no example spec can select: the SDK fixes ``service.name`` and no agent name is
# recorded (Laminar's ``@observe`` on a plain loop names only the span). Read right (the
# label tests hold); a user selects their runs by root-span attributes or tools called, so
# the verdict tests, which give every capture the example specs, leave them out.
# traceAI's LlamaIndex instrumentation likewise: no service, and the agent's name only
# inside step payload JSON (``current_agent_name``).
# traceAI's Haystack instrumentation too: no service, and the agent's name only as the
# pipeline's component key inside the root's input.value / output.value JSON.
# AgentOps over CAMEL: service "agentops", and no agent name recorded (only the OpenAI
# client's spans under the application's start_trace root).
UNSELECTABLE = frozenset(
    {
        "openai-client-laminar",
        "smolagents-traceai",
        "llamaindex-traceai",
        "haystack-traceai",
        "camel-ai-agentops",
        # traceAI's DSPy instrumentation: no service, and a DSPy module has no name
        "dspy-traceai",
        # Laminar over LlamaIndex: service fixed by Laminar, no agent name (class-named spans)
        "llamaindex-laminar",
    }
)
# Captures whose agent or session the instrumentation records only under keys of its own
# or too bare to take unmapped, read once the user maps them (``normalization.mappings``;
# docs/instrument-your-agent.md gives each): Logfire records the OpenAI Agents SDK's
# conversation as a bare ``group_id``; Laminar's OpenAI Agents turns name their agent, and
# its association properties hold the session; Mirascope's ``ops.session`` writes it under
# its own namespace. The label tests read these with the mapping.
USER_MAPPINGS: dict[str, dict[str, str]] = {
    "openai-client-logfire": {"session_id": "session_id"},
    "anthropic-client-logfire": {"session_id": "session_id"},
    "mirascope-otel": {"session_id": "mirascope.ops.session.id"},
    "openai-agents-logfire": {"session_id": "group_id"},
    "openai-agents-handoff-logfire": {"session_id": "group_id"},
    "llamaindex-otel-native": {"session_id": "llamaindex.session_id"},
    "openai-client-laminar": {"session_id": "lmnr.association.properties.session_id"},
    "openai-agents-laminar": {
        "agent_name": "openai.agents.turn.agent_name",
        "session_id": "lmnr.association.properties.session_id",
    },
    "crewai-laminar": {"session_id": "lmnr.association.properties.session_id"},
    "llamaindex-laminar": {"session_id": "lmnr.association.properties.session_id"},
    # Langtrace's "custom span naming" (its only way to name a DSPy program): the name is
    # appended to every span's name and written as ``langtrace.span.name`` on each span
    "dspy-langtrace": {"agent_name": "langtrace.span.name"},
    # the same key on every model span below Langtrace's ``with_langtrace_root_span``
    # root (named after the agent, no attributes): rule 66 reads the root as the agent
    "llamaindex-langtrace": {"agent_name": "langtrace.span.name"},
    # OpenLIT's Dynamiq instrumentor writes the agent's name as gen_ai.agent.role on its
    # dynamiq.agent_run span (no gen_ai.agent.name, the span not named invoke_agent <name>)
    "dynamiq-openlit": {"agent_name": "gen_ai.agent.role"},
}


def user_mappings(framework: str) -> Mappings | None:
    """The mapping a user of ``framework`` writes (``USER_MAPPINGS``), or None."""
    fields = USER_MAPPINGS.get(framework)
    return None if fields is None else Mappings.model_validate(fields)


# Captures that record tools under a qualified name (Semantic Kernel: plugin, "-",
# function, the name the model is given); the labels name the function.
TOOL_PREFIXES = {
    "semantic-kernel": "MusicStore-",
    "semantic-kernel-handoff": "MusicStore-",
    # fast-agent offers MCP tools to the model as "<server>__<tool>"
    "fast-agent-otel": "music_store__",
    # Gemini CLI offers MCP tools to the model as "mcp_<server>_<tool>" (single underscores)
    "gemini-cli-otel": "mcp_music_store_",
    # opencode offers MCP tools to the model as "<server>_<tool>" (server "store")
    "opencode-cli-otel": "store_",
    # the Claude Agent SDK's in-process MCP tools are offered by Claude Code as
    # "mcp__<server>__<tool>"; OpenInference's tool spans and calls name only that
    "claude-agent-sdk-openinference": "mcp__store__",
    # (mcp-agent offers them as "<server>_<tool>", but each call is the MCP server's span,
    # which names the tool bare: rule 84)
}
# Captures evald does not read right yet, kept as the evidence (and the test) for the
# rule that would: their trajectories are pinned, the label and verdict tests skip them
# with the reason given here (ADR 0017, addendum of 2026-11-27, "left out"). A key is a
# folder, or "folder/scenario" for one scenario of it (``not_read``).
NOT_READ = {
    "beeai-js-openinference": "OpenInference's BeeAI-JS instrumentation writes every BeeAI"
    " emitter event as a span of its own, siblings under the agent's iteration span"
    " (agent.toolCalling.start-N): a model call is three LLM spans (<ns>.start with the"
    " request in llm.input_messages/input.value, .success with the reply only as"
    " output.value JSON [{content: [{type: 'tool-call', toolCallId, toolName, args}]}] and"
    " llm.output_messages content '', .finish empty) and a tool call three TOOL spans"
    " (.start / .success|.error / .finish, named tool.dynamic.<camelCaseName>.<event>-N, no"
    " tool.name, the arguments only in tool.parameters, the call id only inside the"
    " metadata JSON's toolCallMsg): each call reads as three tool steps named after the"
    " event spans with no arguments or call id, the iteration spans as agent steps, one"
    " model call as three llm steps; the answer (root output.value"
    " {role, text} JSON, and the final_answer call's response) is not read",
    "crewai-langtrace": "Langtrace records no tool span and no model reply (CrewAI calls"
    " with_raw_response), and writes each assistant tool_calls message of a prompt as a"
    " [{'id': '', 'type': ''}] placeholder (it getattr()s CrewAI's dict calls): the tool"
    " messages (tool_call_id, name, content) have no request to pair with, so no call is"
    " read (gap tool_calls; arguments only in the root's crewai.crew.tasks_output repr); no"
    " answer (only crewai.*.result), the input is the templated prompt, not"
    " crewai.task.description, and no agent (crewai.agent.role is no agent key); model"
    " steps and session right",
    "griptape-otel": "Griptape's own tracing records span names and statuses only (no tool"
    " name, argument, model call or agent): every trace is skipped as no agent run, and a"
    " replay's gate fails saying so; normalization.mappings reads its tool spans",
    "semantic-kernel-handoff": "a turn is a trace per runtime message, joined only by span"
    " links; evald groups spans by trace id, so the hand-over and the store agent's work"
    " are two runs",
    "langgraph-langtrace": "Langtrace records no tool span and no model reply (tool names"
    " only in its own langchain.outputs attribute, non-string arguments dropped): no tool"
    " call is read; the input is (gen_ai.content.prompt), and the tool_calls gap makes"
    " every tool check answer 'not recorded' (test_builtin_labels)",
    "autogen-agentchat-openinference/multi_turn": "the turn's request is only in the agent"
    " span's input as pydantic str() text, and beyond the first four history messages the"
    " decoder keeps: turns 2 and 3 read turn 1's question as their input",
    "autogen-agentchat-openinference/tool_error": "the instrumentation sets status OK"
    " before the failure (the SDK then ignores ERROR): the refused refund is recorded as"
    " an ordinary result, with no error anywhere",
    "langchainjs-traceloop": "OpenLLMetry JS's LangChain handler links no span to another:"
    " every span is a trace of its own (a three-call turn is 24 one-span traces), and evald"
    " assembles runs by trace id: no run holds both a model's request and the tool that ran"
    " it",
    "llamaindex-langtrace/tool_error": "Langtrace records no tool span (only the openai"
    " client's model spans): the refused refund is only the exception's text in the next"
    " request's tool message ('RefundWindowExpired: ...', no error word, no flag, no"
    " status), so it reads as an ordinary result",
    "agno-langtrace/tool_error": "Langtrace records no tool span (its Agno instrumentation"
    " wraps Agent.run/arun only, and that span ends before the run starts): the refused"
    " refund is only the exception's text in the next request's tool message"
    " ('RefundWindowExpired: ...', no error word; Agno's failure status is recorded"
    " nowhere, every span OK), so it reads as an ordinary result",
    "llamaindex-openlit/tool_error": "OpenLIT records no tool span: the refused refund is"
    " only the exception's text in the next model request, with no error flag or status,"
    " so it reads as an ordinary result",
    "llamaindex-otel-native/tool_error": "LlamaIndex's own OTel handler records the refused"
    " refund's failure only on the span that ran it (FunctionTool.acall, status ERROR), which"
    " names the call only inside a Python repr cut at 200 characters"
    " (llamaindex.step.input_summary), and the model was sent the exception's bare text"
    " ('RefundWindowExpired: ...', no error word): the call reads as an ordinary result",
    "langgraph-azure-ai-otel/tool_error": "langchain-azure-ai's tracer serialises the error"
    " ToolMessage without its status (gen_ai.tool.call.result = {name, tool_call_id,"
    " content}; span status OK, no error.type): the refused refund is only its message"
    " text, 'RefundWindowExpired: ...', which names no error word, so it reads as an"
    " ordinary result",
    "langgraph-langwatch/tool_error": "LangWatch's LangChain callback records the refused"
    " refund as an ordinary tool output (status UNSET, no exception): the ToolMessage's"
    " status 'error' is only in the LangGraph 'tools' chain span's output, which no rule"
    " reads, and the text the model was shown names no error word",
    "smolagents-mlflow": "MLflow's smolagents autolog records no tool name (every tool span is"
    " SimpleTool.__call__, named after the class; the name attributes it means to write are"
    " dropped) and no model call (it patches Model.__call__, which smolagents 1.26 never"
    " calls): the calls read as 'SimpleTool' with their arguments still in the"
    " {sanitize_inputs_outputs, kwargs} call envelope, final_answer as an executed"
    " FinalAnswerTool call, and the root's input ({task, reset}) and answer ({_value}) are"
    " not read (its agent is: the AGENT span's bare name attribute, since session 22)",
    "anthropic-client-traceloop/tool_error": "OpenLLMetry's anthropic instrumentation"
    " rewrites each tool_result block as a GenAI tool_call_response part with only its id"
    " and content (gen_ai.input.messages), dropping is_error: true; no tool span, every"
    " span status OK: the refused refund is only its text, 'RefundWindowExpired: ...',"
    " which names no error word, so it reads as an ordinary result",
    "crewai-traceai": "traceai-crewai 0.1.8 wraps Crew.kickoff, Task._execute_core and"
    " ToolUsage._use only; CrewAI 1.15's native function calling never goes through"
    " ToolUsage._use and no provider is instrumented, so a turn is two spans (kickoff CHAIN"
    " → task AGENT) with no model or tool span: no call, argument, result, call id or the"
    " refused refund is recorded anywhere (a gap, read as one). The agent reads as the span"
    " name 'Task._execute_core': its role is only inside JSON, the AGENT span's input.value"
    " args[0].role and the root's crew_agents[].role / crew_tasks[].agent_role; the input"
    " is not read: only the root's input.value {args: [], inputs: {customer_message}} (and"
    " crew_inputs), the kickoff's template variables. Answer and session are read",
    "pydantic-ai-mlflow/multi_turn": "MLflow's session (mlflow.tracing.context(session_id=...))"
    " is trace metadata its OTLP export leaves out; the conversation id the user gave"
    " pydantic-ai is only inside the recorded payloads (the root's input JSON on the first"
    " turn, its output state and every request message's conversation_id): no attribute"
    " records a session (not read: a session taken out of payload JSON was declined)",
    "crewai-agentops": "AgentOps' CrewAI instrumentation wraps Crew.kickoff,"
    " Agent.execute_task, Task.execute_sync, LLM.call, execute_tool_and_check_finality and"
    " ToolUsage.use; CrewAI 1.15's native provider (OpenAICompletion, no crewai.LLM) and its"
    " native function calling go through none of the last three, and the SDK's OpenAI"
    " instrumentation is off beside an agentic library: a turn is four spans (session ->"
    " crewai.workflow -> <task>.task -> <role>.agent) with no model or tool span, and no"
    " tool call is read (gaps tool_calls, model_calls). The calls, call ids, arguments,"
    " results, the parallel pair (one assistant message with two tool_calls) and the"
    " refused refund ('Error executing tool: RefundWindowExpired: ...', and"
    " tool_failures=[ToolFailureRecord(...)]) exist only as the run's finished transcript:"
    " a Python repr of [TaskOutput(..., messages=[{'role': ..., 'tool_calls': [...]}, ...])]"
    " under crewai.crew.tasks_output on the workflow span, which no rule reads when the run"
    " has no model call (as crewai-mlflow). Input and answer are not read either: the turn's"
    " text is the task span's agentops.entity.input (the task description; from the second"
    " crew-chat turn on, followed by CrewAI's history preamble) and the answer its"
    " agentops.entity.output (and the root's crewai.crew.result), on a span typed"
    " workflow.step, not agent; the agent span's agentops.entity.input is the agent's goal."
    " Agent and session (trace.metadata.session_id) are read",
    "gemini-cli-otel": "Gemini CLI starts every span as a root: each model request"
    " (llm_call) is a trace of its own, and each batch of tool calls another"
    " (schedule_tool_calls over one tool_call per call); a turn is 2n+1 traces joined only by"
    " gen_ai.conversation.id, the call ids and time, and evald takes one run per trace. Inside"
    " them no call is read: the tool_call spans' operation (gen_ai.operation.name"
    " 'tool_call') is no GenAI operation, their arguments and result are only inside the"
    " JSON of gen_ai.input.messages / gen_ai.output.messages (the scheduler's request and"
    " response objects), and the model's requested calls are Gemini functionCall parts in"
    " gen_ai.output.messages, which the requested-calls reader skips (no '_call' in the"
    " text); a session's first input reads as its user message's two text parts joined,"
    " the CLI's <session_context> block (date, OS, workspace listing) before the user's text",
    "codex-cli-otel": "Codex CLI's own telemetry has no GenAI key on any span: the tool"
    " call is an MCP client span (mcp.tools.call: tool.name, tool.call_id, rpc.method"
    " tools/call, no arguments or result) and the model call a plain span"
    " (model_client.stream_responses_api: model, wire_api, api.path /responses), neither"
    " recognised, so every trace is skipped as no_agent_spans (no step, input or answer;"
    " the session is read). The arguments, results and failure are only in codex.tool_result"
    " log records (arguments JSON text, output 'Wall time: ... Output: <result>',"
    " success 'false' on the refused refund) naming the call id, the input only in the"
    " codex.user_prompt record (prompt), the requested calls in codex.tool_call_received"
    " span events under the model-call span; the answer is recorded nowhere",
    "google-adk-agentops/parallel_calls": "AgentOps flattens each message of ADK's request"
    " part by part under one prefix (gen_ai.prompt.N.function_call.*, .function_response.*),"
    " so a message holding two calls or two answers keeps only its last: the answer to the"
    " first of the two parallel calls (lookup_invoice) is recorded nowhere (ADK's own spans"
    " record no content with its default switch): its result reads as none",
    "langgraph-agentops": "AgentOps' LangChain callback handler writes its tool spans"
    " (agentops.span.kind tool, span name tool.tool, no operation.name) under"
    " langchain.tool.name / langchain.tool.input (the arguments as a Python dict repr) /"
    " langchain.tool.output (the ToolMessage as JSON: content, tool_call_id, status"
    " 'error' on the refused refund), none of them a key evald reads: every call reads as"
    " 'tool' (the span name's stem) with no arguments, result, call id or error. Its"
    " chat_model.llm spans keep gen_ai.prompt '[]' (it reads LangChain's list of message"
    " lists as one list) and gen_ai.completion a JSON list of the reply's text only ('[\"\"]'"
    " for a tool-calling reply): no input, no requested call; the answer is the last"
    " completion's text, not read. The user's text is only in the outermost chain span's"
    " chain.inputs ({messages: [{role: user, content}]}), the agent's name only as the AI"
    " messages' name inside the chain spans' serialized state; the trace root is the"
    " application's start_trace span (music_store_support_turn.session), read as the"
    " agent. The session (trace.metadata.session_id) is read",
    "opencode-cli-otel": "opencode runs its own loop, one AI SDK streamText per model"
    " request (ai.streamText > ai.streamText.doStream, ai.toolCall under the streamText),"
    " all below its own Effect spans under the trace root http.server POST (its in-process"
    " server's /session/<id>/message): the run reads as that root, which records nothing,"
    " so the input is not read (gap input: the user's text is only in each streamText's"
    " ai.prompt messages and each doStream's ai.prompt.messages); the session's title"
    " request (a tool-less streamText with its own system prompt, 'You are a title"
    " generator...', whose reply no later request holds) reads as the turn's first model"
    " step (5 llm steps for 4 loop calls on a session's first turn); every result is"
    " opencode's tool-result envelope {title, metadata: {truncated}, output: <the MCP"
    " text>, attachments: [], content: [{type: text, text: <the MCP text>}]}, not"
    " unwrapped; the agent reads as ai.telemetry.functionId 'session.llm' (the same on"
    " every call, title included): music_store_support is only in opencode's log records'"
    " bodies (['stream', '{... \"agent\":\"music_store_support\" ...}']). Calls,"
    " arguments, order, parallel pair, call ids, the refused refund (ai.toolCall status"
    " ERROR + exception event), answer and session (session.id) read right",
    "mastra-arize": "Mastra's Arize exporter writes the agent's whole tool loop as one LLM"
    " span (model_generation: llm.model_name, llm.input_messages = the first request's"
    " system + user messages, llm.output_messages = the final answer, llm.token_count.* the"
    " loop's sums) with one LLM child per model request (model_step: input.value = that"
    " request's messages, output.value {text, toolCalls}, no model or token key; the tool"
    " spans run under them) and LLM chunk spans below those: every LLM span under the outer"
    " one merges into it as a second layer of the same call (duplicate_instrumentation),"
    " so a turn reads as one model call where it made 2 to 5. Calls, arguments, results,"
    " call ids, parallel pair, the refused refund, input, answer, agent and session read"
    " right",
    "mastra-laminar": "Mastra's Laminar exporter (@mastra/laminar) writes only Laminar's"
    " own keys: lmnr.span.type (LLM on the loop span llm: '<model>', on each model request"
    " step: N and on its stream chunks; TOOL on tool: '<tool>'; DEFAULT elsewhere),"
    " lmnr.span.input / lmnr.span.output (JSON text) and Mastra's metadata as"
    " lmnr.association.properties.metadata.*; no gen_ai.operation.name and no GenAI"
    " message key anywhere (the loop span alone has gen_ai.request.model and the loop's"
    " gen_ai.usage.* sums), so no span gets a role and every trace is skipped as"
    " no_agent_spans (evald doctor: conventions none recognised). Recorded all the same:"
    " each request's messages (step lmnr.span.input, a role-tagged list whose earlier calls"
    " and results are placeholders '[tool: <name>]' / '[tool-result: <name>]') and its"
    " reply ({text, toolCalls: [{toolCallId, toolName, args}]}); model, response id and"
    " usage only inside the step's metadata.body (the raw Chat Completions response JSON);"
    " each executed call as a tool span under the step that requested it (arguments and"
    " result JSON, the refused refund status ERROR + exception event, exported twice with"
    " one span id), the tool named only in the span name, its call id only in the step's"
    " toolCalls and the chunks' metadata.toolCallId; input and answer on the run span"
    " (lmnr.span.input text, lmnr.span.output {text, files}); the memory thread only as"
    " lmnr.association.properties.metadata.threadId (no session_id key); the agent only in"
    " the run span's name",
    "pydantic-ai-traceai": "traceai-pydantic-ai 0.1.0 wraps Agent.run/run_sync/run_stream"
    " only: a turn is one CLIENT span (pydantic_ai.agent.run) with no child, holding the"
    " agent (pydantic_ai.agent.name), the input (pydantic_ai.run.prompt), the answer"
    " (pydantic_ai.run.result) and the run's token totals. Since rule 98 the run is read"
    " (agent, input, answer, not failed) with the gaps tool_calls and model_calls: no model"
    " or tool span, call id, argument, result, parallel pair or the refused refund (run"
    " status OK) is recorded anywhere, so every call label is a gap, not a misread; no"
    " session (traceAI's using_session reaches only FITracer spans)",
    "wayflow-agentspec-openinference/multi_turn": "the process is one trace (the trace id"
    " is made from the instrumentor's one Agent Spec Trace): the three turns are three"
    " top-level AGENT spans under its never-exported RootSpan, read as one run (7 model"
    " steps each, turn 1's input, turn 3's answer). Rule 85 would split them on evidence,"
    " but the requests it compares are OpenInference's flattened llm.input_messages.N,"
    " of which the decoder keeps the first four (the history grows on every model span),"
    " and the history's tool requests and results carry no call ids or tool_calls",
    "dynamiq-openlit": "Dynamiq's function-calling agent ends its loop with its own"
    " provide_final_answer function: the answer exists only as that call's lone argument"
    " ({'answer': ...}) in the last chat span's gen_ai.output.messages (a tool_call part"
    " no later request answers), and OpenLIT's dynamiq.agent_run root records no output:"
    " every run reads with the gap output and provide_final_answer as a requested call"
    " that never ran (executed: false). The calls, call ids, arguments, results, order,"
    " parallel pair, input and model steps read right, rebuilt from the litellm chat"
    " spans' messages (no tool span: gap tool_timings). tool_error: the refused refund is"
    " the tool message '[tool_error] ToolExecutionException: Tool 'refund' failed:"
    " {'type': ..., 'message': 'RefundWindowExpired: ...', 'recoverable': True, ...}'"
    " (every span OK), which error_text does not read past the leading [tool_error] tag:"
    " an ordinary result. multi_turn: the session is only inside Python dict reprs on the"
    " Memory spans (db.filter / db.metadata {'user_id': ..., 'session_id': ...}); those"
    " spans (dynamiq.memory_search / dynamiq.memory_add, gen_ai.operation.name"
    " invoke_agent, db.operation.name GET / ADD) read as nested agent steps. The agent is"
    " read with the mapping (gen_ai.agent.role; blind, the run is 'dynamiq.agent_run')",
}


def matching_the_agent(spec_path: Path, folder: Path) -> Path:
    """A copy of an example spec in ``folder`` that matches the music store's agent by
    name where the spec matches its service (``SERVICE_FIXED_BY_SDK``); its path."""
    spec = yaml.safe_load(spec_path.read_text())
    match = spec.get("match", {})
    if "service" in match:
        del match["service"]
        match["agent"] = "music_store_support"
    dataset = spec.get("dataset")
    if isinstance(dataset, dict) and "path" in dataset:
        dataset["path"] = str((spec_path.parent / dataset["path"]).resolve())
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / spec_path.name
    copy.write_text(yaml.safe_dump(spec))
    return copy


def not_read(framework: str, scenario: str) -> str | None:
    """Why a labelled scenario is not read right yet (``NOT_READ``), or None."""
    return NOT_READ.get(framework) or NOT_READ.get(f"{framework}/{scenario}")


def recorded_tool(framework: str, tool: str) -> str:
    """The name a capture records for the labelled ``tool``."""
    return TOOL_PREFIXES.get(framework, "") + tool


def captured(framework: str, scenario: str, turn: int = 0) -> Trajectory:
    """The trajectory of one labelled turn of a golden capture."""
    folder = TRACES / framework
    expected = json.loads((folder / f"{scenario}.expected.json").read_text())
    spans = [
        span
        for line in (folder / f"{scenario}.jsonl").read_bytes().splitlines()
        if line.strip()
        for span in decode_json(line, ATTRIBUTE_SELECTOR).spans
    ]
    stray = set(expected.get("stray_traces", ()))
    trace_id = [t for t in expected["trace_ids"] if t not in stray][turn]
    mine = tuple(span for span in spans if span.trace_id.hex() == trace_id)
    return normalize(Trace(mine[0].trace_id, mine, CompletionReason.END_OF_INPUT, 0, 0))
