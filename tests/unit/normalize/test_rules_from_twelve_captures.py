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
from collector.normalize import ATTRIBUTE_SELECTOR, Mappings, normalize
from collector.normalize.mappings import ToolSpanRule
from collector.normalize.reprs import fields_repr
from collector.normalize.results import parse_result
from collector.normalize.values import INVALID
from evaluators.trajectory import StepKind, Trajectory

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
    assert parse_result(json.dumps(recorded), "lookup_invoice") == (invoice, "c1", None)
    assert parse_result(json.dumps(recorded), "other_tool").value == recorded  # not its own
    failed = {"id": "c2", "name": "refund", "response": {"status": "error", "error_message": "X"}}
    assert parse_result(json.dumps(failed), "refund").error == "X"
    wrapped = {"name": "t", "response": {"result": "[1, 2]"}}
    assert parse_result(json.dumps(wrapped), "t").value == [1, 2]
    other = {"name": "t", "response": {"a": 1}, "extra": True}  # not a function response
    assert parse_result(json.dumps(other), "t").value == other


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


# --- found by the second review: each misread the second round's rules first had -------------


def openai_call(call_id: str | None, name: str) -> dict[str, object]:
    call: dict[str, object] = {"type": "function", "function": {"name": name, "arguments": "{}"}}
    if call_id is not None:
        call["id"] = call_id
    return {"role": "assistant", "tool_calls": [call]}


def history_run(history: list[dict[str, object]], requested: list[tuple[str, str]]) -> Trajectory:
    parts = [{"type": "tool_call", "id": i, "name": n, "arguments": {}} for i, n in requested]
    first = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": parts}])}  # fmt: skip
    events = [{"event.name": f"gen_ai.{m['role']}.message", **m} for m in history]
    second = {"gen_ai.operation.name": "chat", "events": json.dumps(events)}
    return run(genai_agent(), span(2, "chat", first, parent=1), span(3, "chat", second, parent=1))


def test_an_unanswered_call_never_takes_another_calls_answer() -> None:
    history = [
        {"role": "user", "content": "go"},
        openai_call("c1", "lookup"),  # never answered
        openai_call("c2", "refund"),
        {"role": "tool", "tool_call_id": "c2", "content": "refunded 9"},
    ]
    trajectory = history_run(history, [("c1", "lookup"), ("c2", "refund")])
    calls = {s.name: (s.executed, s.result) for s in trajectory.tool_calls}
    assert calls == {"lookup": (False, None), "refund": (True, "refunded 9")}


def test_answers_without_ids_follow_a_request_split_per_call_in_order() -> None:
    history = [
        {"role": "user", "content": "go"},
        openai_call(None, "a"),
        openai_call(None, "b"),
        {"role": "tool", "content": "for a"},
        {"role": "tool", "content": "for b"},
    ]
    parts = [{"type": "tool_call", "name": n, "arguments": {}} for n in ("a", "b")]
    first = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": parts}])}  # fmt: skip
    events = [{"event.name": f"gen_ai.{m['role']}.message", **m} for m in history]
    second = {"gen_ai.operation.name": "chat", "events": json.dumps(events)}
    trajectory = run(
        genai_agent(), span(2, "chat", first, parent=1), span(3, "chat", second, parent=1)
    )
    assert [(s.name, s.result) for s in trajectory.tool_calls] == [("a", "for a"), ("b", "for b")]


def test_a_langfuse_agent_observation_without_work_is_a_mistyped_chain() -> None:
    def lf(kind: str, **extra: str) -> dict[str, str]:
        return {"langfuse.observation.type": kind, **extra}

    asked = {"role": "assistant", "content": "", "tool_calls": [
        {"name": "lookup", "args": {"q": 1}, "id": "call_1"}]}  # fmt: skip
    generation = lf("generation", **{"langfuse.observation.output": json.dumps(asked)})
    trajectory = run(
        span(1, "AgentExecutor", lf("agent")),
        span(2, "RunnableSequence", lf("chain"), parent=1),
        span(3, "RunnableAssign<agent_scratchpad>", lf("agent"), parent=2),
        span(4, "ChatOpenAI", generation, parent=2),
        span(5, "OpenAIToolsAgentOutputParser", lf("agent"), parent=2),
        span(6, "lookup", lf("tool", **{"langfuse.observation.input": '{"q": 1}'}), parent=1),
    )
    assert not [step for step in trajectory.steps if step.kind is StepKind.AGENT]
    assert {step.agent for step in trajectory.steps} == {"AgentExecutor"}


def test_a_tools_own_id_name_response_result_is_not_a_function_response() -> None:
    ticket = {"id": "T-1", "name": "Login broken", "response": {"status": "sent", "by": "bob"}}
    trajectory = run(genai_agent(), genai_tool(2, "open_ticket", "{}", call_id=None,
                                                **{RESULT: json.dumps(ticket)}))  # fmt: skip
    (step,) = trajectory.tool_calls
    assert (step.result, step.call_id, step.error) == (ticket, None, None)


def test_an_unnamed_agent_with_work_of_its_own_beside_its_sub_agent_is_a_hop_away() -> None:
    orchestrator = span(1, "invoke_agent orchestrator", {"gen_ai.operation.name": "invoke_agent"})
    researcher = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher"}
    trajectory = run(
        orchestrator,
        span(2, "plan", {}, parent=1),
        genai_chat(3, [], parent=2, text="delegate"),
        span(4, "invoke_agent researcher", researcher, parent=1),
        genai_chat(5, [], parent=4, text="found"),
    )
    assert trajectory.agent == "orchestrator"
    assert [step.name for step in trajectory.steps if step.kind is StepKind.AGENT] == ["researcher"]


@pytest.mark.parametrize(
    ("message", "output"),
    [
        ("error", "A 2 KB report\nthat mentions an error\n" + "x" * 2000),  # generic status
        ("TimeoutError", "partial: 8 rows, then TimeoutError" + "y" * 100),  # a type name
        ("Tool Error", "first line without it\nTool Error: more"),  # not on its first line
        ("Tool Error", "ToolError: Tool Error\n" + "z" * 3000),  # too long to stand for it
    ],
)
def test_an_output_is_the_error_only_when_it_plainly_explains_it(message: str, output: str) -> None:
    failed = {"openinference.span.kind": "TOOL", "tool.name": "t", "output.value": output}
    tool = span(2, "t", failed, parent=1, status=StatusCode.ERROR, message=message)
    assert run(genai_agent(), tool).tool_calls[0].error == message


def test_a_quick_tool_call_recorded_with_no_duration_is_still_a_call() -> None:
    def lf(kind: str, **extra: str) -> dict[str, str]:
        return {"langfuse.observation.type": kind, **extra}

    trajectory = run(
        span(1, "agent", lf("agent")),
        span(2, "checkout", lf("tool", **{"langfuse.observation.input": "{}"}), parent=1,
             start=2_000_000, end=5_000_000),
        span(3, "price_lookup", lf("tool", **{"langfuse.observation.input": '{"sku": 1}'}),
             parent=2, start=3_000_000, end=3_000_000),  # a millisecond clock
    )  # fmt: skip
    assert [step.name for step in trajectory.tool_calls] == ["checkout", "price_lookup"]


@pytest.mark.parametrize(
    "text",
    [
        "An error occurred in 3 of 120 builds last week; all were retried.",
        "error occurred flags: 0",
    ],
)
def test_text_that_merely_opens_with_the_words_is_no_error(text: str) -> None:
    assert parse_result(text).error is None


def test_a_thread_id_comes_before_a_conversation_id_in_a_namespace() -> None:
    both = {"langsmith.metadata.thread_id": "T", "langsmith.metadata.conversation_id": "C"}
    assert run(span(1, "root", both)).session_id == "T"


def test_an_input_parameter_beside_an_unset_real_parameter_is_kept_whole() -> None:
    recorded = json.dumps({"input": {"sku": 1}, "warehouse": None})
    call = {"openinference.span.kind": "TOOL", "tool.name": "stock", "input.value": recorded}
    trajectory = run(genai_agent(), span(2, "stock", call, parent=1))
    assert trajectory.tool_calls[0].args == {"input": {"sku": 1}, "warehouse": None}


def garbled_run(later_agent: str, later_first: str) -> Trajectory:
    """A model call whose two requests are recorded as one, garbled (BeeAI), then the next
    model call (of ``later_agent``) whose history holds them whole."""
    garbled = {"id": "c1", "name": "a", "arguments": '{"x": 1}{"y": 2}'}
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": later_first, "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
        {"role": "tool", "tool_call_id": "c2", "content": "2"},
    ]  # fmt: skip
    events = [{"event.name": f"gen_ai.{m['role']}.message", **m} for m in history]
    later = {"gen_ai.operation.name": "chat", "events": json.dumps(events)}
    spans = [genai_agent(), genai_chat(2, [garbled])]
    if later_agent == "shop":
        spans.append(span(3, "chat", later, parent=1))
    else:
        spans.append(nested_agent(3, later_agent))
        spans.append(span(4, "chat", later, parent=3))
    return run(*spans)


def test_garbled_requests_are_read_from_the_next_history_of_the_same_agent_and_call() -> None:
    taken = garbled_run("shop", "a")
    assert sorted((s.name, s.executed) for s in taken.tool_calls) == [("a", True), ("b", True)]
    for other in (garbled_run("critic", "a"), garbled_run("shop", "other_tool")):
        assert [s.name for s in other.tool_calls if s.executed] == []


# --- the third round: MLflow, Haystack + OpenLLMetry, smolagents' CodeAgent --------------------


def test_mlflow_capture_reads_calls_results_and_the_handled_error() -> None:
    expected = json.loads((TRACES / "langgraph-mlflow" / "tool_error.expected.json").read_text())
    trajectory = captured("langgraph-mlflow", "tool_error")
    calls = [(s.name, s.args, s.error is not None) for s in trajectory.tool_calls]
    wanted = [(c["tool"], c["args"], c["error"] is not None) for c in expected["actual_trajectory"]]
    assert calls == wanted
    assert trajectory.tool_calls[0].result == expected["actual_trajectory"][0]["result"]
    assert (trajectory.agent, trajectory.output) == (
        "music_store_support",
        expected["final_responses"][0],
    )


def test_an_mlflow_attribute_is_read_only_on_a_span_mlflow_typed() -> None:
    # The bare keys MLflow's LangChain autolog writes (``tool_call_id``, ``metadata``) mean
    # nothing on a span without ``mlflow.spanType``.
    plain = {"openinference.span.kind": "TOOL", "tool.name": "t", "tool_call_id": '"c9"'}
    assert run(genai_agent(), span(2, "t", plain, parent=1)).tool_calls[0].call_id is None


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Failed to invoke Tool `refund` with parameters {}. Error: RefundWindowExpired: x", True),
        ("Failed to find a cheaper flight. Here are the options: A, B", False),
    ],
)
def test_a_failed_to_sentence_followed_by_an_error_is_an_error(text: str, error: bool) -> None:
    assert (parse_result(text).error is not None) is error


def test_the_reply_comes_from_the_layer_that_recorded_the_exchange() -> None:
    expected = json.loads((TRACES / "haystack-traceloop" / "correct.expected.json").read_text())
    assert captured("haystack-traceloop", "correct").output == expected["final_responses"][0]


def test_a_quick_mapped_tool_call_recorded_with_no_duration_is_still_a_call() -> None:
    mappings = Mappings(tool_span=ToolSpanRule(name_prefix="tool."), tool_name="app.tool")
    trajectory = run(
        genai_agent(),
        span(2, "tool.checkout", {"app.tool": "checkout"}, parent=1, start=2000, end=5000),
        span(3, "tool.price", {"app.tool": "price"}, parent=2, start=3000, end=3000),
        mappings=mappings,
    )
    assert [step.name for step in trajectory.tool_calls] == ["checkout", "price"]


# --- found by the third review ------------------------------------------------------------------


def test_a_positional_context_argument_leaves_the_models_request_as_the_arguments() -> None:
    recorded = json.dumps({"args": ["<RunContext>"], "kwargs": {"q": 1}})
    trajectory = run(
        genai_agent(),
        genai_chat(2, [{"id": "c1", "name": "lookup", "arguments": {"q": 1}}]),
        genai_tool(3, "lookup", recorded, call_id="c1"),
    )
    assert trajectory.tool_calls[0].args == {"q": 1}


def test_definitions_that_leave_an_injected_parameter_out_do_not_shift_positions() -> None:
    properties = {"q": {"type": "integer"}, "limit": {"type": "integer"}}
    schema = {"type": "object", "properties": properties}
    definitions = json.dumps([{"type": "function", "name": "lookup", "parameters": schema}])
    chat = genai_chat(2, [{"id": "c1", "name": "lookup", "arguments": {"q": 1}}])
    chat = chat._replace(attributes={**chat.attributes, "gen_ai.tool.definitions": definitions})
    recorded = json.dumps({"args": ["<RunContext>", 1], "kwargs": {}})
    trajectory = run(genai_agent(), chat, genai_tool(3, "lookup", recorded, call_id="c1"))
    assert trajectory.tool_calls[0].args != {"q": "<RunContext>", "limit": 1}
    # Without a request, the definitions bind (smolagents' code agent writes no request).
    code = json.dumps({"args": [7], "kwargs": {}})
    parameters = json.dumps({"q": {"type": "integer"}})
    call = {"openinference.span.kind": "TOOL", "tool.name": "lookup", "input.value": code,
            "tool.parameters": parameters}  # fmt: skip
    assert run(genai_agent(), span(2, "lookup", call, parent=1)).tool_calls[0].args == {"q": 7}


@pytest.mark.parametrize("own_id", [True, False])
def test_a_function_response_printed_as_a_python_repr_is_unwrapped(own_id: bool) -> None:
    printed = "{'id': 'c1', 'name': 'lookup', 'response': {'total': 2.97}}"
    tool = genai_tool(2, "lookup", "{}", call_id="c1" if own_id else None, **{RESULT: printed})
    assert run(genai_agent(), tool).tool_calls[0].result == {"total": 2.97}


@pytest.mark.parametrize("recorded", ["Done", "1042", "e"])
def test_a_run_output_the_reply_merely_contains_is_not_the_answer(recorded: str) -> None:
    reply = 'Thought: ok\n<code>\nfinal_answer("Done! Refund 1042 issued.")\n'
    agent = {"openinference.span.kind": "AGENT", "agent.name": "a", "output.value": recorded}
    llm = {"openinference.span.kind": "LLM", "llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.content": reply}  # fmt: skip
    trajectory = run(span(1, "a.run", agent), span(2, "LLM", llm, parent=1))
    assert trajectory.output == reply
    quoted = agent | {"output.value": "Done! Refund 1042 issued."}
    assert run(span(1, "a.run", quoted), span(2, "LLM", llm, parent=1)).output == (
        "Done! Refund 1042 issued."
    )


def test_an_unnamed_sub_agent_beside_the_agents_own_model_call_is_a_hop() -> None:
    bare = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": "a-7"}
    trajectory = run(
        genai_agent(),
        genai_chat(2, [], text="delegating"),  # the named agent's own work, beside it
        span(3, "invoke_agent", bare, parent=1),
        genai_chat(4, [], parent=3, text="found"),
    )
    assert [step.kind for step in trajectory.steps].count(StepKind.AGENT) == 1


def test_dspy_mlflow_capture_names_tools_and_narrows_input_and_answer() -> None:
    # MLflow's DSPy autolog: tool spans ``Tool.<name>`` with the bare name in ``name``; the
    # model's output a list of completion texts; input and answer the fields of the run's
    # recorded objects (``mlflow.spanInputs`` / ``spanOutputs``) found in the model's text.
    expected = json.loads((TRACES / "dspy-mlflow" / "correct.expected.json").read_text())
    trajectory = captured("dspy-mlflow", "correct")
    wanted = [call["tool"] for call in expected["actual_trajectory"]]
    assert [step.name for step in trajectory.tool_calls if step.executed] == wanted
    assert trajectory.input == expected["user_inputs"][0]
    assert trajectory.output == expected["final_responses"][0]
