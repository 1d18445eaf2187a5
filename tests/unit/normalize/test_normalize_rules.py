"""One test per normalization rule, on small hand-built spans (CONVENTIONS §6 and ADR 0005)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from support.span_kit import (
    TRACE_ID,
    genai_agent,
    genai_chat,
    genai_tool,
    oi,
    oi_llm_calls,
    run,
    sid,
    span,
    tools,
)

from collector.core.records import (
    AttrValue,
    CompletionReason,
    Span,
    SpanEvent,
    StatusCode,
    Trace,
)
from collector.normalize import ATTRIBUTE_SELECTOR, Mappings, ToolSpanRule, normalize
from collector.normalize.arguments import bind, parse_arguments
from collector.normalize.results import parse_result
from evaluators.trajectory import StepKind

# --- arguments --------------------------------------------------------------------------------


def test_arguments_json_object() -> None:
    parsed = parse_arguments('{"a": 1}')
    assert (parsed.value, parsed.raw, parsed.bare) == ({"a": 1}, '{"a": 1}', False)


def test_arguments_python_repr_recovered_with_literal_eval() -> None:
    parsed = parse_arguments("{'track_name': 'Money', 'n': (1, 2)}")
    assert parsed.value == {"track_name": "Money", "n": (1, 2)}
    assert parsed.raw == "{'track_name': 'Money', 'n': (1, 2)}"


def test_arguments_repr_with_non_json_values_stays_text() -> None:
    assert parse_arguments("{'a': {1, 2}}").value == "{'a': {1, 2}}"


def test_arguments_traceloop_wrapper_uses_inputs_and_call_id() -> None:
    wrapper = json.dumps(
        {
            "input_str": "{'track_name': 'Money'}",
            "tags": [],
            "metadata": {"thread_id": "t"},
            "inputs": {"track_name": "Money"},
            "kwargs": {"tool_call_id": "call_1"},
        }
    )
    parsed = parse_arguments(wrapper)
    assert (parsed.value, parsed.call_id, parsed.raw) == (
        {"track_name": "Money"},
        "call_1",
        wrapper,
    )


def test_arguments_traceloop_wrapper_without_inputs_falls_back_to_input_str() -> None:
    parsed = parse_arguments(json.dumps({"input_str": "{'x': 1}", "kwargs": {}}))
    assert parsed.value == {"x": 1}
    bare = parse_arguments(json.dumps({"input_str": "Money"}))
    assert (bare.value, bare.bare) == ("Money", True)


def test_arguments_bare_value_is_bound_to_the_single_parameter() -> None:
    parsed = parse_arguments("Comfortably Numb")
    assert parsed.bare
    assert bind(parsed, "track_name") == {"track_name": "Comfortably Numb"}
    assert bind(parsed, None) == "Comfortably Numb"
    assert bind(parse_arguments("17"), "invoice_id") == {"invoice_id": 17}


def test_arguments_kvlist_and_odd_types() -> None:
    assert parse_arguments({"a": (1, b"\x01")}).value == {"a": [1, "01"]}
    assert parse_arguments(None).value is None
    assert parse_arguments("{broken").value == "{broken"
    assert parse_arguments("(" * 5000).value == "(" * 5000


# --- results and hidden errors ------------------------------------------------------------------


def test_result_openinference_tool_message_error_is_found() -> None:
    message = {
        "type": "tool",
        "data": {
            "content": "RefundWindowExpired: too old",
            "tool_call_id": "c1",
            "status": "error",
        },
    }
    result = parse_result(json.dumps(message))
    assert (result.value, result.call_id, result.error) == (
        "RefundWindowExpired: too old",
        "c1",
        "RefundWindowExpired: too old",
    )


def test_result_traceloop_output_wrapper_is_unwrapped() -> None:
    message = {
        "output": {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "messages", "ToolMessage"],
            "kwargs": {"content": '{"ok": true}', "tool_call_id": "c2", "status": "success"},
        },
        "kwargs": {"name": "t"},
    }
    result = parse_result(json.dumps(message))
    assert (result.value, result.call_id, result.error) == ({"ok": True}, "c2", None)


def test_result_adk_error_dict_is_an_error() -> None:
    result = parse_result('{"status": "error", "error_message": "no such invoice"}')
    assert result.error == "no such invoice"
    assert parse_result('{"status": "approved"}').error is None
    assert parse_result('{"status": "error", "content": [{"text": "boom"}]}').error == "boom"


def test_result_python_repr_is_read_back() -> None:
    # CrewAI str()s a tool's non-text return: its tool spans record a Python repr.
    result = parse_result("{'track_id': 3158, 'album': 'The Wall', 'price': 0.99, 'x': None}")
    assert result.value == {"track_id": 3158, "album": "The Wall", "price": 0.99, "x": None}
    refused = parse_result("{'status': 'error', 'error_message': 'no such invoice'}")
    assert refused.error == "no such invoice"
    assert parse_result("{'a': {1, 2}}").value == "{'a': {1, 2}}"  # a set is no JSON value
    assert parse_result("{not python").value == "{not python"
    assert parse_result("Refund approved").value == "Refund approved"


def test_hidden_tool_error_with_status_ok_counts() -> None:
    output = {"type": "tool", "data": {"content": "boom", "tool_call_id": "c1", "status": "error"}}
    trajectory = run(
        oi(1, "graph", "CHAIN"),
        oi(
            2,
            "refund",
            "TOOL",
            parent=1,
            **{"tool.name": "refund", "output.value": json.dumps(output)},
        ),
    )
    (step,) = tools(trajectory)
    assert (step.error, step.result, step.call_id) == ("boom", "boom", "c1")
    assert trajectory.tool_errors == 1 and not trajectory.failed


@pytest.mark.parametrize(
    ("status", "message", "events", "extra", "expected"),
    [
        (StatusCode.ERROR, "Timeout", (), {}, "Timeout"),
        (StatusCode.ERROR, "", (), {"error.type": "TimeoutError"}, "TimeoutError"),
        (
            StatusCode.UNSET,
            "",
            (SpanEvent("exception", 1, {"exception.message": "bad"}),),
            {},
            "bad",
        ),
        (StatusCode.UNSET, "", (), {"error.type": "KeyError"}, "KeyError"),
        (StatusCode.OK, "", (), {"gen_ai.tool.status": "error"}, "error"),
        (StatusCode.OK, "", (), {}, None),
    ],
)
def test_tool_span_errors(
    status: int,
    message: str,
    events: tuple[SpanEvent, ...],
    extra: dict[str, AttrValue],
    expected: str | None,
) -> None:
    tool = genai_tool(2, "t", "{}", call_id="c1", **extra)
    tool = tool._replace(status_code=status, status_message=message, events=events)
    (step,) = tools(run(genai_agent(), tool))
    assert step.error == expected


def test_run_failure_comes_from_root_or_agent_status() -> None:
    failed = run(genai_agent()._replace(status_code=StatusCode.ERROR, status_message="crash"))
    assert (failed.failed, failed.error) == (True, "crash")
    assert not run(genai_agent()).failed


# --- joining requested and executed calls -------------------------------------------------------


def test_tool_spans_without_ids_are_joined_by_name_args_and_order() -> None:
    trajectory = run(
        oi(1, "graph", "CHAIN"),
        oi(
            2,
            "model",
            "LLM",
            parent=1,
            **oi_llm_calls([("c1", "lookup", '{"q": "a"}'), ("c2", "lookup", '{"q": "b"}')]),
        ),
        # executed in the opposite order of the request
        oi(3, "lookup", "TOOL", parent=1, **{"tool.name": "lookup", "input.value": '{"q": "b"}'}),
        oi(4, "lookup", "TOOL", parent=1, **{"tool.name": "lookup", "input.value": '{"q": "a"}'}),
    )
    assert [(s.args, s.call_id, s.executed) for s in tools(trajectory)] == [
        ({"q": "b"}, "c2", True),
        ({"q": "a"}, "c1", True),
    ]


def test_bare_argument_bound_via_the_requested_call() -> None:
    trajectory = run(
        oi(1, "graph", "CHAIN"),
        oi(
            2,
            "model",
            "LLM",
            parent=1,
            **oi_llm_calls([("c1", "lookup_track", '{"track_name": "Money"}')]),
        ),
        oi(
            3,
            "lookup_track",
            "TOOL",
            parent=1,
            **{"tool.name": "lookup_track", "input.value": "Money"},
        ),
    )
    (step,) = tools(trajectory)
    assert (step.args, step.raw_args, step.call_id) == ({"track_name": "Money"}, "Money", "c1")


def test_bare_argument_bound_via_the_tool_schema() -> None:
    schema = json.dumps({"type": "object", "properties": {"track_name": {"type": "string"}}})
    trajectory = run(
        oi(
            1,
            "lookup_track",
            "TOOL",
            **{"tool.name": "lookup_track", "input.value": "Money", "tool.parameters": schema},
        ),
    )
    assert tools(trajectory)[0].args == {"track_name": "Money"}


def test_bare_argument_bound_via_tool_definitions_of_the_llm() -> None:
    definitions = json.dumps(
        [
            {
                "type": "function",
                "name": "lookup_track",
                "parameters": {"properties": {"track_name": {"type": "string"}}},
            }
        ]
    )
    chat = genai_chat(2, [{"id": "c1", "name": "lookup_track", "arguments": "Money"}])
    chat = chat._replace(attributes={**chat.attributes, "gen_ai.tool.definitions": definitions})
    trajectory = run(genai_agent(), chat, genai_tool(3, "lookup_track", "Money", call_id="c1"))
    assert tools(trajectory)[0].args == {"track_name": "Money"}


def test_requested_but_not_executed_call_is_a_tool_step() -> None:
    trajectory = run(
        genai_agent(),
        genai_chat(
            2,
            [
                {"id": "c1", "name": "a", "arguments": {"x": 1}},
                {"id": "c2", "name": "b", "arguments": {"y": 2}},
            ],
        ),
        genai_tool(3, "a", '{"x": 1}', call_id="c1"),
    )
    steps = tools(trajectory)
    assert [(s.name, s.executed, s.span_id, s.call_id, s.args) for s in steps] == [
        ("b", False, "", "c2", {"y": 2}),
        ("a", True, sid(3).hex(), "c1", {"x": 1}),
    ]
    assert trajectory.steps[0].kind is StepKind.LLM  # placed right after the LLM that asked
    assert steps[0].to_json()["executed"] is False


def test_retries_are_repeated_calls() -> None:
    trajectory = run(
        genai_agent(),
        genai_chat(2, [{"id": "c1", "name": "refund", "arguments": {"id": 1}}]),
        genai_tool(3, "refund", '{"id": 1}', call_id="c1")._replace(status_code=StatusCode.ERROR),
        genai_chat(4, [{"id": "c2", "name": "refund", "arguments": {"id": 1}}]),
        genai_tool(5, "refund", '{"id": 1}', call_id="c2"),
    )
    assert [(s.name, s.call_id, s.error is not None) for s in tools(trajectory)] == [
        ("refund", "c1", True),
        ("refund", "c2", False),
    ]


def test_tool_span_without_arguments_takes_the_requested_ones() -> None:
    trajectory = run(
        genai_agent(),
        genai_chat(2, [{"id": "c1", "name": "a", "arguments": '{"x": 1}'}]),
        genai_tool(3, "a", None, call_id="c1"),  # ADK without content capture
    )
    (step,) = tools(trajectory)
    assert (step.args, step.raw_args) == ({"x": 1}, '{"x": 1}')


def test_pydantic_ai_output_tool_is_not_reported_missing() -> None:
    chat = genai_chat(2, [{"id": "c1", "name": "final_result", "arguments": {"answer": 1}}])
    trajectory = run(genai_agent(), chat._replace(scope_name="pydantic-ai"))
    assert tools(trajectory) == []


# --- phantoms, wrappers, agents and nodes -------------------------------------------------------


def test_adk_merged_tools_span_is_not_a_step() -> None:
    merged = genai_tool(4, "(merged tools)", None, call_id="c1,c2")._replace(
        name="execute_tool (merged)"
    )
    trajectory = run(
        genai_agent(),
        genai_tool(2, "a", "{}", call_id="c1"),
        genai_tool(3, "b", "{}", call_id="c2"),
        merged,
    )
    assert [s.name for s in tools(trajectory)] == ["a", "b"]


def test_traceloop_stray_create_agent_trace_has_no_steps() -> None:
    trajectory = run(
        span(
            1,
            "create_agent shop",
            {"gen_ai.operation.name": "create_agent", "gen_ai.agent.name": "shop"},
        )
    )
    assert trajectory.steps == () and trajectory.agent == "shop"


def test_wrappers_down_to_the_agent_root_and_duplicates_are_not_steps() -> None:
    trajectory = run(
        span(
            1, "turn.workflow", {"traceloop.span.kind": "workflow", "traceloop.entity.name": "turn"}
        ),
        genai_agent(2)._replace(parent_span_id=sid(1)),
        span(
            3,
            "shop.workflow",
            {"traceloop.span.kind": "workflow", "gen_ai.agent.name": "shop"},
            parent=2,
        ),
        genai_tool(4, "a", "{}", call_id="c1", parent=3),
    )
    assert trajectory.agent == "shop" and trajectory.agents == ("shop",)
    assert [(s.kind, s.name, s.parent_span_id) for s in trajectory.steps] == [
        (StepKind.TOOL, "a", None)
    ]


def test_sub_agent_hop_is_an_agent_step_and_names_the_agent_of_its_steps() -> None:
    trajectory = run(
        genai_agent(),
        span(
            2,
            "invoke_agent refunds",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds"},
            parent=1,
        ),
        genai_tool(3, "refund", "{}", call_id="c1", parent=2),
    )
    assert [(s.kind, s.name, s.agent, s.parent_span_id) for s in trajectory.steps] == [
        (StepKind.AGENT, "refunds", "shop", None),
        (StepKind.TOOL, "refund", "refunds", sid(2).hex()),
    ]
    assert trajectory.agents == ("shop", "refunds")


def langgraph_node(n: int, name: str, parent: int) -> Span:
    metadata = json.dumps({"thread_id": "t1", "langgraph_node": name, "langgraph_step": n})
    return oi(n, name, "CHAIN", parent=parent, metadata=metadata)


def test_langgraph_nodes_are_agent_steps_but_the_react_loop_nodes_are_not() -> None:
    trajectory = run(
        oi(1, "support", "CHAIN"),
        langgraph_node(2, "intent_classifier", 1),
        oi(3, "Model", "LLM", parent=2),
        langgraph_node(4, "refund_agent", 1),
        langgraph_node(5, "model", 4),
        oi(6, "Model", "LLM", parent=5, **oi_llm_calls([("c1", "refund", '{"id": 1}')])),
        langgraph_node(7, "tools", 4),
        oi(8, "refund", "TOOL", parent=7, **{"tool.name": "refund", "input.value": '{"id": 1}'}),
        oi(9, "RunnableSequence", "CHAIN", parent=1),
    )
    kinds = [StepKind.AGENT, StepKind.TOOL]
    assert [s.name for s in trajectory.steps_of(kinds)] == [
        "intent_classifier",
        "refund_agent",
        "refund",
    ]
    assert trajectory.steps[-1].name == "refund"  # the RunnableSequence plumbing: no step
    assert trajectory.agent == "support"


def test_a_trace_without_agent_model_or_tool_spans_is_no_run() -> None:
    trajectory = run(span(1, "POST /chat"), span(2, "db.query", {"db.system": "pg"}, parent=1))
    assert trajectory.steps == () and trajectory.skip_reason == "no_agent_spans"
    assert trajectory.tool_calls == () and trajectory.conventions == ()
    assert trajectory.agent is None and trajectory.latency_s == 0.5e-6
    setup = run(span(1, "create_agent shop", {"gen_ai.operation.name": "create_agent"}))
    assert setup.skip_reason == "no_agent_spans"  # building an agent is not running it


def test_unknown_spans_are_looked_through_and_recognised_operations_are_other_steps() -> None:
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund"}
    trajectory = run(
        genai_agent(),
        span(2, "db.query", {"db.system": "pg"}, parent=1),
        span(3, "execute_tool refund", tool, parent=2),  # found through the unknown span
        oi(4, "retrieve", "RETRIEVER", parent=1),
    )
    assert trajectory.skip_reason is None
    assert [(s.kind, s.name, s.parent_span_id) for s in trajectory.steps] == [
        (StepKind.TOOL, "refund", None),
        (StepKind.OTHER, "retrieve", None),
    ]


def test_http_root_around_one_agent_is_the_run() -> None:
    trajectory = run(span(1, "POST /chat"), genai_agent(2)._replace(parent_span_id=sid(1)))
    assert trajectory.agent == "shop" and trajectory.steps == ()


def test_crewai_kickoff_with_several_tasks_keeps_the_crew_as_agent_root() -> None:
    trajectory = run(
        oi(1, "crew.kickoff", "CHAIN"),
        oi(2, "support.task1._execute_core", "AGENT", parent=1, **{"graph.node.id": "support"}),
        oi(3, "lookup.run", "TOOL", parent=2, **{"tool.name": "lookup", "input.value": '{"q": 1}'}),
        oi(4, "support.task2._execute_core", "AGENT", parent=1, **{"graph.node.id": "writer"}),
    )
    assert trajectory.agent == "crew.kickoff"
    assert [(s.kind.value, s.name, s.agent) for s in trajectory.steps] == [
        ("agent", "support", "crew.kickoff"),
        ("tool", "lookup", "support"),
        ("agent", "writer", "crew.kickoff"),
    ]


# --- ordering --------------------------------------------------------------------------------


def test_equal_start_times_are_ordered_by_tree_order_and_arrival() -> None:
    root = span(1, "ai.generateText", {"ai.operationId": "ai.generateText"}, start=0)
    llm = span(
        2,
        "ai.generateText.doGenerate",
        {"ai.operationId": "ai.generateText.doGenerate"},
        parent=1,
        start=5,
    )
    first = span(
        9, "ai.toolCall", {"ai.toolCall.name": "first", "ai.toolCall.id": "c1"}, parent=1, start=5
    )
    second = span(
        3, "ai.toolCall", {"ai.toolCall.name": "second", "ai.toolCall.id": "c2"}, parent=1, start=5
    )
    trajectory = run(llm, first, second, root)  # arrival order = end order
    assert [s.name for s in trajectory.steps] == ["ai.generateText.doGenerate", "first", "second"]


# --- sessions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"session.id": "s2", "gen_ai.conversation.id": "s1"}, "s1"),
        ({"session.id": "s2", "traceloop.association.properties.session_id": "s3"}, "s2"),
        (
            {
                "traceloop.association.properties.thread_id": "s3",
                "langsmith.metadata.session_id": "s4",
            },
            "s3",
        ),
        ({"langsmith.metadata.thread_id": "s4", "ai.telemetry.metadata.sessionId": "s5"}, "s4"),
        ({"ai.telemetry.metadata.sessionId": "s5", "metadata": '{"thread_id": "s6"}'}, "s5"),
        ({"ai.telemetry.metadata.sessionId": "s5", "ai.settings.context.sessionId": "s7"}, "s5"),
        ({"ai.settings.context.sessionId": "s7", "metadata": '{"thread_id": "s6"}'}, "s7"),
        ({"traceloop.association.properties.sessionId": "s8"}, "s8"),  # any spelling, namespace
        ({"langsmith.metadata.threadId": "s9"}, "s9"),
        ({"metadata": '{"thread_id": "s6"}'}, "s6"),
        ({"session.id": 42}, "42"),
        ({"session.id": ("not", "a", "session")}, None),
        ({}, None),
        ({"session.id": "null", "langsmith.metadata.thread_id": "s4"}, "s4"),  # "null": absent
        ({"gen_ai.conversation.id": "None"}, None),
    ],
)
def test_session_id_precedence(attributes: dict[str, AttrValue], expected: str | None) -> None:
    assert run(span(1, "root", attributes)).session_id == expected


def test_session_precedence_is_by_key_across_spans() -> None:
    trajectory = run(
        span(1, "root", {"session.id": "from-root"}),
        span(2, "child", {"gen_ai.conversation.id": "from-child"}, parent=1),
    )
    assert trajectory.session_id == "from-child"


# --- robustness ------------------------------------------------------------------------------


def test_empty_trace() -> None:
    trajectory = normalize(Trace(TRACE_ID, (), CompletionReason.IDLE, 0, 0))
    assert trajectory.steps == () and trajectory.incomplete


def test_orphans_duplicates_and_cycles_do_not_break_normalization() -> None:
    def tool(n: int, name: str, parent: int) -> Span:
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        return span(n, name, attributes, parent=parent)

    a = tool(1, "a", parent=2)
    b = tool(2, "b", parent=1)
    self_parent = tool(3, "c", parent=3)
    trajectory = run(a, b, a, self_parent, tool(4, "orphan", parent=99))
    assert trajectory.incomplete  # no span without a parent: the earliest top-level one is the run
    assert sorted(s.name for s in trajectory.steps) == ["a", "b", "c", "orphan"]


def test_wrong_attribute_types_are_tolerated() -> None:
    odd: dict[str, AttrValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": 7,
        "gen_ai.tool.call.id": ("x",),
        "gen_ai.tool.call.arguments": b"\x00",
        "gen_ai.tool.call.result": {"nested": (b"\x01",)},
        "gen_ai.conversation.id": 3.5,
    }
    chat = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": "[{tool_call"}
    trajectory = run(genai_agent(), span(2, "chat", chat, parent=1), span(3, "t", odd, parent=1))
    (step,) = tools(trajectory)
    assert step.name == "t" and step.args == "00" and step.result == {"nested": ["01"]}


# --- user mappings ---------------------------------------------------------------------------


def test_mappings_detect_in_house_tool_spans_and_read_their_fields() -> None:
    mappings = Mappings(
        tool_span=ToolSpanRule(attribute="acme.kind", equals="tool"),
        tool_name="acme.tool",
        tool_args="acme.args",
        tool_result="acme.out",
        tool_call_id="acme.call",
        agent_name="acme.agent",
        session_id="acme.session",
    )
    root = span(1, "run", {"acme.agent": "bot", "acme.session": "s9", "session.id": "other"})
    tool = span(
        2,
        "x",
        {
            "acme.kind": "tool",
            "acme.tool": "lookup",
            "acme.args": '{"q": 1}',
            "acme.out": "42",
            "acme.call": "k1",
        },
        parent=1,
    )
    trajectory = run(root, tool, mappings=mappings)
    (step,) = tools(trajectory)
    assert (step.name, step.args, step.result, step.call_id) == ("lookup", {"q": 1}, 42, "k1")
    assert (trajectory.agent, trajectory.session_id) == ("bot", "s9")
    assert "custom" in trajectory.conventions
    selector = mappings.selector(ATTRIBUTE_SELECTOR)
    assert all(selector.wants(key) for key in ("acme.kind", "acme.args", "gen_ai.tool.name"))


def test_mappings_validation() -> None:
    with pytest.raises(ValidationError):
        ToolSpanRule()
    with pytest.raises(ValidationError):
        ToolSpanRule(equals="tool")
    with pytest.raises(ValidationError):
        Mappings(tool_nam="typo")  # type: ignore[call-arg]
    assert ToolSpanRule(name_prefix="tool.").matches(span(1, "tool.lookup"))
