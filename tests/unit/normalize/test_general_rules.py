"""The general reconstruction rules (issue 13 §1, docs/adr/0017-general-reconstruction.md):
each on a minimal hand-made trace, and on the real capture that needs it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.captures import TRACES, captured
from support.span_kit import genai_agent, genai_chat, genai_tool, oi, run, span

from collector.core.records import CompletionReason, SpanEvent, StatusCode, Trace
from collector.decode import decode_json
from collector.normalize import ATTRIBUTE_SELECTOR, Mappings, normalize
from collector.normalize.arguments import parse_arguments
from collector.normalize.results import parse_result
from evaluators.trajectory import StepKind, Trajectory

ARGS = "gen_ai.tool.call.arguments"


def tool_attrs(name: str, **extra: Any) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **extra}


# --- one call, two instrumentation layers -----------------------------------------------


OUTER = {
    "tool.name": "refund",
    "input.value": '{"id": 9}',
    "output.value": "Error executing tool refund: expired",
}


def test_a_tool_span_under_a_same_tool_span_through_plumbing_is_one_step() -> None:
    trajectory = run(
        genai_agent(),
        oi(2, "refund", "TOOL", parent=1, **OUTER),
        span(3, "MCP send tools/call refund", {"mcp.method.name": "tools/call"}, parent=2),
        span(4, "tools/call refund", tool_attrs("refund", **{"error.type": "e"}), parent=3),
    )
    (step,) = trajectory.tool_calls
    assert (step.name, step.args, step.span_id) == ("refund", {"id": 9}, f"{2:016x}")
    assert step.error is not None and "expired" in step.error  # the inner layer's flag
    assert "duplicate_instrumentation" in trajectory.gaps


def test_layers_of_a_call_with_other_arguments_are_two_calls() -> None:
    trajectory = run(
        genai_agent(),
        span(2, "outer", tool_attrs("search", **{ARGS: '{"q": 1}'}), parent=1),
        span(3, "inner", tool_attrs("search", **{ARGS: '{"q": 2}'}), parent=2),
    )
    assert [step.args for step in trajectory.tool_calls] == [{"q": 1}, {"q": 2}]


def test_a_model_span_under_a_model_span_is_one_call_with_the_inner_tokens() -> None:
    chat = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 70}
    trajectory = run(
        genai_agent(),
        oi(2, "LM.__call__", "LLM", parent=1),
        span(3, "adapter", {"openinference.span.kind": "CHAIN"}, parent=2),
        span(4, "chat m", chat, parent=3),
    )
    (llm,) = trajectory.steps_of([StepKind.LLM])
    assert llm.input_tokens == 70 and llm.span_id == f"{2:016x}"


def test_mcp_capture_has_one_step_per_call_and_the_refund_error() -> None:
    trajectory = captured("mcp-tools-openai-agents", "tool_error")
    names = [step.name for step in trajectory.tool_calls]
    assert names == ["lookup_invoice", "lookup_track", "refund"]
    assert "RefundWindowExpired" in (trajectory.tool_calls[-1].error or "")
    assert trajectory.steps_of([StepKind.OTHER]) == ()  # MCP list/send spans: plumbing


# --- argument envelopes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "recorded",
    [
        '{"args": [], "kwargs": {"invoice_id": 9}}',
        '{"kwargs": {"invoice_id": 9}}',
        '{"input": {"invoice_id": 9}, "config": {"tags": []}, "run_manager": null}',
    ],
)
def test_call_envelopes_are_unwrapped_and_the_text_kept(recorded: str) -> None:
    arguments = parse_arguments(recorded)
    assert arguments.value == {"invoice_id": 9} and arguments.raw == recorded


def test_positional_arguments_or_real_parameters_are_not_an_envelope() -> None:
    assert parse_arguments('{"args": [1], "kwargs": {"a": 2}}').value == {
        "args": [1],
        "kwargs": {"a": 2},
    }
    assert parse_arguments('{"input": {"q": 1}, "limit": 3}').value == {
        "input": {"q": 1},
        "limit": 3,
    }


def test_a_request_for_the_outer_object_keeps_a_parameter_named_input() -> None:
    request = [{"id": "c1", "name": "run_query", "arguments": {"input": {"q": 1}}}]
    trajectory = run(
        genai_agent(),
        genai_chat(2, request),
        genai_tool(3, "run_query", '{"input": {"q": 1}}', call_id="c1"),
    )
    assert trajectory.tool_calls[0].args == {"input": {"q": 1}}


def test_dspy_capture_arguments_come_out_of_the_kwargs_envelope() -> None:
    trajectory = captured("dspy-openinference", "correct")
    assert trajectory.tool_calls[0].args == {"customer_id": 17, "invoice_id": 1042}
    assert (
        trajectory.tool_calls[0].raw_args == '{"kwargs": {"customer_id": 17, "invoice_id": 1042}}'
    )


SMOL_SCHEMA = json.dumps({"invoice_id": {"type": "integer"}, "track_id": {"type": "integer"}})


@pytest.mark.parametrize(
    ("recorded", "parameters", "args"),
    [  # a code agent's model wrote ``refund(9, track_id=3)`` (smolagents' Tool.__call__)
        ({"args": [9], "sanitize_inputs_outputs": False, "kwargs": {"track_id": 3}},
         SMOL_SCHEMA, {"invoice_id": 9, "track_id": 3}),
        ({"args": [9, 3], "kwargs": {}},
         json.dumps({"type": "object", "properties": json.loads(SMOL_SCHEMA)}),
         {"invoice_id": 9, "track_id": 3}),
        # without the names, or with too few of them, the call stays as recorded
        ({"args": [9, 3], "kwargs": {}}, None, {"args": [9, 3], "kwargs": {}}),
        ({"args": [9, 3, 1], "kwargs": {}}, SMOL_SCHEMA, {"args": [9, 3, 1], "kwargs": {}}),
        # agno records the arguments themselves under tool.parameters: no names there
        ({"args": [9, 3], "kwargs": {}}, json.dumps({"invoice_id": 9, "track_id": 3}),
         {"args": [9, 3], "kwargs": {}}),
    ],
)  # fmt: skip
def test_positional_values_of_a_recorded_call_bind_to_the_declared_parameters(
    recorded: dict[str, Any], parameters: str | None, args: dict[str, Any]
) -> None:
    attrs = {"tool.name": "refund", "input.value": json.dumps(recorded)}
    if parameters is not None:
        attrs["tool.parameters"] = parameters
    trajectory = run(genai_agent(), oi(2, "SimpleTool", "TOOL", parent=1, **attrs))
    assert trajectory.tool_calls[0].args == args


# --- framework-internal tools --------------------------------------------------------------


def test_a_final_answer_tool_is_a_control_step_and_gives_the_output() -> None:
    trajectory = run(
        genai_agent(),
        genai_tool(2, "lookup", '{"q": 1}', call_id=None),
        genai_tool(3, "final_answer", '{"answer": "It is on The Wall."}', call_id=None),
    )
    assert [step.name for step in trajectory.tool_calls] == ["lookup"]
    (control,) = trajectory.steps_of([StepKind.CONTROL])
    assert control.name == "final_answer"
    assert trajectory.output == "It is on The Wall."


def test_the_internal_tool_list_is_configurable() -> None:
    spans = (genai_agent(), genai_tool(2, "stop_loop", "{}", call_id=None))
    assert run(*spans).tool_calls[0].name == "stop_loop"
    mappings = Mappings(internal_tools=("stop_*",))
    assert run(*spans, mappings=mappings).steps_of([StepKind.CONTROL])[0].name == "stop_loop"


def answer_run(argument: str, *, then_chat: bool = False) -> Trajectory:
    """A run whose model calls an unlisted ``respond`` tool; the agent span records
    ``Refund issued.`` as the run's output (OpenInference ``output.value``)."""
    agent = genai_agent(**{"output.value": "Refund issued."})
    call = {"id": "c1", "name": "respond", "arguments": {"message": argument}}
    spans = [agent, genai_chat(2, [call]),
             genai_tool(3, "respond", json.dumps({"message": argument}), call_id="c1")]  # fmt: skip
    if then_chat:
        spans.append(genai_chat(4, [], text="Refund issued."))
    return run(*spans)


def test_a_run_ending_on_a_tool_that_hands_back_its_output_ends_on_a_control_step() -> None:
    trajectory = answer_run("Refund issued.")
    assert trajectory.tool_calls == ()
    assert [step.name for step in trajectory.steps_of([StepKind.CONTROL])] == ["respond"]
    assert trajectory.output == "Refund issued."


@pytest.mark.parametrize("then_chat", [False, True])
def test_a_last_tool_is_a_tool_call_without_the_evidence(then_chat: bool) -> None:
    argument = "Refund issued." if then_chat else "Refund issued for invoice 9."
    trajectory = answer_run(argument, then_chat=then_chat)
    assert [step.name for step in trajectory.tool_calls] == ["respond"]
    assert trajectory.steps_of([StepKind.CONTROL]) == ()


def test_dspy_capture_finish_is_a_control_step() -> None:
    trajectory = captured("dspy-openinference", "correct")
    assert "finish" not in [step.name for step in trajectory.tool_calls]
    assert [step.name for step in trajectory.steps_of([StepKind.CONTROL])] == ["finish"]


# --- namespaced and callable tool names ----------------------------------------------------


def test_tool_names_are_kept_as_recorded_and_callable_spans_named_after_the_callable() -> None:
    trajectory = run(
        genai_agent(),
        span(2, "mcp__store__refund", tool_attrs("mcp__store__refund"), parent=1),
        oi(3, "lookup.__call__", "TOOL", parent=1),
    )
    assert [step.name for step in trajectory.tool_calls] == ["mcp__store__refund", "lookup"]


# --- input and output from the model's messages --------------------------------------------


def test_input_and_output_from_the_model_calls_when_no_run_span_has_them() -> None:
    user = [
        {"role": "system", "parts": [{"type": "text", "content": "You are a shop."}]},
        {"role": "user", "parts": [{"type": "text", "content": "refund 9"}]},
    ]
    first = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(user)}
    reply = [{"role": "assistant", "parts": [{"type": "text", "content": "Refunded."}]}]
    last = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(reply)}
    trajectory = run(span(1, "support_turn"), span(2, "chat", first, parent=1),
                     span(3, "chat", last, parent=1))  # fmt: skip
    assert (trajectory.input, trajectory.output) == ("refund 9", "Refunded.")


@pytest.mark.parametrize("printed", ["Refunded.\n", "  Refunded.\n\n"])
def test_a_run_answer_printed_with_a_newline_is_the_model_reply(printed: str) -> None:
    reply = [{"role": "assistant", "parts": [{"type": "text", "content": printed}]}]
    agent = genai_agent(**{"gen_ai.output.messages": json.dumps(reply)})
    trajectory = run(agent, genai_chat(2, [], text="Refunded."))
    assert trajectory.output == "Refunded."


def test_a_run_answer_other_than_the_model_reply_is_kept() -> None:
    reply = [{"role": "assistant", "parts": [{"type": "text", "content": "Refunded, id 7.\n"}]}]
    agent = genai_agent(**{"gen_ai.output.messages": json.dumps(reply)})
    trajectory = run(agent, genai_chat(2, [], text="Refunded."))
    assert trajectory.output == "Refunded, id 7.\n"


def test_a_templated_prompt_yields_the_run_field_it_contains() -> None:
    root = {
        "openinference.span.kind": "CHAIN",
        "input.value": json.dumps({"input_args": {"question": "refund 9", "history": "[]"}}),
        "output.value": json.dumps({"reasoning": "checked", "response": "Refunded."}),
    }
    prompt = json.dumps([{"role": "user", "content": "[[ ## question ## ]]\nrefund 9\n"}])
    reply = "[[ ## reasoning ## ]]\nchecked\n[[ ## response ## ]]\nRefunded.\n"
    llm = {"input.value": prompt, "llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.content": reply}  # fmt: skip
    trajectory = run(span(1, "Module.forward", root), oi(2, "LM", "LLM", parent=1, **llm))
    assert (trajectory.input, trajectory.output) == ("refund 9", "Refunded.")


def code_answer_run(recorded: str) -> Trajectory:
    """A code agent's run: the model's last reply is reasoning and code that hands the
    answer back; the agent span records ``recorded`` as the run's output."""
    reply = 'Thought: I can answer.\n<code>\nfinal_answer("Refunded, id 7.")\n'
    agent = oi(1, "agent.run", "AGENT", **{"input.value": "refund 9", "output.value": recorded})
    llm = {"llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.content": reply}  # fmt: skip
    return run(agent, oi(2, "Model.generate", "LLM", parent=1, **llm))


@pytest.mark.parametrize(
    ("recorded", "output"),
    [
        ("Refunded, id 7.", "Refunded, id 7."),  # the part of the reply handed back
        ("Refund refused.", 'Thought: I can answer.\n<code>\nfinal_answer("Refunded, id 7.")\n'),
    ],
)
def test_a_run_output_inside_the_last_reply_is_the_answer(recorded: str, output: str) -> None:
    assert code_answer_run(recorded).output == output


def test_smolagents_code_agent_capture_answers_the_final_answer_text() -> None:
    trajectory = captured("smolagents-code-openinference", "correct")
    assert trajectory.output == (
        "Done! I refunded one copy of 'Comfortably Numb' ($0.99) from invoice 1042. "
        "Refund id RF-1042-3158."
    )


def test_content_block_replies_are_read() -> None:
    trajectory = captured("anthropic-client-openinference", "correct")
    assert trajectory.output is not None and trajectory.output.startswith("Done")


# --- errors reported only inside results ---------------------------------------------------


@pytest.mark.parametrize(
    ("recorded", "message"),
    [
        ('{"error": "RefundWindowExpired: too late"}', "RefundWindowExpired: too late"),
        ('{"content": [{"type": "text", "text": "too late"}], "isError": true}', "too late"),
        ("ToolResult(status='error', content='too late')", "too late"),
        ("Error executing tool refund: too late", "Error executing tool refund: too late"),
        ("StoreError: too late", "StoreError: too late"),
    ],
)
def test_errors_reported_inside_results_in_any_textual_form(recorded: str, message: str) -> None:
    assert parse_result(recorded).error == message


@pytest.mark.parametrize("recorded", ['{"errors_seen": 0}', "All good: done", '{"ok": true}'])
def test_ordinary_results_are_no_errors(recorded: str) -> None:
    assert parse_result(recorded).error is None


def test_a_single_text_content_block_is_unwrapped() -> None:
    assert parse_result('{"type": "text", "text": "{\\"total\\": 2}"}').value == {"total": 2}


# --- framework retries ---------------------------------------------------------------------


def failed_tool(n: int, name: str, args: str) -> Any:
    attributes = tool_attrs(name, **{ARGS: args})
    return span(n, f"execute_tool {name}", attributes, parent=1, status=StatusCode.ERROR)


def test_a_retried_call_is_one_logical_call_with_its_attempts() -> None:
    trajectory = run(
        genai_agent(),
        failed_tool(2, "refund", '{"id": 9}'),
        genai_tool(3, "refund", '{"id": 9}', call_id=None),
    )
    (step,) = trajectory.tool_calls
    assert (step.attempts, step.error, step.span_id) == (2, None, f"{3:016x}")


def test_an_attempt_counter_marks_retries_even_after_a_success() -> None:
    trajectory = run(
        genai_agent(),
        genai_tool(2, "poll", '{"id": 9}', call_id=None),
        genai_tool(3, "poll", '{"id": 9}', call_id=None, **{"tool.run_attempts": 2}),
    )
    assert [step.attempts for step in trajectory.tool_calls] == [2]


def test_a_repeated_call_decided_by_the_model_is_two_calls() -> None:
    trajectory = run(
        genai_agent(),
        failed_tool(2, "refund", '{"id": 9}'),
        genai_chat(3, []),
        genai_tool(4, "refund", '{"id": 9}', call_id=None),
    )
    assert [step.attempts for step in trajectory.tool_calls] == [1, 1]


# --- trajectories recorded only as messages ------------------------------------------------


def _chat(n: int, history: list[dict[str, Any]], calls: list[dict[str, Any]]) -> Any:
    parts = [{"type": "tool_call", **call} for call in calls] or [{"type": "text", "content": "ok"}]
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
    }
    return span(n, "chat", attributes, parent=1)


def test_calls_answered_in_the_next_model_call_history_are_rebuilt() -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "refund 9"}]}
    call = {"id": "c1", "name": "refund", "arguments": {"id": 9}}
    assistant = {"role": "assistant", "parts": [{"type": "tool_call", **call}]}
    answer = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                         "response": '{"error": "expired"}'}]}  # fmt: skip
    trajectory = run(
        span(1, "support_turn"), _chat(2, [user], [call]), _chat(3, [user, assistant, answer], [])
    )
    (step,) = trajectory.tool_calls
    assert (step.executed, step.source, step.error, step.span_id) == (
        True,
        "messages",
        "expired",
        "",
    )


def test_chat_request_histories_are_read_by_position_when_ids_repeat() -> None:
    request = [{"id": "lookup_0", "name": "lookup", "arguments": {"q": "b"}}]
    old = [
        {"role": "assistant", "tool_calls": [{"id": "lookup_0", "function": {
            "name": "lookup", "arguments": '{"q": "a"}'}}]},
        {"role": "tool", "tool_call_id": "lookup_0", "content": '{"hit": "a"}'},
    ]  # fmt: skip
    new = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "lookup_0", "name": "lookup",
                                           "input": {"q": "b"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "lookup_0",
                                      "content": '{"hit": "b"}', "is_error": False}]},
    ]  # fmt: skip
    asks = {"openinference.span.kind": "LLM", **_oi_calls(request)}
    later = {"openinference.span.kind": "LLM", "input.value": json.dumps({"messages": old + new})}
    trajectory = run(
        span(1, "turn"), span(2, "llm", asks, parent=1), span(3, "llm", later, parent=1)
    )
    assert [(s.name, s.result, s.source) for s in trajectory.tool_calls] == [
        ("lookup", {"hit": "b"}, "messages")
    ]


def _oi_calls(calls: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"llm.output_messages.0.message.role": "assistant"}
    for j, call in enumerate(calls):
        prefix = f"llm.output_messages.0.message.tool_calls.{j}.tool_call."
        out[prefix + "id"] = call["id"]
        out[prefix + "function.name"] = call["name"]
        out[prefix + "function.arguments"] = json.dumps(call["arguments"])
    return out


def test_a_call_never_answered_stays_unexecuted() -> None:
    call = {"id": "c1", "name": "refund", "arguments": {"id": 9}}
    trajectory = run(span(1, "support_turn"), _chat(2, [], [call]))
    assert [(s.executed, s.source) for s in trajectory.tool_calls] == [(False, None)]


@pytest.mark.parametrize(
    "framework", ["anthropic-client-openinference", "haystack-openinference",
                  "google-genai-afc-chat-otel"]
)  # fmt: skip
def test_client_only_captures_rebuild_every_call_with_its_error(framework: str) -> None:
    trajectory = captured(framework, "tool_error")
    assert all(step.executed and step.source == "messages" for step in trajectory.tool_calls)
    assert "RefundWindowExpired" in (trajectory.tool_calls[-1].error or "")


def test_events_are_read_like_attributes() -> None:
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])
    details = SpanEvent("gen_ai.client.inference.operation.details", 0,
                        {"gen_ai.input.messages": messages})  # fmt: skip
    chat = span(2, "chat", {"gen_ai.operation.name": "chat"}, parent=1, events=(details,))
    assert run(span(1, "turn"), chat).input == "hi"


# --- stray traces ---------------------------------------------------------------------------


def test_a_stray_handshake_trace_is_no_run() -> None:
    trajectory = captured("mcp-tools-openai-agents", "correct")
    assert trajectory.skip_reason is None
    expected = json.loads((TRACES / "mcp-tools-openai-agents/correct.expected.json").read_text())
    (stray,) = expected["stray_traces"]
    spans = [
        span
        for line in (TRACES / "mcp-tools-openai-agents/correct.jsonl").read_bytes().splitlines()
        for span in decode_json(line, ATTRIBUTE_SELECTOR).spans
        if span.trace_id.hex() == stray
    ]
    trace = Trace(spans[0].trace_id, tuple(spans), CompletionReason.END_OF_INPUT, 0, 0)
    assert normalize(trace).skip_reason == "no_agent_spans"


# --- ReAct transcripts --------------------------------------------------------------------


def test_a_react_transcript_gives_the_calls_and_their_observations() -> None:
    def llm(n: int, prompt: str, reply: str) -> Any:
        messages = json.dumps([{"role": "user", "content": prompt}])
        return oi(n, "llm", "LLM", parent=1, **{
            "input.value": messages,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": reply,
        })  # fmt: skip

    asks = 'Thought: check it\nAction: lookup_invoice\nAction Input: {"invoice_id": 9}'
    seen = f'refund 9\n{asks}\nObservation: {{"total": 2}}'
    trajectory = run(
        span(1, "crew"),
        llm(2, "refund 9", asks),
        llm(3, seen, "Thought: done\nFinal Answer: Refunded."),
    )
    (step,) = trajectory.tool_calls
    assert (step.name, step.args, step.result, step.source) == (
        "lookup_invoice",
        {"invoice_id": 9},
        {"total": 2},
        "messages",
    )
    assert step.raw_args == '{"invoice_id": 9}'


def test_a_react_call_that_a_tool_span_ran_is_joined_to_it() -> None:
    reply = 'Action: refund\nAction Input: {"id": 9}'
    ask = oi(2, "llm", "LLM", parent=1, **{"llm.output_messages.0.message.content": reply})
    trajectory = run(genai_agent(), ask, genai_tool(3, "refund", '{"id": 9}', call_id=None))
    assert [(s.name, s.executed, s.source) for s in trajectory.tool_calls] == [
        ("refund", True, None)
    ]


# --- gaps: what the instrumentation did not record ------------------------------------------


def test_a_failed_call_is_no_evidence_that_results_are_recorded() -> None:
    # AutoGen's own tracing: tool spans with a name, a call id and a status, no text.
    failed = tool_attrs("refund", **{"error.type": "StoreError"})
    trajectory = run(
        genai_agent(),
        span(2, "execute_tool lookup", tool_attrs("lookup"), parent=1),
        span(3, "execute_tool refund", failed, parent=1, status=StatusCode.ERROR),
    )
    assert [step.error is not None for step in trajectory.tool_calls] == [False, True]
    assert {"tool_args", "tool_results", "input", "output", "content"} <= set(trajectory.gaps)


def test_every_call_failed_is_no_results_gap() -> None:
    failed = tool_attrs("refund", **{ARGS: '{"id": 9}', "error.type": "StoreError"})
    trajectory = run(genai_agent(), span(2, "t", failed, parent=1, status=StatusCode.ERROR))
    assert "tool_results" not in trajectory.gaps and "content" not in trajectory.gaps


def test_a_run_without_model_calls_that_recorded_arguments_has_content() -> None:
    trajectory = run(genai_agent(), span(2, "t", tool_attrs("lookup", **{ARGS: "{}"}), parent=1))
    assert "content" not in trajectory.gaps and "tool_args" not in trajectory.gaps
