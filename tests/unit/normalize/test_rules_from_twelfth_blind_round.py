"""Rules from the twelfth round of blind captures (ADR 0017, session 23): minimal traces
of the shapes the captures showed, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.span_kit import genai_agent, genai_chat, genai_tool, run, span

from collector.core.records import Span
from collector.normalize.conventions import traceloop
from collector.normalize.results import parse_result
from evaluators.trajectory import StepKind

# CAMEL's ChatAgent (under AgentOps' OpenAI instrumentation) tells the model a tool failed
# with a notice of its own in front of the exception's report.


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Tool execution failed: Error executing tool 'refund': Execution of function refund"
         " failed with kwargs={'invoice_id': 877}. Error: RefundWindowExpired: too old", True),
        ("Function call failed: StoreError: the store is closed", True),
        ("Tool execution Failed: Error executing tool refund: window closed", True),
        ("Payment failed: 3 retries, then the card was accepted", False),
        ("Deployment 42 failed: RuntimeError: out of memory: container killed", False),
        ("Login failed: Error code 42: password expired", False),
        ("Job nightly-backup failure: Exception raised by rsync: code 23", False),
        ("The nightly job failed: Error budget reports are attached below", False),
        ("Tool execution failed: Error budget is fine", False),
    ],
)  # fmt: skip
def test_a_failure_notice_in_front_of_an_error_opening_is_an_error(text: str, error: bool) -> None:
    assert (parse_result(text).error is not None) is error
    # (a tool span's result is parsed for an error only where ``error_hint`` says it may hold one)
    recorded = genai_tool(2, "refund", "{}", call_id="c1", **{"gen_ai.tool.call.result": text})
    (tool,) = run(genai_agent(), recorded).tool_calls
    assert (tool.error is not None) is error


# OpenLLMetry's Gemini instrumentation writes a function response as the GenAI
# ``tool_call_response`` part, its ``response`` the SDK's envelope serialised as JSON text.


def gemini_turn(response: str) -> list[Span]:
    call = {"type": "tool_call", "id": "", "name": "lookup", "arguments": {"q": 1}}
    answer = {"type": "tool_call_response", "id": "", "response": response}
    ask = {"role": "user", "parts": [{"type": "text", "content": "q 1?"}]}
    first = [ask]
    second = [ask, {"role": "model", "parts": [call]}, {"role": "user", "parts": [answer]}]
    return [
        genai_agent(),
        genai_chat_with(2, first, [{"role": "model", "parts": [call]}]),
        genai_chat_with(
            3, second, [{"role": "model", "parts": [{"type": "text", "content": "ok"}]}]
        ),
    ]


def genai_chat_with(n: int, request: list[Any], reply: list[Any]) -> Span:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gemini",
        "gen_ai.input.messages": json.dumps(request),
        "gen_ai.output.messages": json.dumps(reply),
    }
    return span(n, "chat gemini", attributes, parent=1)


def test_a_function_response_envelope_recorded_as_json_text_is_unwrapped() -> None:
    (tool,) = run(*gemini_turn(json.dumps({"result": {"total": 3}}))).tool_calls
    assert tool.result == {"total": 3} and tool.error is None
    (failed,) = run(*gemini_turn(json.dumps({"error": "StoreClosed: try later"}))).tool_calls
    assert failed.error is not None
    (plain,) = run(*gemini_turn(json.dumps({"result": 1, "more": 2}))).tool_calls
    assert plain.result == {"result": 1, "more": 2}  # two keys: no envelope


# any-agent's own tracing: model calls under an operation the conventions do not name
# (``call_llm``), their reply or requested calls in the generic ``gen_ai.output``, tools'
# arguments in ``gen_ai.tool.args`` and results in ``gen_ai.output``.


def generation(n: int, output: str, parent: int = 1, **more: Any) -> Span:
    attributes = {
        "gen_ai.operation.name": "call_llm",
        "gen_ai.request.model": "m",
        "gen_ai.output": output,
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 5,
        **more,
    }
    return span(n, "call_llm m", attributes, parent=parent)


def generic_tool(n: int, name: str, args: dict[str, Any], output: str) -> Span:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.args": json.dumps(args),
        "gen_ai.output": output,
    }
    return span(n, f"execute_tool {name}", attributes, parent=1)


LISTED = json.dumps([{"tool.name": "lookup", "tool.args": json.dumps({"q": 1})},
                     {"tool.name": "price", "tool.args": json.dumps({"q": 1})}])  # fmt: skip


def test_a_leaf_generation_under_an_unnamed_operation_is_a_model_call() -> None:
    trajectory = run(
        genai_agent(),
        generation(2, LISTED, **{"gen_ai.input.messages": json.dumps([{"role": "user",
                                                                       "content": "q 1?"}])}),
        generic_tool(3, "lookup", {"q": 1}, "{'total': 3}"),
        generic_tool(4, "price", {"q": 1}, "0.99"),
        generation(5, "It is 3, for 0.99."),
    )  # fmt: skip
    assert [step.kind for step in trajectory.steps] == [
        StepKind.LLM, StepKind.TOOL, StepKind.TOOL, StepKind.LLM]  # fmt: skip
    lookup, price = trajectory.tool_calls
    assert (lookup.args, lookup.result, price.result) == ({"q": 1}, {"total": 3}, 0.99)
    assert (trajectory.input, trajectory.output) == ("q 1?", "It is 3, for 0.99.")


def test_an_unnamed_operation_without_generated_tokens_or_around_calls_is_none() -> None:
    no_tokens = generation(2, "x")
    del no_tokens.attributes["gen_ai.usage.output_tokens"]  # type: ignore[attr-defined]
    assert not any(s.kind is StepKind.LLM for s in run(genai_agent(), no_tokens).steps)
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.usage.output_tokens": 5}  # fmt: skip
    wrapped = run(genai_agent(), generation(2, "x"), span(3, "chat m", chat, parent=2))
    assert sum(s.kind is StepKind.LLM for s in wrapped.steps) == 1  # the wrapper sums its call
    assert "duplicate_instrumentation" not in wrapped.gaps
    tool = generation(2, "x", **{"gen_ai.tool.name": "lookup"})
    assert not any(s.kind is StepKind.LLM for s in run(genai_agent(), tool).steps)


def test_a_generic_output_that_lists_no_calls_is_the_reply() -> None:
    texts = ["[1, 2, 3]", '[{"name": 7}]', '{"answer": 3}']
    for text in texts:
        trajectory = run(genai_agent(), generation(2, text))
        assert trajectory.output == text and not trajectory.tool_calls


# fast-agent offers an MCP server's tools to the model as ``<server>__<tool>``; the server's
# own span (``execute_tool <tool>``) records no arguments and no call id (rule 82).


def mcp_turn(requested: str, executed: str, args: str | None = None) -> list[Span]:
    call = {"id": "c1", "name": requested, "arguments": {"q": 1}}
    return [
        genai_agent(),
        genai_chat(2, [call]),
        genai_tool(3, executed, args, call_id=None),
        genai_chat(4, [], text="done"),
    ]


def test_a_bare_named_execution_runs_the_namespaced_request_before_it() -> None:
    for requested in ("store__lookup", "store.lookup", "mcp/store/lookup"):
        (tool,) = run(*mcp_turn(requested, "lookup")).tool_calls
        assert (tool.name, tool.call_id, tool.args, tool.executed) == (requested, "c1", {"q": 1},
                                                                        True)  # fmt: skip
        assert tool.span_id  # the execution's span: timed


def test_a_name_that_only_ends_alike_or_other_arguments_join_nothing() -> None:
    assert len(run(*mcp_turn("my_lookup", "lookup")).tool_calls) == 2
    assert len(run(*mcp_turn("store-lookup", "lookup")).tool_calls) == 2  # a hyphen: a word
    other = json.dumps({"q": 2})  # the span says what it ran: not what was asked
    assert len(run(*mcp_turn("store__lookup", "lookup", other)).tool_calls) == 2


# OpenLIT's AG2 instrumentation writes each send, receive and reply of an agent as a
# ``chat`` span naming the agent and the model ``unknown``; the model calls run below.


def conversation_step(n: int, agent: str, parent: int = 0, model: str = "unknown") -> Span:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.agent.name": agent}
    if model:
        attributes["gen_ai.request.model"] = model
    return span(n, f"execute_task {agent}", attributes, parent=parent)


def test_a_chat_naming_an_agent_and_no_model_is_the_agents_step() -> None:
    call = {"id": "c1", "name": "lookup", "arguments": {"q": 1}}
    trajectory = run(
        conversation_step(1, "customer"),
        conversation_step(2, "store", parent=1),
        genai_chat(3, [call], parent=2),
        conversation_step(4, "store", parent=1, model=""),
        genai_chat(5, [], parent=4, text="done"),
    )
    assert sum(step.kind is StepKind.LLM for step in trajectory.steps) == 2
    assert trajectory.agent == "customer" and "store" in trajectory.agents
    assert "duplicate_instrumentation" not in trajectory.gaps


def test_a_model_call_naming_its_agent_and_its_model_stays_a_model_call() -> None:
    trajectory = run(genai_agent(), conversation_step(2, "shop", parent=1, model="gpt-x"))
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM]


def test_flattened_function_call_parts_of_any_otlp_type_read_as_json() -> None:
    """(A fuzz seed found it: bytes in a flattened Gemini part reached a step as bytes.)"""
    attributes = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "q?",
        "gen_ai.prompt.1.role": "model",
        "gen_ai.prompt.1.function_call.name": "lookup",
        "gen_ai.prompt.1.function_call.args": b"\xff\x00",
        "gen_ai.prompt.1.function_call.id": b"\x01",
        "gen_ai.prompt.2.role": "user",
        "gen_ai.prompt.2.function_response.id": b"\x01",
        "gen_ai.prompt.2.function_response.result": b"\x02",
    }
    messages = traceloop.legacy_messages(span(2, "chat m", attributes, parent=1))
    assert messages is not None
    json.dumps(messages)  # no bytes left
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == "ff00"


# Deep Agents' middleware hooks are graph nodes OpenInference types AGENT by their names;
# with nothing below them they return nothing (``output.value`` JSON null).


def test_a_graph_hook_that_returned_nothing_is_no_step() -> None:
    run_attributes = {"openinference.span.kind": "AGENT", "input.value": "q?", "output.value": "ok"}
    root = span(1, "music_store_support", run_attributes)
    chat = {"openinference.span.kind": "LLM", "llm.model_name": "m", "output.value": "done"}

    def hook(output: str | None) -> Span:
        attributes = {"openinference.span.kind": "AGENT"}
        if output is not None:
            attributes["output.value"] = output
        return span(2, "Middleware.before_agent", attributes, parent=1)

    model = span(3, "ChatOpenAI", chat, parent=1)
    assert [s.kind for s in run(root, hook("null"), model).steps] == [StepKind.LLM]
    for kept in ('{"messages": []}', None):  # handed something over; content off: a hop
        steps = run(root, hook(kept), model).steps
        assert [s.kind for s in steps] == [StepKind.AGENT, StepKind.LLM], kept


# mcp-agent records the call it sends (``gen_ai.tool.call.id``, the qualified tool name)
# around the MCP server's ``execute_tool <tool>`` span, which records neither (rule 84).


def client_and_server(client_tool: str | None, server_tool: str) -> list[Span]:
    call = {"id": "c1", "name": "store_lookup", "arguments": {"q": 1}}
    client = {"gen_ai.tool.call.id": "c1", "tool_args": '{"q": 1}'}
    if client_tool is not None:
        client["gen_ai.tool.name"] = client_tool
    return [
        genai_agent(),
        genai_chat(2, [call]),
        span(3, "Agent.call_tool", client, parent=1),
        genai_tool(4, server_tool, None, call_id=None, parent=3),
        genai_chat(5, [], text="done"),
    ]


def test_a_server_span_takes_the_id_of_the_call_around_it() -> None:
    for client_tool in ("store_lookup", None):
        (tool,) = run(*client_and_server(client_tool, "lookup")).tool_calls
        assert (tool.name, tool.call_id, tool.args) == ("lookup", "c1", {"q": 1})
        assert tool.span_id == span(4, "x").span_id.hex()  # timed by the server's span


def test_a_span_inside_another_tools_call_takes_no_id() -> None:
    tools = run(*client_and_server("refund", "lookup")).tool_calls
    assert [(t.name, t.call_id) for t in tools] == [("store_lookup", "c1"), ("lookup", None)]


def test_a_tool_messages_own_result_object_is_not_an_envelope() -> None:
    call = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": 1}}
    answer = {"type": "tool_call_response", "id": "c1", "response": '{\n "result": "Error: x"}'}
    ask = {"role": "user", "parts": [{"type": "text", "content": "q 1?"}]}
    second = [ask, {"role": "assistant", "parts": [call]}, {"role": "tool", "parts": [answer]}]
    (tool,) = run(
        genai_agent(),
        genai_chat_with(2, [ask], [{"role": "assistant", "parts": [call]}]),
        genai_chat_with(
            3, second, [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]
        ),
    ).tool_calls
    assert tool.result == {"result": "Error: x"} and tool.error is None
    (gemini,) = run(*gemini_turn('{\n  "result": {"total": 3}}')).tool_calls  # pretty-printed
    assert gemini.result == {"total": 3}


# --- found by the session's review ------------------------------------------------------------


def test_a_structured_reply_listing_names_lists_no_calls() -> None:
    people = json.dumps([{"name": "Alice", "email": "a@x.org"}, {"name": "Bob"}])
    trajectory = run(genai_agent(), generation(2, people))
    assert not trajectory.tool_calls and trajectory.output == people
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.output": LISTED}
    assert not run(genai_agent(), span(2, "chat m", chat, parent=1)).tool_calls


@pytest.mark.parametrize(
    "more",
    [
        {"gen_ai.operation.name": "rerank"},
        {"gen_ai.operation.name": "embedding"},
        {"gen_ai.usage.output_tokens": 0},
        {"gen_ai.output": None},
    ],
)
def test_no_generation_no_model_call(more: dict[str, Any]) -> None:
    recorded = generation(2, "x", **{k: v for k, v in more.items() if v is not None})
    if more.get("gen_ai.output", "") is None:
        del recorded.attributes["gen_ai.output"]  # type: ignore[attr-defined]
    assert not any(s.kind is StepKind.LLM for s in run(genai_agent(), recorded).steps)


def test_a_bare_name_two_servers_offer_joins_neither() -> None:
    calls = [{"id": "c1", "name": "github__search", "arguments": {"q": 1}},
             {"id": "c2", "name": "jira__search", "arguments": {"q": 1}}]  # fmt: skip
    executed = genai_tool(3, "search", None, call_id=None)
    trajectory = run(genai_agent(), genai_chat(2, calls), executed, genai_chat(4, [], text="done"))
    assert "search" in [t.name for t in trajectory.tool_calls]  # executed, joined to neither


def test_an_execution_with_another_id_is_another_call() -> None:
    spans = mcp_turn("store__lookup", "lookup")
    spans[2] = genai_tool(3, "lookup", None, call_id="zz9")
    assert len(run(*spans).tool_calls) == 2
