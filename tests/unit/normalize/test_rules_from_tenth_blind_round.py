"""Rules from the tenth round of blind captures (ADR 0017, session 21): minimal traces of
the shapes the captures showed, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import run, span

from collector.core.records import Span
from collector.normalize.results import ToolResult, parse_result
from evaluators.trajectory import StepKind

# MLflow's LlamaIndex autolog, a later turn of a conversation: the request being prepared
# holds the earlier rounds, the earlier answer among them.


def mlflow_span(  # noqa: PLR0917 - the span's fields, in the order a tree reads
    n: int, name: str, kind: str, parent: int, inputs: Any, outputs: Any
) -> Span:
    attributes = {"mlflow.spanType": json.dumps(kind), "mlflow.spanInputs": json.dumps(inputs),
                  "mlflow.spanOutputs": json.dumps(outputs)}  # fmt: skip
    return span(n, name, attributes, parent=parent)


def said(role: str, words: str) -> dict[str, Any]:
    blocks = [{"block_type": "text", "text": words}]
    return {"role": role, "additional_kwargs": {}, "blocks": blocks}


def test_mlflow_a_prepared_request_holding_an_earlier_answer_answers_nothing() -> None:
    """The earlier round's answer in a prepared request is no reply of this turn: the
    preparation folds into the call it prepares (one model step, not two), and the turn's
    input is the call's last user message (the run records only a Python repr)."""
    earlier = [said("system", "Be brief."), said("user", "Where is order 7?"),
               said("assistant", "It shipped."), said("user", "And order 8?")]  # fmt: skip
    trajectory = run(
        mlflow_span(1, "Agent.run", "AGENT", 0, "{'user_msg': 'And order 8?'}", {}),
        mlflow_span(2, "Model._prepare_chat_with_tools", "LLM", 1, {"tools": []},
                    {"messages": earlier, "tool_choice": "auto"}),
        mlflow_span(3, "Model.achat", "CHAT_MODEL", 1, {"messages": earlier},
                    {"message": said("assistant", "It is packed."), "raw": {}}),
    )  # fmt: skip
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM]
    assert (trajectory.input, trajectory.output) == ("And order 8?", "It is packed.")


def test_mlflow_a_reply_list_ending_in_the_answer_is_still_the_reply() -> None:
    """(The guard above reads only the list's last message: a conversation returned with
    the answer last is a reply.)"""
    conversation = [said("user", "Where is order 7?"), said("assistant", "It shipped.")]
    trajectory = run(
        mlflow_span(1, "Agent.run", "AGENT", 0, {"user_msg": "Where is order 7?"}, {}),
        mlflow_span(2, "Model.chat", "CHAT_MODEL", 1, {"messages": conversation[:1]},
                    conversation),
    )  # fmt: skip
    assert trajectory.output == "It shipped."


# A tool call rebuilt from the model's messages that no span ran has no timing.

LOOKUP = {"name": "lookup", "arguments": '{"order": 7}'}
CALLING = {"role": "assistant", "content": None,
           "tool_calls": [{"id": "c1", "type": "function", "function": LOOKUP}]}  # fmt: skip
ANSWERED = {"role": "tool", "tool_call_id": "c1", "content": "shipped"}


def genai_chat(n: int, request: list[Any], reply: dict[str, Any]) -> Span:
    return span(n, "chat m", {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
        "gen_ai.input.messages": json.dumps(request),
        "gen_ai.output.messages": json.dumps([reply])}, parent=1)  # fmt: skip


def test_a_call_no_span_ran_is_a_tool_timings_gap() -> None:
    ask = {"role": "user", "content": "Where is order 7?"}
    done = {"role": "assistant", "content": "It shipped."}
    untimed = run(
        span(1, "invoke_agent support", {"gen_ai.operation.name": "invoke_agent"}),
        genai_chat(2, [ask], CALLING),
        genai_chat(3, [ask, CALLING, ANSWERED], done),
    )
    (call,) = untimed.tool_calls
    assert (call.name, call.span_id, call.duration_s) == ("lookup", "", 0.0)
    assert "tool_timings" in untimed.gaps
    timed = run(
        span(1, "invoke_agent support", {"gen_ai.operation.name": "invoke_agent"}),
        genai_chat(2, [ask], CALLING),
        span(4, "execute_tool lookup", {"gen_ai.operation.name": "execute_tool",
                                        "gen_ai.tool.name": "lookup",
                                        "gen_ai.tool.call.id": "c1"}, parent=1),
        genai_chat(3, [ask, CALLING, ANSWERED], done),
    )  # fmt: skip
    assert timed.tool_calls[0].span_id and "tool_timings" not in timed.gaps


def test_a_span_labelled_by_its_kind_that_names_the_tool_times_the_call() -> None:
    """Rule 47, a span whose own name is a label ("Function: {name}", a template) and
    whose ``name`` attribute names the call: the call's span, as one named after it."""
    ask = {"role": "user", "content": "Where is order 7?"}
    done = {"role": "assistant", "content": "It shipped."}

    def turn(label_names: str) -> list[Span]:
        return [
            span(1, "invoke_agent support", {"gen_ai.operation.name": "invoke_agent"}),
            genai_chat(2, [ask], CALLING),
            span(5, "Function: {name}", {"name": label_names}, parent=1, start=2_500, end=2_900),
            genai_chat(3, [ask, CALLING, ANSWERED], done),
        ]

    genai_times = {2: (1_000, 2_000), 3: (3_000, 4_000)}
    spans = [s._replace(start_unix_nano=genai_times[n][0], end_unix_nano=genai_times[n][1])
             if (n := int.from_bytes(s.span_id, "big")) in genai_times else s
             for s in turn("lookup")]  # fmt: skip
    (call,) = run(*spans).tool_calls
    assert (call.span_id, call.duration_s) == (span(5, "x").span_id.hex(), 400e-9)
    other = [s._replace(attributes={"name": "refund"}) if s.name.startswith("Function") else s
             for s in spans]  # fmt: skip
    (call,) = run(*other).tool_calls
    assert call.span_id == ""  # (a span naming another tool is not this call's)


# A tool span named after the tool behind a label, with no call id (langfuse-haystack's
# "tool - <tool>").


def labelled_tool_run(tool_name: str, arguments: str) -> list[Span]:
    ask = {"role": "user", "content": "Where is order 7?"}
    done = {"role": "assistant", "content": "It shipped."}
    return [
        span(1, "invoke_agent support", {"gen_ai.operation.name": "invoke_agent"}),
        genai_chat(2, [ask], CALLING),
        span(5, tool_name, {"gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.call.arguments": arguments,
                            "gen_ai.tool.call.result": "shipped"}, parent=1),
        genai_chat(3, [ask, CALLING, ANSWERED], done),
    ]  # fmt: skip


def test_a_tool_span_named_by_a_label_and_the_tool_runs_the_call_it_got_the_arguments_of() -> None:
    (call,) = run(*labelled_tool_run("tool - lookup", '{"order": 7}')).tool_calls
    assert (call.name, call.call_id, call.executed, call.span_id) == (
        "lookup",
        "c1",
        True,
        span(5, "x").span_id.hex(),
    )


def test_a_label_without_the_arguments_or_a_longer_name_is_another_call() -> None:
    """A wrapper may share the tool's name or its arguments, not both; ``my_lookup`` is
    another tool: the span stays a call of its own, and the requested call is the one the
    model's history answered (rebuilt, no span)."""
    for name, arguments in (
        ("tool - lookup", '{"order": 8}'),
        ("tool - my_lookup", '{"order": 7}'),
    ):
        calls = {c.name: c for c in run(*labelled_tool_run(name, arguments)).tool_calls}
        assert set(calls) == {name, "lookup"}, name
        assert calls[name].call_id is None and calls["lookup"].call_id == "c1", name
        assert calls["lookup"].span_id == "", name


# OpenInference's vocabulary under GenAI names (traceAI's "fi" convention): the kind in
# gen_ai.span.kind, the messages flattened under gen_ai.input/output.messages.<i>.


def fi_span(n: int, name: str, kind: str, parent: int, **attributes: Any) -> Span:
    return span(n, name, {"gen_ai.span.kind": kind, **attributes}, parent=parent)


def fi_turn(kind_of_agent: str = "AGENT") -> list[Span]:
    asked = "gen_ai.input.messages.1.message."
    called = "gen_ai.output.messages.0.message.tool_calls.0.tool_call."
    return [
        fi_span(1, "support", kind_of_agent, 0, **{"graph.node.id": "support"}),
        fi_span(2, "response", "LLM", 1, **{
            asked + "role": "user", asked + "content": "Where is order 7?",
            "gen_ai.output.messages.0.message.role": "assistant",
            called + "id": "c1", called + "function.name": "lookup",
            called + "function.arguments": '{"order": 7}', "gen_ai.request.model": "m"}),
        fi_span(3, "lookup", "TOOL", 1, **{"gen_ai.tool.name": "lookup",
                                            "input.value": '{"order": 7}',
                                            "output.value": "shipped"}),
        fi_span(4, "response", "LLM", 1, **{
            asked + "role": "user", asked + "content": "Where is order 7?",
            "gen_ai.output.messages.0.message.role": "assistant",
            "gen_ai.output.messages.0.message.contents.0.message_content.type": "text",
            "gen_ai.output.messages.0.message.contents.0.message_content.text": "It shipped.",
            "gen_ai.request.model": "m"}),
    ]  # fmt: skip


def test_openinference_attributes_under_genai_names_are_read() -> None:
    trajectory = run(*fi_turn())
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    (call,) = trajectory.tool_calls
    assert (call.name, call.call_id, call.args, call.result) == ("lookup", "c1", {"order": 7},
                                                                  "shipped")  # fmt: skip
    assert (trajectory.agent, trajectory.input, trajectory.output) == (
        "support",
        "Where is order 7?",
        "It shipped.",
    )


def test_a_genai_span_kind_outside_openinferences_vocabulary_types_nothing() -> None:
    spans = [
        s._replace(attributes={**s.attributes, "gen_ai.span.kind": "client"}) for s in fi_turn()
    ]
    assert run(*spans).steps == ()


# A record of the tool's execution around its return value (Agno's FunctionExecutionResult,
# recorded as its str(): a pydantic field repr).


def test_an_execution_record_is_unwrapped_to_what_the_tool_returned_or_its_failure() -> None:
    ok = "status='success' result={'order': 7, 'state': 'shipped'} error=None images=None"
    assert parse_result(ok) == ToolResult({"order": 7, "state": "shipped"}, None, None)
    failed = "status='failure' result=None error='WindowExpired: too late' images=None"
    assert parse_result(failed) == ToolResult(None, None, "WindowExpired: too late")
    as_repr = "FunctionExecutionResult(status='failed', result=None, error=None)"
    assert parse_result(as_repr) == ToolResult(None, None, "error")


def test_a_tools_own_status_object_in_json_is_its_result() -> None:
    """(A review's finding: a job-status tool returns these fields as its own value.)"""
    job = {"status": "failed", "result": None, "error": "card declined"}
    assert parse_result(json.dumps(job)) == ToolResult(job, None, None)
    done = {"status": "success", "result": {"rows": 3}, "error": None}
    assert parse_result(json.dumps(done)).value == done


def test_a_status_and_result_without_an_execution_records_shape_are_the_result() -> None:
    for value in ({"status": "shipped", "result": 7, "error": None},  # (not a success word)
                  {"status": "success", "result": 7},  # (no error field)
                  {"status": "success", "result": 7, "error": "partial"}):  # fmt: skip
        as_repr = " ".join(f"{key}={field!r}" for key, field in value.items())  # (str())
        assert parse_result(as_repr).value == value, value


def test_mlflow_a_reply_recording_its_call_only_as_a_block_requests_it() -> None:
    """LlamaIndex's ``ChatMessage`` may hold a requested call only as a ``tool_call`` block
    (not in ``additional_kwargs`` or the provider's raw answer)."""
    block = {"block_type": "tool_call", "tool_call_id": "c1", "tool_name": "lookup",
             "tool_kwargs": {"order": 7}}  # fmt: skip
    asking = {"role": "assistant", "additional_kwargs": {}, "blocks": [block]}
    trajectory = run(
        mlflow_span(1, "Agent.run", "AGENT", 0, {"user_msg": "Where is order 7?"}, {}),
        mlflow_span(2, "Model.achat", "CHAT_MODEL", 1, {"messages": [said("user", "Where?")]},
                    {"message": asking, "raw": {}}),
    )  # fmt: skip
    (call,) = trajectory.tool_calls
    assert (call.name, call.call_id, call.args, call.executed) == ("lookup", "c1", {"order": 7},
                                                                    False)  # fmt: skip


def test_a_kind_written_as_a_map_types_nothing_and_never_raises() -> None:
    """(Found by the fuzz test: a map value is unhashable, and a set lookup of it raised
    out of ``normalize``.)"""
    odd = {"k": "v"}
    spans = [
        span(1, "turn"),
        span(
            2,
            "chat m",
            {
                "gen_ai.operation.name": "chat",
                "langsmith.span.kind": odd,
                "gen_ai.completion": "[]",
            },
            parent=1,
        ),  # type: ignore[dict-item]
        span(3, "y", {"llm.request.type": odd}, parent=1),  # type: ignore[dict-item]
    ]
    assert [step.kind for step in run(*spans).steps] == [StepKind.LLM]


def test_a_span_that_ran_the_tools_function_by_the_code_attributes_times_the_call() -> None:
    """Rule 47: "Calling module.lookup", ``code.function`` = ``lookup`` (Logfire's
    ``@logfire.instrument``); a function of another name is another span's."""
    ask = {"role": "user", "content": "Where is order 7?"}
    done = {"role": "assistant", "content": "It shipped."}
    times = {2: (1_000, 2_000), 3: (3_000, 4_000)}

    def turn(function: str) -> list[Span]:
        spans = [
            span(1, "invoke_agent support", {"gen_ai.operation.name": "invoke_agent"}),
            genai_chat(2, [ask], CALLING),
            span(5, "Calling app.lookup", {"code.function": function}, parent=1,
                 start=2_500, end=2_900),
            genai_chat(3, [ask, CALLING, ANSWERED], done),
        ]  # fmt: skip
        return [s._replace(start_unix_nano=times[n][0], end_unix_nano=times[n][1])
                if (n := int.from_bytes(s.span_id, "big")) in times else s
                for s in spans]  # fmt: skip

    (call,) = run(*turn("app.lookup")).tool_calls
    assert call.span_id == span(5, "x").span_id.hex()
    (call,) = run(*turn("refund")).tool_calls
    assert call.span_id == ""


def test_a_redaction_placeholder_is_no_session_id_and_the_next_span_is_asked() -> None:
    scrubbed = {"session.id": "[Scrubbed due to 'session']"}
    chat = {"gen_ai.operation.name": "chat", "session.id": "s-1"}
    spans = [span(1, "turn", scrubbed), span(2, "chat m", chat, parent=1)]
    assert run(*spans).session_id == "s-1"
    assert run(span(1, "turn", {"session.id": "<redacted>"})).session_id is None
    assert run(span(1, "turn", {"session.id": "[REDACTED]"})).session_id is None
    thread = "<CAF+abc123@mail.example.com>"  # (an email thread's Message-ID is an id)
    assert run(span(1, "turn", {"session.id": thread})).session_id == thread
    assert run(span(1, "turn", {"session.id": "[42]"})).session_id == "[42]"


# AgentOps' OpenAI Agents SDK integration: a Responses-API function_call item flattened as
# a completion with only its calls; the tool's result as tool.result; a failed tool's
# error.type beside error.message, status OK.


def agentops_turn(tool_attributes: dict[str, Any]) -> list[Span]:
    called = "gen_ai.completion.0.tool_calls.0."
    return [
        span(1, "support.agent", {"agentops.span.kind": "agent", "agent.name": "support"}),
        span(2, "response", {"agentops.span.kind": "llm", "gen_ai.request.type": "chat",
                             "gen_ai.prompt.0.role": "user",
                             "gen_ai.prompt.0.content": "Where is order 7?",
                             called + "id": "fc_1", called + "name": "lookup",
                             called + "arguments": '{"order": 7}'}, parent=1),
        span(3, "lookup", {"agentops.span.kind": "tool", "tool.name": "lookup",
                           **tool_attributes}, parent=1),
        span(4, "response", {"agentops.span.kind": "llm", "gen_ai.request.type": "chat",
                             "gen_ai.completion.0.role": "assistant",
                             "gen_ai.completion.0.content": "It shipped."}, parent=1),
    ]  # fmt: skip


def test_a_flattened_completion_holding_only_calls_requests_them() -> None:
    (call,) = run(*agentops_turn({"tool.result": '{"state": "shipped"}'})).tool_calls
    assert (call.call_id, call.args, call.result) == ("fc_1", {"order": 7}, {"state": "shipped"})


def test_an_error_message_beside_its_type_is_the_error() -> None:
    failed = {"error.type": "AgentError", "error.message": "Error running tool (non-fatal)"}
    (call,) = run(*agentops_turn(failed)).tool_calls
    assert call.error == "AgentError: Error running tool (non-fatal)"
    (call,) = run(*agentops_turn({"error.type": "AgentError"})).tool_calls
    assert call.error == "AgentError"


def test_a_message_written_as_text_inside_an_output_envelope_is_read_as_a_result() -> None:
    """traceAI's LangChain tool spans: ``{"output": str(ToolMessage)}``, pydantic's field
    repr of the message the tool answered with (its call id, its error status)."""
    failed = "content='WindowExpired: too late' name='refund' tool_call_id='c9' status='error'"
    assert parse_result(json.dumps({"output": failed})) == ToolResult(
        "WindowExpired: too late", "c9", "WindowExpired: too late"
    )
    ok = "content='{\"state\": \"shipped\"}' name='lookup' tool_call_id='c1'"
    assert parse_result(json.dumps({"output": ok})) == ToolResult({"state": "shipped"}, "c1", None)
    assert parse_result(json.dumps({"output": "Done"})) == ToolResult("Done", None, None)


def test_a_run_without_a_model_call_says_so() -> None:
    """Every agent's answer comes from a model call: a run recording none (MLflow's CrewAI
    autolog with CrewAI's native provider) misses them, and, with no tool step either,
    which tools ran. Not said of a trace that is no run."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
    nothing = run(span(1, "invoke_agent support", agent))
    assert {"model_calls", "tool_calls"} <= set(nothing.gaps)
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
    tools_only = run(span(1, "invoke_agent support", agent), span(2, "lookup", tool, parent=1))
    assert "model_calls" in tools_only.gaps and "tool_calls" not in tools_only.gaps
    assert not {"model_calls", "tool_calls"} & set(run(span(1, "plain")).gaps)


def test_a_genai_span_kind_outside_the_vocabulary_leaves_other_rules_to_read_the_span() -> None:
    """A model call read by its GenAI message keys (rule 65) stays one beside a
    ``gen_ai.span.kind`` of another vocabulary."""
    ask = {"role": "user", "content": "Where is order 7?"}
    reply = {"role": "assistant", "content": "It shipped."}
    call = {"gen_ai.input.messages": json.dumps([ask]),
            "gen_ai.output.messages": json.dumps([reply]),
            "gen_ai.request.model": "m", "gen_ai.span.kind": "CLIENT"}  # fmt: skip
    trajectory = run(span(1, "turn"), span(2, "openai.chat", call, parent=1))
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM]


def test_a_history_under_genai_names_is_read_to_its_fifth_message() -> None:
    """1-based: the user's message at index 4 after a system prompt and a first round."""
    base = "gen_ai.input.messages."
    history = {
        base + "1.message.role": "system", base + "1.message.content": "Be brief.",
        base + "2.message.role": "assistant", base + "2.message.content": "Hello.",
        base + "3.message.role": "tool", base + "3.message.content": "shipped",
        base + "4.message.role": "user", base + "4.message.content": "Hi.",
    }  # fmt: skip
    spans = fi_turn()
    kept = {k: v for k, v in spans[1].attributes.items() if not k.startswith(base)}
    spans[1] = spans[1]._replace(attributes=kept | history)
    assert run(*spans).input == "Hi."


def test_tool_results_in_a_user_message_answer_calls_and_start_no_turn() -> None:
    """Anthropic's Messages API sends tool results in a ``user`` message; a history whose
    assistant turns hold no recorded call (Logfire writes them as text) pairs the answer
    with the call by its id, after the turn's real user message."""
    ask = {"role": "user", "parts": [{"type": "text", "content": "Where is order 7?"}]}
    part = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"order": 7}}
    asking = {"role": "assistant", "parts": [part]}
    said_so = {"role": "assistant", "parts": [{"type": "text", "content": "ToolUseBlock(...)"}]}
    answered = {"role": "user", "parts": [
        {"type": "tool_call_response", "id": "c1", "response": "shipped"}]}  # fmt: skip
    done = {"role": "assistant", "parts": [{"type": "text", "content": "It shipped."}]}
    trajectory = run(
        span(1, "invoke_agent support", {"gen_ai.operation.name": "invoke_agent"}),
        genai_chat(2, [ask], asking),
        genai_chat(3, [ask, said_so, answered], done),
    )
    (call,) = trajectory.tool_calls
    assert (call.call_id, call.executed, call.result) == ("c1", True, "shipped")
