"""The general rules twelve captures called for, each first read by evald without any
rule of its own (Agno, AutoGen, Semantic Kernel, OpenLIT, Mastra, OpenLLMetry's
LlamaIndex instrumentation; then Google ADK + OpenInference, CrewAI + OpenLLMetry, the
OpenAI Agents SDK + Logfire, LangGraph + Langfuse, BeeAI, the AI SDK 7 agent): from the
captures, and from minimal traces that show each rule holds by structure and evidence,
not by the framework's names (ADR 0017's second addendum)."""

from __future__ import annotations

import json
import time

import pytest
from support.captures import TRACES, captured
from support.span_kit import TRACE_ID, genai_agent, genai_chat, genai_tool, run, span

from collector.assembly.log_join import join
from collector.core.records import CompletionReason, LogRecord, StatusCode, Trace
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


# --- found by review: each misread or hazard the rules above first had --------------------------


def test_hostile_reprs_stay_text_quickly_and_never_raise() -> None:
    deep_call = "a=f" + "[0]" * 1000 + "() b=1"  # ast.unparse of the callee recursed
    for text in (
        deep_call,
        "Foo(a=f" + "[0]" * 1000 + "())",
        "a=" + "(" * 16000 + ")" * 16000,
        "a=" + "b=" * 16000,
        "q=foo&bar=baz" * 2500,
        "a=[" + ",".join(["1"] * 5000) + "] b=1",
    ):
        started = time.process_time()
        assert parse_result(text).value == text
        assert time.process_time() - started < 1.0  # bounded work (ms, interpreted ~35)
    trajectory = run(genai_agent(), genai_tool(2, "t", "{}", call_id="c", **{RESULT: deep_call}))
    assert trajectory.tool_calls[0].result == deep_call
    json.dumps(trajectory.to_json())


def test_a_vendors_named_kind_wrapping_a_model_call_stays_a_step() -> None:
    llm = {"openinference.span.kind": "LLM", "llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.content": "q1"}  # fmt: skip
    agent = {"openinference.span.kind": "AGENT", "agent.name": "shop"}
    trajectory = run(
        span(1, "agent", agent),
        span(2, "MultiQueryRetriever", {"openinference.span.kind": "RETRIEVER"}, parent=1),
        span(3, "ChatOpenAI", llm, parent=2),
    )
    assert [(step.kind, step.name) for step in trajectory.steps] == [
        (StepKind.OTHER, "MultiQueryRetriever"),
        (StepKind.LLM, "ChatOpenAI"),
    ]


def test_an_envelopes_tool_id_keeps_the_result_from_being_deferred() -> None:
    envelope = {"tool_name": "refund", "tool_kwargs": {}, "tool_id": "c9"}
    envelope["tool_output"] = {"tool_name": "refund", "raw_input": {}, "raw_output": "done"}
    call = task(2, **{"tool.name": "refund", "tool.arguments": "{}"})
    call["traceloop.entity.output"] = json.dumps(envelope)
    trajectory = run(
        span(1, "W", {"traceloop.span.kind": "workflow"}), span(2, "T", call, parent=1)
    )
    (step,) = trajectory.tool_calls
    assert (step.call_id, step.result) == ("c9", "done")


def test_a_result_recorded_on_a_failed_call_is_evidence_of_results() -> None:
    failed = tool_attrs_error("refund", **{RESULT: "RefundError: window expired"})
    trajectory = run(
        genai_agent(),
        genai_tool(2, "notify", "{}", call_id="c1"),  # returned nothing: no result
        span(3, "execute_tool refund", failed, parent=1, status=StatusCode.ERROR),
    )
    assert "tool_results" not in trajectory.gaps


def test_a_model_only_sub_agent_whose_request_reuses_an_id_is_still_a_hop() -> None:
    trajectory = run(
        genai_agent(),
        genai_chat(2, [{"id": "0", "name": "lookup", "arguments": {"q": 1}}]),
        genai_tool(3, "lookup", '{"q": 1}', call_id="0"),
        nested_agent(4, "critic"),  # its model asked for another tool, under the same id
        genai_chat(5, [{"id": "0", "name": "web_search", "arguments": {"q": "x"}}], parent=4),
    )
    assert [step.name for step in trajectory.steps if step.kind is StepKind.AGENT] == ["critic"]


RESULT = "gen_ai.tool.call.result"


def tool_attrs_error(name: str, **extra: str) -> dict[str, str]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": "c2", "error.type": "RefundError", **extra}  # fmt: skip


# --- the second round: ADK + OpenInference, OpenAI Agents SDK + Logfire, AI SDK 7 ----------------


def test_a_whole_function_response_gives_what_it_holds_its_error_and_id() -> None:
    invoice = {"invoice_id": 1042, "total": 2.97}
    recorded = {"id": "c1", "name": "lookup_invoice", "response": invoice}
    assert parse_result(json.dumps(recorded)) == (invoice, "c1", None)
    failed = {"id": "c2", "name": "refund", "response": {"status": "error", "error_message": "X"}}
    assert parse_result(json.dumps(failed)).error == "X"
    wrapped = {"name": "t", "response": {"result": "[1, 2]"}}
    assert parse_result(json.dumps(wrapped)).value == [1, 2]
    other = {"name": "t", "response": {"a": 1}, "extra": True}  # not a function response
    assert parse_result(json.dumps(other)).value == other


def test_message_events_recorded_as_one_attribute_give_the_messages_and_the_reply() -> None:
    events = [
        {"event.name": "gen_ai.system.message", "role": "system", "content": "Be brief."},
        {"event.name": "gen_ai.user.message", "role": "user", "content": "refund 9"},
        {"event.name": "gen_ai.assistant.message", "role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "refund", "arguments": '{"id": 9}'}}]},
    ]  # fmt: skip
    chat = {"gen_ai.operation.name": "chat", "events": json.dumps(events)}
    trajectory = run(genai_agent(), span(2, "Responses API", chat, parent=1))
    assert trajectory.input == "refund 9"
    (call,) = trajectory.tool_calls
    assert (call.name, call.call_id, call.executed) == ("refund", "c1", False)


def test_a_request_split_into_one_message_per_call_is_answered_call_by_call() -> None:
    def call(call_id: str, name: str) -> dict[str, object]:
        function = {"name": name, "arguments": "{}"}
        return {"role": "assistant", "tool_calls": [{"id": call_id, "function": function}]}

    history = [
        {"role": "user", "content": "go"},
        call("c1", "a"),
        call("c2", "b"),  # the same request: one message per call (Responses API items)
        {"role": "tool", "tool_call_id": "c1", "content": "{'x': 1}"},  # a Python repr
        {"role": "tool", "tool_call_id": "c2", "content": "Error: failed"},
    ]
    first = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [
            {"type": "tool_call", "id": "c1", "name": "a", "arguments": {}},
            {"type": "tool_call", "id": "c2", "name": "b", "arguments": {}}]}])}  # fmt: skip
    events = [{"event.name": f"gen_ai.{m['role']}.message", **m} for m in history]
    second = {"gen_ai.operation.name": "chat", "events": json.dumps(events)}
    trajectory = run(
        genai_agent(), span(2, "chat", first, parent=1), span(3, "chat", second, parent=1)
    )
    calls = [(s.name, s.result, s.error) for s in trajectory.tool_calls]
    assert calls == [("a", {"x": 1}, None), ("b", "Error: failed", "Error: failed")]


# --- BeeAI: unset options, events written as spans, garbled requests, explained errors ------------


def test_unset_options_beside_the_input_are_no_arguments() -> None:
    recorded = json.dumps({"input": {"invoice_id": 9}, "options": None})
    call = {"openinference.span.kind": "TOOL", "tool.name": "refund", "input.value": recorded}
    trajectory = run(genai_agent(), span(2, "refund", call, parent=1))
    assert trajectory.tool_calls[0].args == {"invoice_id": 9}


def test_a_zero_length_span_of_its_parents_role_without_identity_is_an_event() -> None:
    tool = {"openinference.span.kind": "TOOL", "tool.name": "refund", "input.value": "{}"}
    event = {"openinference.span.kind": "TOOL"}  # BeeAI's "error" event: no tool name
    agent_event = {"openinference.span.kind": "AGENT"}  # its "final_answer" event
    trajectory = run(
        genai_agent(),
        span(2, "refund", tool, parent=1, start=2000, end=3000),
        span(3, "error", event, parent=2, start=2500, end=2500),
        span(4, "final_answer", agent_event, parent=1, start=4000, end=4000),
    )
    assert [(step.kind, step.name) for step in trajectory.steps] == [(StepKind.TOOL, "refund")]
    lasting = run(
        genai_agent(),
        span(2, "refund", tool, parent=1, start=2000, end=3000),
        span(3, "inner", event, parent=2, start=2500, end=2600),  # it lasts: no event
    )
    assert len(lasting.tool_calls) == 2


def test_a_failed_calls_output_that_explains_its_error_is_the_error() -> None:
    output = "ToolError: Tool Error\nStoreError: RefundWindowExpired: too late"
    failed = {"openinference.span.kind": "TOOL", "tool.name": "refund", "output.value": output}
    trajectory = run(
        genai_agent(),
        span(2, "refund", failed, parent=1, status=StatusCode.ERROR, message="Tool Error"),
    )
    assert trajectory.tool_calls[0].error == output


# --- CrewAI + OpenLLMetry: an unnamed agent wrapper, the task as the input ------------------------


def test_an_agent_span_without_a_name_around_a_named_one_is_the_same_run() -> None:
    crew = span(1, "crewai.workflow", {"gen_ai.operation.name": "invoke_agent"})
    named = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
    trajectory = run(crew, span(2, "support.agent", named, parent=1), genai_chat(3, [], parent=2))
    assert trajectory.agent == "support"
    assert not [step for step in trajectory.steps if step.kind is StepKind.AGENT]


def test_crewai_traceloop_capture_has_the_request_as_input_in_every_turn() -> None:
    expected = json.loads((TRACES / "crewai-traceloop" / "multi_turn.expected.json").read_text())
    for turn in range(3):
        trajectory = captured("crewai-traceloop", "multi_turn", turn)
        assert trajectory.input == expected["user_inputs"][turn]
        assert trajectory.agent == "music_store_support"


# --- OpenAI Agents SDK + Logfire: what the model is told about a failed call ----------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("An error occurred while running the tool. Please try again.", True),
        ("An unexpected error has occurred", True),
        ("No error occurred", False),
        ("The error occurred yesterday, says the log", False),
    ],
)
def test_the_sentence_an_error_occurred_is_an_error(text: str, error: bool) -> None:
    assert (parse_result(text).error is not None) is error
    result = {"gen_ai.tool.call.result": text}
    trajectory = run(genai_agent(), genai_tool(2, "t", "{}", call_id="c", **result))
    assert (trajectory.tool_calls[0].error is not None) is error  # (also when deferred)
