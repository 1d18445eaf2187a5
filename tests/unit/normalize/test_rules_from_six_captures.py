"""The general rules six captures called for (Agno, AutoGen, Semantic Kernel, OpenLIT,
Mastra, OpenLLMetry's LlamaIndex instrumentation), each first read by evald without
any rule of its own: from the captures, and from minimal traces that show each rule
holds by structure and evidence, not by the framework's names (ADR 0017 addendum)."""

from __future__ import annotations

import json

import pytest
from support.captures import TRACES, captured
from support.span_kit import TRACE_ID, genai_agent, genai_chat, genai_tool, run, span

from collector.assembly.log_join import join
from collector.core.records import CompletionReason, LogRecord, Trace
from collector.decode import decode_logs_protobuf, decode_protobuf
from collector.decode.log_records import log_selector
from collector.normalize import ATTRIBUTE_SELECTOR, normalize
from collector.normalize.reprs import fields_repr
from collector.normalize.results import parse_result
from collector.normalize.values import INVALID
from evaluators.trajectory import StepKind

# --- pydantic's str() of a model, and a tool message recognised by its shape ------------------

TOOL_MESSAGE = "content='{\"id\": 7}' name='lookup' tool_call_id='call_1'"


def test_a_pydantic_str_is_read_as_its_fields() -> None:
    assert fields_repr("a=1 b=[1, 2] c=Foo(x=1) d=None") == {
        "a": 1,
        "b": [1, 2],
        "c": {"__class__": "Foo", "x": 1},
        "d": None,
    }
    assert fields_repr("content='a b=c' name='x'") == {"content": "a b=c", "name": "x"}


@pytest.mark.parametrize(
    "text",
    ["a=1", "a=1b=2", "a=1 b=2 c", "a=1 a=2", "total=5 of 10", "x=1, y=2", "a=1\nb=2", "a=f(1)"],
)
def test_text_that_merely_resembles_fields_is_text(text: str) -> None:
    assert fields_repr(text) is INVALID
    assert parse_result(text).value == text


def test_a_tool_message_printed_by_pydantic_is_unwrapped_with_its_error() -> None:
    # OpenLIT records str(ToolMessage): defaults such as type='tool' are left out.
    found = parse_result(TOOL_MESSAGE)
    assert (found.value, found.call_id, found.error) == ({"id": 7}, "call_1", None)
    failed = parse_result("content='Expired: 877' name='refund' tool_call_id='c' status='error'")
    assert (failed.value, failed.error) == ("Expired: 877", "Expired: 877")
    openai_style = '{"role": "tool", "tool_call_id": "c", "content": "done"}'
    assert parse_result(openai_style).value == "done"


def test_an_object_with_a_call_id_and_other_kind_is_no_tool_message() -> None:
    assert parse_result('{"role": "user", "tool_call_id": "c", "content": "x"}').value == {
        "role": "user",
        "tool_call_id": "c",
        "content": "x",
    }


def test_openlit_capture_reads_langchains_handled_error() -> None:
    trajectory = captured("langgraph-openlit", "tool_error")
    refund = trajectory.tool_calls[-1]
    assert refund.name == "refund" and refund.error is not None
    assert "RefundWindowExpired" in refund.error
    expected = json.loads((TRACES / "langgraph-openlit" / "tool_error.expected.json").read_text())
    assert trajectory.tool_calls[0].result == expected["actual_trajectory"][0]["result"]


# --- a vendor's generic kind does not hide what the span shows ---------------------------------


def task(n: int, **attributes: str) -> dict[str, str]:
    return {"traceloop.span.kind": "task", "traceloop.entity.name": f"T{n}.task", **attributes}


def test_a_task_span_stating_a_model_call_or_a_tool_call_is_one() -> None:
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "refund 9"}]}])
    chat = task(2, **{"gen_ai.operation.name": "chat", "gen_ai.input.messages": messages})
    call = task(3, **{"tool.name": "refund", "tool.arguments": '{"id": 9}'})
    trajectory = run(
        span(1, "Agent.workflow", {"traceloop.span.kind": "workflow"}),
        span(2, "LLM.task", chat, parent=1),
        span(3, "Step.task", call, parent=1),
        span(4, "Step.task", task(4), parent=1),  # plain plumbing stays plumbing
    )
    assert [(step.kind, step.name) for step in trajectory.steps] == [
        (StepKind.LLM, "LLM.task"),
        (StepKind.TOOL, "refund"),
    ]
    assert (trajectory.input, trajectory.tool_calls[0].args) == ("refund 9", {"id": 9})


def test_a_tool_name_without_the_calls_arguments_is_no_tool_call() -> None:
    trajectory = run(
        span(1, "Agent.workflow", {"traceloop.span.kind": "workflow"}),
        span(2, "Step.task", task(2, **{"tool.name": "refund"}), parent=1),
    )
    assert trajectory.tool_calls == ()


def test_a_call_record_inside_an_envelope_naming_the_tool_gives_result_error_and_id() -> None:
    inner = {
        "tool_name": "refund",
        "raw_input": {"id": 9},
        "raw_output": "Expired",
        "is_error": True,
    }
    envelope = {
        "tool_name": "refund",
        "tool_kwargs": {"id": 9},
        "tool_id": "c9",
        "tool_output": inner,
    }
    found = parse_result(json.dumps(envelope))
    assert (found.value, found.call_id, found.error) == ("Expired", "c9", "Expired")
    two = {"tool_name": "x", "a": {**inner}, "b": {**inner}}  # ambiguous: left as it is
    assert parse_result(json.dumps(two)).value == two


def test_llamaindex_traceloop_capture_has_every_call_and_the_refund_error() -> None:
    trajectory = captured("llamaindex-traceloop", "tool_error")
    assert [(s.name, s.error is not None) for s in trajectory.tool_calls] == [
        ("lookup_invoice", False),
        ("lookup_track", False),
        ("refund", True),
    ]
    assert all(step.call_id for step in trajectory.tool_calls)
    assert sum(step.kind is StepKind.LLM for step in trajectory.steps) == 4


# --- operations that are none of the roles: wrappers and parts are plumbing ----------------------


def test_wrappers_and_parts_of_calls_are_plumbing_own_operations_are_steps() -> None:
    def operation(name: str) -> dict[str, str]:
        return {"gen_ai.operation.name": name}

    trajectory = run(
        genai_agent(),
        span(2, "memory_operation read", operation("memory_operation"), parent=1),
        span(3, "model_generation m", operation("model_generation"), parent=1),
        span(4, "agent_step", operation("agent_step"), parent=3),
        genai_chat(5, [{"id": "c1", "name": "lookup", "arguments": {"q": 1}}], parent=4),
        span(6, "model_chunk", operation("model_chunk"), parent=5),
        genai_tool(7, "lookup", '{"q": 1}', call_id="c1", parent=4),
    )
    kinds = [(step.kind, step.name) for step in trajectory.steps]
    assert kinds == [
        (StepKind.OTHER, "memory_operation read"),
        (StepKind.LLM, "m"),
        (StepKind.TOOL, "lookup"),
    ]


def test_mastra_capture_has_its_input_and_no_wrapper_steps() -> None:
    trajectory = captured("mastra", "correct")
    assert trajectory.input is not None and trajectory.input.startswith("Hi, I'm customer 17.")
    assert {step.kind for step in trajectory.steps} >= {StepKind.LLM, StepKind.TOOL}
    others = {step.name for step in trajectory.steps if step.kind is StepKind.OTHER}
    assert others <= {"memory_operation MessageHistory", "processor_run MemoryInputFilter"}


# --- per-message events whose body is an object's JSON text --------------------------------------


def test_message_events_with_a_json_text_body_are_read_like_a_map_body() -> None:
    def record(event: str, body: dict[str, object]) -> LogRecord:
        return LogRecord(TRACE_ID, (2).to_bytes(8, "big"), event, 2001, {}, json.dumps(body),
                         None, "")  # fmt: skip

    chat = span(2, "chat m", {"gen_ai.operation.name": "chat"}, parent=1)
    records = [
        record("gen_ai.user.message", {"role": "user", "content": "refund 9"}),
        record("gen_ai.choice", {"index": 0, "message": {"role": "assistant", "content": "Done."}}),
    ]
    spans = join((genai_agent(), chat), records).spans
    trajectory = normalize(Trace(TRACE_ID, spans, CompletionReason.END_OF_INPUT, 0, 0))
    assert (trajectory.input, trajectory.output) == ("refund 9", "Done.")


def test_semantic_kernel_capture_gives_the_input_from_its_log_records() -> None:
    folder = TRACES / "semantic-kernel"
    expected = json.loads((folder / "correct.expected.json").read_text())
    spans = decode_protobuf((folder / "correct.pb").read_bytes(), ATTRIBUTE_SELECTOR).spans
    logs = (folder / "correct.logs.pb").read_bytes()
    records = decode_logs_protobuf(logs, log_selector(ATTRIBUTE_SELECTOR)).records
    trace_id = bytes.fromhex(expected["trace_ids"][0])
    mine = tuple(s for s in spans if s.trace_id == trace_id)
    joined = join(mine, [r for r in records if r.trace_id == trace_id]).spans
    trajectory = normalize(Trace(trace_id, joined, CompletionReason.END_OF_INPUT, 0, 0))
    assert trajectory.input == expected["user_inputs"][0]


# --- an agent span that is the loop's model step ------------------------------------------------


def nested_agent(n: int, name: str) -> object:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return span(n, f"invoke_agent {name}", attributes, parent=1)


def test_an_agent_span_whose_requested_tools_ran_beside_it_is_the_loops_model_step() -> None:
    trajectory = run(
        genai_agent(),
        nested_agent(2, "model"),
        genai_chat(3, [{"id": "c1", "name": "lookup", "arguments": {"q": 1}}], parent=2),
        genai_tool(4, "lookup", '{"q": 1}', call_id="c1"),
        nested_agent(5, "model"),  # the last run: requests nothing, same wrapper
        genai_chat(6, [], parent=5, text="Done."),
    )
    assert [(step.kind, step.agent) for step in trajectory.steps] == [
        (StepKind.LLM, "shop"),
        (StepKind.TOOL, "shop"),
        (StepKind.LLM, "shop"),
    ]


def test_a_sub_agent_that_only_asks_the_model_is_still_a_hop() -> None:
    trajectory = run(
        genai_agent(),
        genai_chat(2, [{"id": "c1", "name": "lookup", "arguments": {"q": 1}}]),
        genai_tool(3, "lookup", '{"q": 1}', call_id="c1"),
        nested_agent(4, "summarizer"),
        genai_chat(5, [], parent=4, text="Summary."),
    )
    hops = [step.name for step in trajectory.steps if step.kind is StepKind.AGENT]
    assert hops == ["summarizer"]
    assert trajectory.steps[-1].agent == "summarizer"


def test_openlit_capture_has_no_hop_to_langgraphs_model_node() -> None:
    trajectory = captured("langgraph-openlit", "correct")
    assert {step.agent for step in trajectory.steps} == {"music_store_support"}
    assert not [step for step in trajectory.steps if step.kind is StepKind.AGENT]
