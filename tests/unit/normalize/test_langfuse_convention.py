"""Langfuse's ``langfuse.observation.*`` attributes (its SDK's OTel spans, any integration):
read by attribute, never by scope or span name (``conventions/langfuse.py``)."""

from __future__ import annotations

import json

from support.captures import captured
from support.span_kit import run, span

from collector.core.records import StatusCode
from evaluators.trajectory import StepKind

T = "langfuse.observation.type"
IN, OUT = "langfuse.observation.input", "langfuse.observation.output"


def test_observations_give_model_calls_tools_input_answer_and_tokens() -> None:
    asked = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"name": "refund", "args": {"id": 9}, "id": "c1", "type": "tool_call"}],
    }
    user = {"role": "user", "content": "refund 9"}
    definition = {"role": "tool", "content": {"type": "function", "function": {"name": "refund"}}}
    trajectory = run(
        span(1, "my_agent", {T: "agent", IN: json.dumps("refund 9")}),
        span(
            2,
            "ChatX",
            {
                T: "generation",
                IN: json.dumps([user, definition]),
                OUT: json.dumps(asked),
                "langfuse.observation.model.name": "m",
                "langfuse.observation.usage_details": '{"input": 7, "output": 2}',
            },
            parent=1,
        ),
        span(
            3,
            "refund",
            {
                T: "tool",
                IN: '{"id": 9}',
                OUT: '"Expired"',
                "langfuse.observation.metadata.tool_call_id": '"c1"',
            },
            parent=1,
            status=StatusCode.ERROR,
            message="Expired",
        ),
        span(
            4,
            "ChatX",
            {
                T: "generation",
                IN: json.dumps([user]),
                OUT: json.dumps({"role": "assistant", "content": "Sorry"}),
            },
            parent=1,
        ),
        span(5, "helper", {T: "span"}, parent=1),  # a traced function without work: plumbing
    )
    assert [(s.kind, s.name) for s in trajectory.steps] == [
        (StepKind.LLM, "m"),
        (StepKind.TOOL, "refund"),
        (StepKind.LLM, "ChatX"),
    ]
    tool = trajectory.tool_calls[0]
    assert (tool.args, tool.call_id, tool.error) == ({"id": 9}, "c1", "Expired")
    assert (trajectory.agent, trajectory.input, trajectory.output) == (
        "my_agent",
        "refund 9",
        "Sorry",
    )
    assert (trajectory.steps[0].input_tokens, trajectory.steps[0].output_tokens) == (7, 2)


def test_langgraph_langfuse_capture_reads_the_handled_refund_error() -> None:
    trajectory = captured("langgraph-langfuse", "tool_error")
    refund = trajectory.tool_calls[-1]
    assert (refund.name, refund.call_id) == ("refund", "call_tool_e_020")
    assert refund.error is not None and "RefundWindowExpired" in refund.error
    assert [s.kind for s in trajectory.steps].count(StepKind.LLM) == 4


def test_a_graph_node_typed_agent_by_its_name_is_the_loops_node() -> None:
    node = {T: "agent", "langfuse.observation.metadata.langgraph_node": '"agent"'}
    asked = {"role": "assistant", "tool_calls": [{"name": "refund", "args": {}, "id": "c1"}]}
    trajectory = run(
        span(1, "LangGraph", {T: "chain", IN: '{"messages": [{"role": "user", "content": "hi"}]}'}),
        span(2, "agent", node, parent=1),
        span(3, "ChatX", {T: "generation", OUT: json.dumps(asked)}, parent=2),
        span(
            4,
            "tools",
            {T: "chain", "langfuse.observation.metadata.tags": '["graph:step:2"]'},
            parent=1,
        ),
        span(5, "refund", {T: "tool", IN: "{}"}, parent=4),
    )
    assert [(s.kind, s.name) for s in trajectory.steps] == [
        (StepKind.LLM, "ChatX"),
        (StepKind.TOOL, "refund"),
    ]
    assert (trajectory.agent, trajectory.input) == ("LangGraph", "hi")
