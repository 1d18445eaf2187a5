"""Conventions without golden files here, built from CONVENTIONS.md §1 and the span INVENTORY.

Google ADK (schema v2 with and without content, legacy v1), Strands (default events
and latest semconv), LangSmith OTel, the OpenAI Agents SDK through both bridges,
and CrewAI's event listener. The shapes follow the observed attribute keys; the
values are made up.
"""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import run, span

from collector.core.records import AttrValue, Span, StatusCode
from evaluators.trajectory import StepKind, Trajectory


def calls(trajectory: Trajectory) -> list[tuple[str, Any, str | None, bool]]:
    return [(s.name, s.args, s.error, s.executed) for s in trajectory.tool_calls]


def messages(role: str, *parts: dict[str, Any]) -> str:
    return json.dumps([{"role": role, "parts": list(parts)}])


ADK = "gcp.vertex.agent"


def adk_spans(*, content: bool) -> list[Span]:
    conversation = {"gen_ai.conversation.id": "adk-session"}
    llm: dict[str, AttrValue] = {"gen_ai.operation.name": "generate_content", **conversation}
    final: dict[str, AttrValue] = dict(llm)
    tool_a: dict[str, AttrValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup_invoice",
        "gen_ai.tool.call.id": "a1",
    }
    tool_b: dict[str, AttrValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup_track",
        "gen_ai.tool.call.id": "a2",
    }
    if content:
        llm["gen_ai.input.messages"] = messages("user", {"type": "text", "content": "hi"})
        llm["gen_ai.output.messages"] = messages(
            "assistant",
            {
                "type": "tool_call",
                "id": "a1",
                "name": "lookup_invoice",
                "arguments": {"invoice_id": 1},
            },
            {
                "type": "tool_call",
                "id": "a2",
                "name": "lookup_track",
                "arguments": {"name": "Money"},
            },
        )
        final["gen_ai.output.messages"] = messages("assistant", {"type": "text", "content": "bye"})
        tool_a["gen_ai.tool.call.arguments"] = '{"invoice_id": 1}'
        tool_a["gen_ai.tool.call.result"] = '{"status": "error", "error_message": "no invoice 1"}'
        tool_b["gen_ai.tool.call.arguments"] = '{"name": "Money"}'
        tool_b["gen_ai.tool.call.result"] = '{"track_id": 7}'
    merged = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "(merged tools)",
        "gen_ai.tool.call.id": "a1,a2",
    }
    return [
        span(
            1,
            "invoke_workflow shop",
            {
                "gen_ai.operation.name": "invoke_workflow",
                "gen_ai.workflow.name": "shop",
                **conversation,
            },
            scope=ADK,
        ),
        span(
            2,
            "invoke_agent music",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "music", **conversation},
            parent=1,
            scope=ADK,
        ),
        span(3, "generate_content m", llm, parent=2, scope=ADK),
        span(4, "execute_tool lookup_invoice", tool_a, parent=2, scope=ADK),
        span(5, "execute_tool lookup_track", tool_b, parent=2, scope=ADK),
        span(6, "execute_tool (merged)", merged, parent=2, scope=ADK),
        span(7, "generate_content m", final, parent=2, scope=ADK),
    ]


def test_google_adk_with_content() -> None:
    trajectory = run(*adk_spans(content=True))
    assert calls(trajectory) == [
        ("lookup_invoice", {"invoice_id": 1}, "no invoice 1", True),  # error dict, status UNSET
        ("lookup_track", {"name": "Money"}, None, True),
    ]
    assert (trajectory.agent, trajectory.session_id) == ("music", "adk-session")
    assert (trajectory.input, trajectory.output) == ("hi", "bye")
    assert trajectory.conventions == ("google_adk",)


def test_google_adk_default_schema_without_content() -> None:
    trajectory = run(*adk_spans(content=False))
    assert calls(trajectory) == [
        ("lookup_invoice", None, None, True),
        ("lookup_track", None, None, True),
    ]
    assert trajectory.input is None and trajectory.output is None


def test_google_adk_legacy_schema() -> None:
    request = json.dumps({"contents": [{"role": "user", "parts": [{"text": "refund please"}]}]})
    asks = json.dumps(
        {
            "content": {
                "role": "model",
                "parts": [
                    {"function_call": {"id": "l1", "name": "refund", "args": {"invoice_id": 9}}}
                ],
            }
        }
    )
    answers = json.dumps({"content": {"role": "model", "parts": [{"text": "sorry"}]}})
    legacy = {"gcp.vertex.agent.session_id": "legacy-session"}
    trajectory = run(
        span(1, "invocation", {}, scope=ADK),
        span(
            2,
            "invoke_agent music",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "music"},
            parent=1,
            scope=ADK,
        ),
        span(
            3,
            "call_llm",
            {
                "gcp.vertex.agent.llm_request": request,
                "gcp.vertex.agent.llm_response": asks,
                **legacy,
            },
            parent=2,
            scope=ADK,
        ),
        span(
            4,
            "execute_tool refund",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "refund",
                "gen_ai.tool.call.id": "l1",
                "gcp.vertex.agent.tool_call_args": '{"invoice_id": 9}',
                "gcp.vertex.agent.tool_response": '{"status": "error", "error_message": "expired"}',
            },
            parent=2,
            scope=ADK,
        ),
        span(5, "call_llm", {"gcp.vertex.agent.llm_response": answers}, parent=2, scope=ADK),
        # Observed (google-adk 2.13): each call_llm wraps a content-less generate_content.
        span(
            6,
            "generate_content m",
            {"gen_ai.operation.name": "generate_content"},
            parent=3,
            scope=ADK,
        ),
        span(
            7,
            "generate_content m",
            {"gen_ai.operation.name": "generate_content"},
            parent=5,
            scope=ADK,
        ),
    )
    assert calls(trajectory) == [("refund", {"invoice_id": 9}, "expired", True)]
    assert (trajectory.input, trajectory.output) == ("refund please", "sorry")
    assert (trajectory.agent, trajectory.session_id) == ("music", "legacy-session")
    assert [s.kind for s in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]


STRANDS = "strands.telemetry.tracer"
SESSION = {"session.id": "strands-session", "user.id": "u1"}


def test_strands_default_events() -> None:
    use = [{"toolUse": {"toolUseId": "s1", "name": "refund", "input": {"invoice_id": 9}}}]
    trajectory = run(
        span(
            1,
            "invoke_agent music",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "music", **SESSION},
            scope=STRANDS,
            events=(
                ("gen_ai.user.message", {"content": '[{"text": "refund 9"}]'}),
                # Observed (strands-agents 1.62): str(AgentResult), plain text + newline.
                ("gen_ai.choice", {"message": "done\n", "finish_reason": "end_turn"}),
            ),
        ),
        span(
            2,
            "execute_event_loop_cycle",
            {"gen_ai.operation.name": "execute_event_loop_cycle"},
            parent=1,
            scope=STRANDS,
        ),
        span(
            3,
            "chat",
            {"gen_ai.operation.name": "chat", **SESSION},
            parent=2,
            scope=STRANDS,
            events=(
                ("gen_ai.user.message", {"content": '[{"text": "refund 9"}]'}),
                ("gen_ai.choice", {"message": json.dumps(use)}),
            ),
        ),
        span(
            4,
            "execute_tool refund",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "refund",
                "gen_ai.tool.call.id": "s1",
                "gen_ai.tool.status": "error",
                **SESSION,
            },
            parent=2,
            scope=STRANDS,
            status=StatusCode.ERROR,
            message="expired",
            events=(
                ("gen_ai.tool.message", {"role": "tool", "content": '{"invoice_id": 9}'}),
                ("gen_ai.choice", {"message": '[{"text": "Error: expired"}]'}),
            ),
        ),
    )
    assert calls(trajectory) == [("refund", {"invoice_id": 9}, "expired", True)]
    assert trajectory.tool_calls[0].result == "Error: expired"  # content block unwrapped
    assert (trajectory.input, trajectory.output) == ("refund 9", "done")
    assert trajectory.session_id == "strands-session"
    assert [s.kind for s in trajectory.steps] == [StepKind.LLM, StepKind.TOOL]  # no loop step
    assert trajectory.conventions == ("strands",)


def test_strands_latest_semconv_operation_details_events() -> None:
    details = "gen_ai.client.inference.operation.details"
    asked = messages(
        "assistant",
        {"type": "tool_call", "id": "s1", "name": "a", "arguments": {"x": 1}},
        {"type": "tool_call", "id": "s2", "name": "b", "arguments": {}},
    )
    trajectory = run(
        span(
            1,
            "invoke_agent music",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "music"},
            scope=STRANDS,
        ),
        span(
            2,
            "chat",
            {"gen_ai.operation.name": "chat"},
            parent=1,
            scope=STRANDS,
            events=(
                (
                    details,
                    {
                        "gen_ai.input.messages": messages(
                            "user", {"type": "text", "content": "go"}
                        ),
                        "gen_ai.output.messages": asked,
                    },
                ),
            ),
        ),
        span(
            3,
            "execute_tool a",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "a",
                "gen_ai.tool.call.id": "s1",
                "gen_ai.tool.call.arguments": '{"x": 1}',
                "gen_ai.tool.call.result": '[{"text": "{\\"track_id\\": 7}"}]',
            },
            parent=1,
            scope=STRANDS,
        ),
    )
    assert calls(trajectory) == [("b", {}, None, False), ("a", {"x": 1}, None, True)]
    assert trajectory.tool_calls[1].result == {"track_id": 7}  # the JSON inside the block
    assert trajectory.input == "go"


def test_strands_agent_reply_loses_the_newline_str_agentresult_adds() -> None:
    """Latest semconv: the agent span's output message is ``str(AgentResult)`` too."""
    details = "gen_ai.client.inference.operation.details"
    reply = messages("assistant", {"type": "text", "content": "all done\n"})
    trajectory = run(
        span(
            1,
            "invoke_agent music",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "music"},
            scope=STRANDS,
            events=((details, {"gen_ai.output.messages": reply}),),
        ),
    )
    assert trajectory.output == "all done"
    other = run(
        span(
            1,
            "invoke_agent music",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "music"},
            scope="pydantic-ai",
            events=((details, {"gen_ai.output.messages": reply}),),
        ),
    )
    assert other.output == "all done\n"  # only Strands adds it


def langsmith(n: int, name: str, kind: str, parent: int = 0, **attributes: AttrValue) -> Span:
    base: dict[str, AttrValue] = {
        "langsmith.span.kind": kind,
        "langsmith.metadata.session_id": "ls-s",
        "langsmith.trace.session_name": "project",
    }
    return span(n, name, {**base, **attributes}, parent=parent, scope="langsmith")


def generation(content: str, tool_calls: list[dict[str, Any]]) -> str:
    message = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "AIMessage"],
        "kwargs": {"content": content, "tool_calls": tool_calls},
    }
    return json.dumps({"generations": [[{"text": content, "message": message}]]})


def test_langsmith_otel() -> None:
    tool_message = {"content": "expired", "type": "tool", "tool_call_id": "ls1", "status": "error"}
    trajectory = run(
        langsmith(
            1,
            "music_store_support",
            "chain",
            **{
                "gen_ai.prompt": '{"messages": [{"role": "user", "content": "refund 9"}]}',
                "langsmith.metadata.lc_agent_name": "music_store_support",
            },
        ),
        langsmith(2, "model", "chain", 1, **{"langsmith.span.tags": "graph:step:1"}),
        langsmith(
            3,
            "ScriptedChatModel",
            "llm",
            2,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.completion": generation(
                    "",
                    [
                        {
                            "name": "refund",
                            "args": {"invoice_id": 9},
                            "id": "ls1",
                            "type": "tool_call",
                        }
                    ],
                ),
            },
        ),
        langsmith(4, "tools", "chain", 1, **{"langsmith.span.tags": ("graph:step:2",)}),
        langsmith(
            5,
            "refund",
            "tool",
            4,
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "refund",
                "gen_ai.tool.call.id": "ls1",
                "gen_ai.prompt": '{"invoice_id": 9}',
                "gen_ai.completion": json.dumps({"output": tool_message}),
            },
        ),
        langsmith(6, "model", "chain", 1, **{"langsmith.span.tags": "graph:step:3"}),
        langsmith(
            7, "ScriptedChatModel", "llm", 6, **{"gen_ai.completion": generation("sorry", [])}
        ),
    )
    assert calls(trajectory) == [("refund", {"invoice_id": 9}, "expired", True)]
    assert (trajectory.input, trajectory.output) == ("refund 9", "sorry")
    assert (trajectory.agent, trajectory.session_id) == ("music_store_support", "ls-s")
    assert [s.kind for s in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    assert trajectory.conventions == ("langsmith",)


OI_AGENTS = "openinference.instrumentation.openai_agents"


def test_openai_agents_through_openinference() -> None:
    call = "llm.output_messages.0.message.tool_calls.0.tool_call."
    asks = {
        "llm.output_messages.0.message.role": "assistant",
        call + "id": "call_1",
        call + "function.name": "refund",
        call + "function.arguments": '{"invoice_id": 9}',
    }
    trajectory = run(
        span(1, "music_turn", {"openinference.span.kind": "AGENT"}, scope=OI_AGENTS),
        span(
            2,
            "music_store_support",
            {
                "openinference.span.kind": "AGENT",
                "agent.name": "music_store_support",
                "graph.node.id": "music_store_support",
            },
            parent=1,
            scope=OI_AGENTS,
        ),
        span(
            3,
            "response",
            {
                "openinference.span.kind": "LLM",
                **asks,
                "input.value": '[{"role": "user", "content": "refund 9"}]',
            },
            parent=2,
            scope=OI_AGENTS,
        ),
        span(
            4,
            "refund",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "refund",
                "input.value": '{"invoice_id": 9}',
                "output.value": "An error occurred while running the tool. Please try again.",
            },
            parent=2,
            scope=OI_AGENTS,
            status=StatusCode.ERROR,
            message="Error running tool (non-fatal)",
        ),
        span(
            5,
            "response",
            {
                "openinference.span.kind": "LLM",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "sorry",
            },
            parent=2,
            scope=OI_AGENTS,
        ),
    )
    assert calls(trajectory) == [
        ("refund", {"invoice_id": 9}, "Error running tool (non-fatal)", True)
    ]
    assert trajectory.tool_calls[0].call_id == "call_1"  # joined: the tool span has no id
    assert (trajectory.agent, trajectory.input, trajectory.output) == (
        "music_store_support",
        "refund 9",
        "sorry",
    )


def test_openai_agents_task_and_turn_spans_are_structure() -> None:
    """Observed with openai-agents 0.24: workflow AGENT → task CHAIN → AGENT → ``turn`` CHAINs."""
    call = "llm.output_messages.0.message.tool_calls.0.tool_call."
    kind = "openinference.span.kind"
    agent = {kind: "AGENT", "agent.name": "music", "graph.node.id": "music"}
    asks = {
        kind: "LLM",
        "llm.output_messages.0.message.role": "assistant",
        call + "id": "call_1",
        call + "function.name": "refund",
        call + "function.arguments": '{"invoice_id": 9}',
        "input.value": '[{"content": "refund 9", "role": "user"}]',
    }
    answers = {
        kind: "LLM",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "done",
    }
    tool = {kind: "TOOL", "tool.name": "refund", "input.value": '{"invoice_id": 9}'}
    trajectory = run(
        span(1, "support turn", {kind: "AGENT"}, scope=OI_AGENTS),
        span(2, "support turn", {kind: "CHAIN"}, parent=1, scope=OI_AGENTS),
        span(3, "music", agent, parent=2, scope=OI_AGENTS),
        span(4, "turn", {kind: "CHAIN"}, parent=3, scope=OI_AGENTS),
        span(5, "response", asks, parent=4, scope=OI_AGENTS),
        span(6, "refund", tool, parent=4, scope=OI_AGENTS),
        span(7, "turn", {kind: "CHAIN"}, parent=3, scope=OI_AGENTS),
        span(8, "response", answers, parent=7, scope=OI_AGENTS),
    )
    assert (trajectory.agent, trajectory.input, trajectory.output) == ("music", "refund 9", "done")
    assert [(s.kind, s.name) for s in trajectory.steps] == [
        (StepKind.LLM, "response"),
        (StepKind.TOOL, "refund"),
        (StepKind.LLM, "response"),
    ]
    assert trajectory.tool_calls[0].call_id == "call_1"
    # A CHAIN called "turn" from another instrumentor is plumbing, kept as an ``other`` step.
    langchain = run(
        span(1, "graph", {kind: "CHAIN"}, scope="openinference.instrumentation.langchain"),
        span(2, "turn", {kind: "CHAIN"}, parent=1, scope="openinference.instrumentation.langchain"),
    )
    assert langchain.steps == ()


def test_openai_agents_through_traceloop() -> None:
    scope = "opentelemetry.instrumentation.openai_agents"
    trajectory = run(
        span(
            1,
            "Agent Workflow",
            {"traceloop.span.kind": "workflow", "traceloop.workflow.name": "Agent Workflow"},
            scope=scope,
        ),
        span(
            2,
            "music.agent",
            {
                "traceloop.span.kind": "agent",
                "gen_ai.agent.name": "music",
                "gen_ai.operation.name": "invoke_agent",
            },
            parent=1,
            scope=scope,
        ),
        span(
            3,
            "openai.response",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": messages("user", {"type": "text", "content": "refund 9"}),
            },
            parent=2,
            scope=scope,
        ),
        span(
            4,
            "refund.tool",
            {
                "traceloop.span.kind": "tool",
                "gen_ai.tool.name": "refund",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.call.arguments": '{"invoice_id": 9}',
            },
            parent=2,
            scope=scope,
            status=StatusCode.ERROR,
            message="redacted",
        ),
    )
    assert calls(trajectory) == [("refund", {"invoice_id": 9}, "redacted", True)]
    assert (trajectory.agent, trajectory.input) == ("music", "refund 9")
    assert trajectory.conventions == ("otel_genai", "traceloop")


def test_crewai_event_listener_retries_are_one_call_with_attempts() -> None:
    scope = "openinference.instrumentation.crewai._event_listener"

    def tool_run(n: int, status: int, attempts: int) -> Span:
        return span(
            n,
            "refund.run",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "refund",
                "input.value": '{"invoice_id": 9}',
                "output.value": "expired\n\nThought: I now know",
                "tool.run_attempts": attempts,
            },
            parent=2,
            scope=scope,
            status=status,
        )

    trajectory = run(
        span(
            1,
            "crew.kickoff",
            {
                "openinference.span.kind": "CHAIN",
                "session.id": "crew-s",
                "output.value": "We could not refund.",
            },
            scope=scope,
        ),
        span(
            2,
            "support.task.execute",
            {
                "openinference.span.kind": "AGENT",
                "graph.node.id": "support",
                "input.value": "Customer says: refund 9",
            },
            parent=1,
            scope=scope,
        ),
        tool_run(3, StatusCode.ERROR, 1),
        tool_run(4, StatusCode.OK, 2),
    )
    # The framework retried a failed call (attempt 2 after an error): one logical call,
    # with the last attempt's outcome, so matching evaluators count it once.
    assert [(name, error is not None) for name, _, error, _ in calls(trajectory)] == [
        ("refund", False),
    ]
    assert trajectory.tool_calls[0].attempts == 2
    assert trajectory.session_id == "crew-s"
    assert trajectory.input == "Customer says: refund 9"
    assert trajectory.output == "We could not refund."  # no LLM spans: the crew's output


def test_crewai_native_tool_calls_are_the_llm_output_value() -> None:
    """crewai 1.15 native function calling through the event listener (observed shapes).

    The LLM span of a tool-calling response has no output message, only the provider's
    tool calls as ``output.value``; tool outputs are Python reprs; the task span's
    ``input.value`` is CrewAI's whole task prompt, ``task_description`` the request
    (plus, in a crew chat, CrewAI's history instruction and the conversation).
    """
    scope = "openinference.instrumentation.crewai._event_listener"
    request = "Refund 'Money' from invoice 9"
    chat = (
        "\n\nYou are a member of a crew collaborating to achieve a common goal. Your task "
        "is a specific action ...\n\nUser: hi\nAssistant: hello"
    )
    tool_calls = [
        {
            "id": "call_1",
            "function": {"arguments": '{"invoice_id": 9}', "name": "lookup_invoice"},
            "type": "function",
        },
        {"id": "call_2", "name": "lookup_track", "arguments": '{"track_name": "Money"}'},
    ]
    trajectory = run(
        span(
            1, "crew.kickoff", {"openinference.span.kind": "CHAIN", "session.id": "s"}, scope=scope
        ),
        span(
            2,
            "support.Refund 'Money' from invoice 9.execute",
            {
                "openinference.span.kind": "AGENT",
                "graph.node.id": "support",
                "task_description": request + chat,
                "input.value": request + chat + "\n\nThis is the expected criteria for ...",
            },
            parent=1,
            scope=scope,
        ),
        span(
            3,
            "gpt.llm_call",
            {"openinference.span.kind": "LLM", "output.value": json.dumps(tool_calls)},
            parent=2,
            scope=scope,
        ),
        span(
            4,
            "lookup_invoice.run",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "lookup_invoice",
                "input.value": '{"invoice_id": 9}',
                "output.value": "{'invoice_id': 9, 'lines': [{'track_id': 7}]}",
            },
            parent=2,
            scope=scope,
        ),
        span(
            5,
            "gpt.llm_call",
            {
                "openinference.span.kind": "LLM",
                "output.value": '["not", "tool calls"]',
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "Refunded.",
            },
            parent=2,
            scope=scope,
        ),
    )
    assert calls(trajectory) == [
        ("lookup_track", {"track_name": "Money"}, None, False),  # requested, never run
        ("lookup_invoice", {"invoice_id": 9}, None, True),
    ]
    unexecuted, executed = trajectory.tool_calls
    assert (unexecuted.call_id, executed.call_id) == ("call_2", "call_1")
    assert executed.result == {"invoice_id": 9, "lines": [{"track_id": 7}]}
    assert (trajectory.agent, trajectory.session_id) == ("support", "s")
    assert (trajectory.input, trajectory.output) == (request, "Refunded.")


def test_crewai_llm_output_value_that_is_no_call_list_requests_nothing() -> None:
    scope = "openinference.instrumentation.crewai._event_listener"
    for output in ('["a", "b"]', "[]", '[{"id": "c1"}]', "[1, 2", "plain text"):
        trajectory = run(
            span(1, "support.task.execute", {"openinference.span.kind": "AGENT",
                                             "graph.node.id": "support"}, scope=scope),
            span(2, "gpt.llm_call", {"openinference.span.kind": "LLM", "output.value": output},
                 parent=1, scope=scope),
        )  # fmt: skip
        assert trajectory.tool_calls == ()
