"""Rules from the eleventh round of blind captures (ADR 0017, session 22): minimal traces
of the shapes the captures showed, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import genai_agent, run, span

from collector.core.records import Span, StatusCode
from evaluators.trajectory import StepKind

# LangSmith's OTel mode over the OpenAI Agents SDK: runs are `langsmith.span.kind`
# chain/llm/tool, a model call's request and reply are the Responses API's items.


def ls_span(n: int, name: str, kind: str, parent: int, **attributes: Any) -> Span:
    recorded = {"langsmith.span.kind": kind, **attributes}
    return span(n, name, recorded, parent=parent, start=n * 10, end=n * 10 + 5)


def reply(*items: dict[str, Any]) -> str:
    return json.dumps({"output": list(items)})


CALL = {"type": "function_call", "call_id": "call_1", "name": "lookup_invoice",
        "arguments": json.dumps({"invoice_id": 1042}), "id": "fc_1"}  # fmt: skip
ANSWER = {"type": "message", "role": "assistant",
          "content": [{"type": "output_text", "text": "Refunded.", "annotations": []}]}  # fmt: skip
QUESTION = json.dumps({"input": [{"role": "user", "content": "Refund invoice 1042"}]})
TOOLS = json.dumps(["lookup_invoice", "refund"])


def langsmith_run(agent_attributes: dict[str, Any]) -> list[Span]:
    return [
        ls_span(1, "support turn", "chain", 0),
        ls_span(2, "music_store_support", "chain", 1, **agent_attributes),
        ls_span(3, "Response", "llm", 2, **{"gen_ai.operation.name": "chat",
                "gen_ai.prompt": QUESTION, "gen_ai.completion": reply(CALL)}),
        ls_span(4, "lookup_invoice", "tool", 2, **{"gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup_invoice",
                "gen_ai.prompt": json.dumps({"invoice_id": 1042}),
                "gen_ai.completion": json.dumps({"total": 2.97})}),
        ls_span(5, "Response", "llm", 2, **{"gen_ai.operation.name": "chat",
                "gen_ai.prompt": QUESTION, "gen_ai.completion": reply(ANSWER)}),
    ]  # fmt: skip


def test_responses_api_items_under_output_are_the_reply() -> None:
    """The reply's ``function_call`` items are the requests (the id-less tool span takes
    the id of the request it ran); the last assistant message's ``output_text`` is the
    answer."""
    trajectory = run(*langsmith_run({"gen_ai.tool.definitions": TOOLS}))
    tools = [step for step in trajectory.steps if step.kind is StepKind.TOOL]
    assert [(step.name, step.call_id, step.args) for step in tools] == [
        ("lookup_invoice", "call_1", {"invoice_id": 1042})
    ]
    assert (trajectory.input, trajectory.output) == ("Refund invoice 1042", "Refunded.")


def test_a_wrapper_declaring_the_tools_is_the_agent_invocation() -> None:
    """The GenAI conventions record ``gen_ai.tool.definitions`` on model calls and agent
    invocations: a wrapper that records them is the agent, named by its span."""
    assert run(*langsmith_run({"gen_ai.tool.definitions": TOOLS})).agent == "music_store_support"


def test_a_wrapper_without_tool_definitions_stays_a_wrapper() -> None:
    assert run(*langsmith_run({})).agent == "support turn"
    empty = run(*langsmith_run({"gen_ai.tool.definitions": ""}))
    assert empty.agent == "support turn"


# Rule 71: a framework that rebuilds the model's call from its own tool object writes the
# history's copy with a field of its own (Langroid's ``request``); no tool span runs it.


def chat(n: int, history: list[dict[str, Any]], reply: dict[str, Any]) -> Span:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                  "gen_ai.input.messages": json.dumps(history),
                  "gen_ai.output.messages": json.dumps([reply])}  # fmt: skip
    return span(n, "chat m", attributes, parent=1, start=n * 10, end=n * 10 + 5)


def asked(call_id: str, **args: Any) -> dict[str, Any]:
    call = {"id": call_id, "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps(args)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


USER = {"role": "user", "content": "Find 1"}


def rebuilt_run(history_args: dict[str, Any]) -> list[Span]:
    answered = [USER, asked("c1", **history_args),
                {"role": "tool", "tool_call_id": "c1", "content": "found 42"}]  # fmt: skip
    return [
        span(1, "turn", {"openinference.span.kind": "AGENT", "agent.name": "shop"}),
        chat(2, [USER], asked("c1", x=1)),
        chat(3, answered, {"role": "assistant", "content": "It is 42."}),
    ]


def test_a_history_call_with_the_same_id_may_add_fields() -> None:
    (step,) = run(*rebuilt_run({"x": 1, "request": "lookup"})).tool_calls
    assert (step.args, step.result, step.executed) == ({"x": 1}, "found 42", True)


def test_a_history_call_differing_on_a_shared_field_is_another_call() -> None:
    (step,) = run(*rebuilt_run({"x": 2, "request": "lookup"})).tool_calls
    assert (step.result, step.executed) == (None, False)


# Rules 72 and 73: a Python call recorded flat (traceAI over smolagents): an empty ``args``
# beside the keyword arguments and the recorder's flags; the run's ``args`` one text.

SCHEMA = json.dumps({"invoice_id": {"type": "integer"}, "reason": {"type": "string"}})


def flat_tool(recorded: dict[str, Any], **extra: Any) -> Span:
    attributes = {"gen_ai.span.kind": "TOOL", "gen_ai.tool.name": "refund",
                  "input.value": json.dumps(recorded), "output.value": "ok", **extra}  # fmt: skip
    return span(2, "SimpleTool", attributes, parent=1)


def flat_run(recorded: dict[str, Any], run_input: Any = None, **extra: Any) -> Any:
    called = {"args": ["Refund invoice 7"], "reset": True} if run_input is None else run_input
    recorded_run = {"gen_ai.span.kind": "AGENT", "input.value": json.dumps(called),
                    "output.value": "Done."}  # fmt: skip
    root = span(1, "Agent.run", recorded_run)
    return run(root, flat_tool(recorded, **extra))


FLAT = {"args": {}, "invoice_id": 7, "reason": "dup", "sanitize_inputs_outputs": True}


def test_a_flat_call_is_read_as_the_tools_declared_parameters() -> None:
    (step,) = flat_run(FLAT, **{"gen_ai.tool.parameters": SCHEMA}).tool_calls
    assert step.args == {"invoice_id": 7, "reason": "dup"}
    (same,) = flat_run(FLAT, **{"tool.parameters": SCHEMA}).tool_calls  # OpenInference's name
    assert same.args == {"invoice_id": 7, "reason": "dup"}


def test_a_flat_call_is_left_as_recorded_without_a_schema_or_with_a_structured_extra() -> None:
    (step,) = flat_run(FLAT).tool_calls  # a flag cannot be told from a boolean parameter
    assert step.args == FLAT
    nested = {**FLAT, "context": {"user": 1}}  # (not a flag: maybe an argument undeclared)
    (kept,) = flat_run(nested, **{"gen_ai.tool.parameters": SCHEMA}).tool_calls
    assert kept.args == nested
    positional = {**FLAT, "args": [7]}  # (positional values: ``by_position``'s business)
    (bound,) = flat_run(positional, **{"gen_ai.tool.parameters": SCHEMA}).tool_calls
    assert bound.args == positional


def test_a_run_called_with_one_text_takes_it_as_its_input() -> None:
    assert flat_run(FLAT).input == "Refund invoice 7"
    later_turn = {"args": ["And invoice 8?"], "reset": {}}  # (falsy values written as {})
    assert flat_run(FLAT, later_turn).input == "And invoice 8?"
    two = {"args": ["Refund invoice 7", "now"], "reset": True}
    assert flat_run(FLAT, two).input is None
    with_options = {"args": ["Refund invoice 7"], "images": ["a.png"]}
    assert flat_run(FLAT, with_options).input is None


# pydantic-ai's own messages (MLflow's pydantic-ai autolog records them): no role, a
# ``kind`` and parts of a ``part_kind``.


def mlflow_llm(n: int, messages: list[Any], reply: Any) -> Span:
    return mlflow_json(n, "Model.request", "LLM", 1, {"messages": messages}, reply)


def mlflow_json(  # noqa: PLR0917 - the span's fields, in the order a tree reads
    n: int, title: str, kind: str, parent: int, inputs: Any, outputs: Any, **extra: Any
) -> Span:
    attributes = {"mlflow.spanType": json.dumps(kind), "mlflow.spanInputs": json.dumps(inputs),
                  "mlflow.spanOutputs": json.dumps(outputs), **extra}  # fmt: skip
    return span(n, title, attributes, parent=parent, start=n * 10, end=n * 10 + 5)


PROMPT = {"kind": "request", "instructions": "Be brief.",
          "parts": [{"part_kind": "system-prompt", "content": "You sell music."},
                    {"part_kind": "user-prompt", "content": "Refund invoice 7"}]}  # fmt: skip
CALLED = {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "refund",
          "args": json.dumps({"invoice_id": 7}), "tool_call_id": "c1", "id": None}]}  # fmt: skip
RETURNED = {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "refund",
            "content": "refunded", "tool_call_id": "c1", "outcome": "success"}]}  # fmt: skip
ANSWERED = {"kind": "response", "parts": [{"part_kind": "text", "content": "Refunded."}]}


def pydantic_ai_run(agent_name: str = '"shop"') -> Any:
    return run(
        mlflow_json(1, "Agent.run", "AGENT", 0, {"user_prompt": "Refund invoice 7"},
                    {"output": "Refunded."}, name=agent_name),
        mlflow_llm(2, [PROMPT], CALLED),
        mlflow_json(3, "refund", "TOOL", 1, {"invoice_id": 7}, "refunded"),
        mlflow_llm(4, [PROMPT, CALLED, RETURNED], ANSWERED),
    )  # fmt: skip


def test_pydantic_ai_messages_take_their_role_from_kind_and_parts() -> None:
    """A request holding the user's prompt is the user's (its text the prompt part's, not
    the system prompt's), a response the assistant's: the run's input, and the reply's
    tool-call parts are the requests (the tool span takes the call's id)."""
    trajectory = pydantic_ai_run()
    (step,) = trajectory.tool_calls
    assert (step.call_id, step.args, step.result) == ("c1", {"invoice_id": 7}, "refunded")
    assert (trajectory.input, trajectory.output) == ("Refund invoice 7", "Refunded.")


def test_an_mlflow_agent_span_is_named_by_its_bare_name_attribute() -> None:
    assert pydantic_ai_run().agent == "shop"
    assert run(mlflow_json(1, "Agent.run", "CHAIN", 0, {}, {}, name='"shop"')).agent != "shop"


# Rule 74: DSPy's ReAct writes its loop in the ChatAdapter's field sections; an
# instrumentation of the model calls alone (OpenLIT, Langtrace) records only those.


def section(field: str, body: str) -> str:
    return f"[[ ## {field} ## ]]\n{body}\n\n"


ASK = "Respond with the corresponding output fields, starting with the field `[[ ## x ## ]]`"
OBSERVED = json.dumps({"total": 2.97})


def adapter_call(n: int, user: str, reply: str) -> Span:
    history = [{"role": "system", "content": "Your input fields are: ..."},
               {"role": "user", "content": user}]  # fmt: skip
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                  "gen_ai.input.messages": json.dumps(history),
                  "gen_ai.output.messages": json.dumps(
                      [{"role": "assistant", "content": reply}])}  # fmt: skip
    return span(n, "chat m", attributes, parent=1, start=n * 10, end=n * 10 + 5)


def adapter_run(observation: str = OBSERVED) -> Any:
    question = section("customer_message", "Refund invoice 7") + section("history", "[]")
    first_round = (section("tool_name_0", "lookup_invoice")
                   + section("tool_args_0", json.dumps({"invoice_id": 7}))
                   + section("observation_0", observation))  # fmt: skip
    asked = (section("next_thought", "Look it up.")
             + section("next_tool_name", "lookup_invoice")
             + section("next_tool_args", json.dumps({"invoice_id": 7}))
             + "[[ ## completed ## ]]")  # fmt: skip
    answered = (section("reasoning", "The invoice is refunded.")
                + section("response", "Refunded invoice 7.")
                + "[[ ## completed ## ]]")  # fmt: skip
    return run(
        span(1, "support turn", {"openinference.span.kind": "AGENT", "agent.name": "shop"}),
        adapter_call(2, question + section("trajectory", "") + ASK, asked),
        adapter_call(3, question + section("trajectory", first_round) + ASK, answered),
    )


def test_chat_adapter_sections_are_the_calls_the_results_the_input_and_the_answer() -> None:
    trajectory = adapter_run()
    (step,) = trajectory.tool_calls
    assert (step.name, step.args, step.result) == ("lookup_invoice", {"invoice_id": 7},
                                                   {"total": 2.97})  # fmt: skip
    assert (trajectory.input, trajectory.output) == ("Refund invoice 7", "Refunded invoice 7.")


# Rule 75: a Python traceback handed to the model as a tool's result is its failure.


def test_a_traceback_ending_in_the_exception_is_a_failure() -> None:
    failed = 'Execution error in refund: \nTraceback (most recent call last):\n  File "t.py", '
    failed += 'line 3, in refund\n    raise StoreError("x")\nstore.StoreError: RefundWindowExpired'
    (step,) = adapter_run(failed).tool_calls
    assert step.error is not None and "RefundWindowExpired" in step.error
    quoted = "The log said: Traceback (most recent call last): ... and then it recovered."
    (fine,) = adapter_run(quoted).tool_calls
    assert fine.error is None


# Rule 76: a second instrumentation's span of the same request, not nested under the first
# (its context not propagated): a sibling within its time, with no reply.


def litellm_pair(inner_reply: str | None, inner_end: int = 18) -> Any:
    request = json.dumps([{"role": "user", "content": "Refund invoice 7"}])
    outer = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "openai/m",
             "gen_ai.input.messages": request, "gen_ai.output.messages": json.dumps(
                 [{"role": "assistant", "content": "Refunded."}])}  # fmt: skip
    inner: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                             "gen_ai.input.messages": request}  # fmt: skip
    if inner_reply is not None:
        inner["gen_ai.output.messages"] = json.dumps(
            [{"role": "assistant", "content": inner_reply}]
        )
    return run(
        span(1, "support turn", {"openinference.span.kind": "AGENT", "agent.name": "shop"}),
        span(2, "litellm chat", outer, parent=1, start=10, end=20),
        span(3, "openai chat", inner, parent=1, start=12, end=inner_end),
    )


def test_a_sibling_inside_a_calls_time_with_its_request_and_no_reply_is_a_layer() -> None:
    trajectory = litellm_pair(None)
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM]
    assert "duplicate_instrumentation" in trajectory.gaps
    assert [step.kind for step in litellm_pair("Refunded.").steps] == [StepKind.LLM] * 2
    assert [step.kind for step in litellm_pair(None, inner_end=25).steps] == [StepKind.LLM] * 2


# Rules 77-78 and the flattened Gemini parts: AgentOps' model-request spans over ADK.


def flattened_request(n: int, parent: int, **messages: Any) -> Span:
    attributes = {"agentops.span.kind": "request", "gen_ai.request.model": "m", **messages}
    return span(n, "adk.llm.m", attributes, parent=parent, start=n * 10, end=n * 10 + 9)


def test_a_flattened_request_and_reply_is_a_model_call_and_gemini_parts_are_read() -> None:
    asked = {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Refund invoice 7",
             "gen_ai.completion.0.role": "assistant",
             "gen_ai.completion.0.tool_calls.0.name": "refund",
             "gen_ai.completion.0.tool_calls.0.arguments": json.dumps({"invoice_id": 7}),
             "gen_ai.completion.0.tool_calls.0.id": "c1"}  # fmt: skip
    answered = {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Refund invoice 7",
                "gen_ai.prompt.1.role": "assistant",
                "gen_ai.prompt.1.function_call.name": "refund",
                "gen_ai.prompt.1.function_call.args": json.dumps({"invoice_id": 7}),
                "gen_ai.prompt.1.function_call.id": "c1",
                "gen_ai.prompt.2.role": "user", "gen_ai.prompt.2.function_response.id": "c1",
                "gen_ai.prompt.2.function_response.name": "refund",
                "gen_ai.prompt.2.function_response.result": json.dumps(
                    {"status": "error", "error_message": "RefundWindowExpired"}),
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "I cannot refund it."}  # fmt: skip
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund",
            "gen_ai.tool.call.id": "c1"}  # fmt: skip
    trajectory = run(
        span(1, "invoke_agent shop", {"gen_ai.operation.name": "invoke_agent",
                                      "gen_ai.agent.name": "shop"}),
        flattened_request(2, 1, **asked),
        span(3, "execute_tool refund", tool, parent=2, start=25, end=27),
        flattened_request(4, 1, **answered),
    )  # fmt: skip
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    (step,) = trajectory.tool_calls
    assert step.args == {"invoice_id": 7} and "RefundWindowExpired" in str(step.error)
    assert (trajectory.input, trajectory.output) == ("Refund invoice 7", "I cannot refund it.")


def test_a_tool_spans_traceback_result_is_its_failure_parsed_or_deferred() -> None:
    """A tool span's result text is only parsed when an error hint is in it (else its
    parsing is deferred, and no error is looked for): a traceback ending in an
    ``…Error`` or ``…Exception`` line must be hinted."""
    for raised in ("store.StoreError: RefundWindowExpired", "ValueError", "RuntimeException: x"):
        failed = f'Traceback (most recent call last):\n  File "t.py", line 3\n{raised}'
        trajectory = run(
            span(1, "invoke_agent shop", {"gen_ai.operation.name": "invoke_agent",
                                          "gen_ai.agent.name": "shop"}),
            span(2, "execute_tool refund", {"gen_ai.operation.name": "execute_tool",
                                            "gen_ai.tool.name": "refund",
                                            "gen_ai.tool.call.id": "c1",
                                            "gen_ai.tool.call.result": failed}, parent=1),
        )  # fmt: skip
        (step,) = trajectory.tool_calls
        assert step.error is not None, raised


# The review's findings (session 22): what each rule must not read.


def test_a_result_quoting_a_traceback_after_its_own_text_is_no_failure() -> None:
    found = 'Found 1 match in api.log:\nTraceback (most recent call last):\n  File "a.py"'
    found += ", line 3, in h\nValueError: bad int"
    (step,) = adapter_run(found).tool_calls
    assert step.error is None
    not_raised = "Execution error in x:\nTraceback (most recent call last):\n  File x\ndone"
    (ended,) = adapter_run(not_raised + " " * 5000).tool_calls  # (linear in the text)
    assert ended.error is None


def test_chat_adapter_fields_are_read_only_in_react_requests_and_one_field_answers() -> None:
    rag_request = section("context", "[1] Refunds within 30 days.") + section("question", "Can I?")
    reply = section("reasoning", "r") + section("answer", "Paris") + section("confidence", "0.9")
    trajectory = run(
        span(1, "rag", {"openinference.span.kind": "AGENT", "agent.name": "rag"}),
        adapter_call(2, rag_request + ASK, reply + "[[ ## completed ## ]]"),
    )
    assert trajectory.input is not None and "Can I?" in trajectory.input
    assert trajectory.output is not None and "Paris" in trajectory.output


def chat_span(  # noqa: PLR0917 - the span's fields, in the order a tree reads
    n: int, start: int, end: int, reply: str | None = None, model: str = "m",
    request: str = "Rate this answer", tokens: int | None = None, failed: bool = False,
) -> Span:  # fmt: skip
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
        "gen_ai.input.messages": json.dumps([{"role": "user", "content": request}])}  # fmt: skip
    if reply is not None:
        attributes["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "content": reply}])
    if tokens is not None:
        attributes["gen_ai.usage.input_tokens"] = tokens
    status = StatusCode.ERROR if failed else StatusCode.UNSET
    return span(n, "chat", attributes, parent=1, start=start, end=end, status=status,
                message="RateLimitError 429" if failed else "")  # fmt: skip


ROOT = span(1, "turn", {"openinference.span.kind": "AGENT", "agent.name": "judge"})


def llm_steps(*calls: Span) -> int:
    return sum(step.kind is StepKind.LLM for step in run(ROOT, *calls).steps)


def test_parallel_calls_of_one_request_are_not_layers() -> None:
    assert llm_steps(chat_span(2, 10, 30, "7"), chat_span(3, 12, 14)) == 1  # (the layer)
    assert llm_steps(chat_span(2, 10, 30, "7"), chat_span(3, 12, 14, failed=True)) == 2
    assert llm_steps(chat_span(2, 10, 30), chat_span(3, 12, 25)) == 2  # capture off
    assert llm_steps(chat_span(2, 10, 30, "7", tokens=100), chat_span(3, 12, 14, tokens=90)) == 2
    assert llm_steps(chat_span(2, 10, 30, "7"), chat_span(3, 12, 14, request="Other")) == 2
    assert llm_steps(chat_span(2, 10, 30, "7"), chat_span(3, 12, 14, model="other")) == 2
    assert llm_steps(chat_span(2, 10, 30, "7", model="openai/m"), chat_span(3, 12, 14)) == 1
    asking = chat_span(3, 12, 14)._replace(attributes={**chat_span(3, 12, 14).attributes,
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "tool_call", "id": "c9", "name": "lookup", "arguments": {}}]}])})  # fmt: skip
    assert llm_steps(chat_span(2, 10, 30, "7"), asking) == 2  # (it asked for a call)


def test_a_hostile_part_kind_is_no_role_and_raises_nothing() -> None:
    for kind in (["x"], {}, 3):
        value = json.dumps([{"kind": "request", "parts": [{"part_kind": kind}]}])
        assert run(span(1, "A", {"openinference.span.kind": "AGENT", "input.value": value}))


def test_pydantic_ai_tool_returns_answer_their_calls_without_tool_spans() -> None:
    failed = {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "refund",
              "content": "window expired", "tool_call_id": "c1", "outcome": "failed"}]}  # fmt: skip
    trajectory = run(
        mlflow_json(1, "Agent.run", "AGENT", 0, {"user_prompt": "Refund invoice 7"}, {}),
        mlflow_llm(2, [PROMPT], CALLED),
        mlflow_llm(4, [PROMPT, CALLED, failed], ANSWERED),
    )
    (step,) = trajectory.tool_calls
    assert (step.executed, step.error) == (True, "window expired")


def test_empty_tool_definitions_declare_no_agent() -> None:
    for empty in ("[]", "null", "{}", ""):
        assert run(*langsmith_run({"gen_ai.tool.definitions": empty})).agent == "support turn"


def test_a_flattened_tool_message_keeps_its_own_id() -> None:
    from collector.normalize.conventions.traceloop import legacy_messages

    recorded = {"gen_ai.prompt.0.role": "tool", "gen_ai.prompt.0.tool_call_id": "c1",
                "gen_ai.prompt.0.function_response.name": "refund",
                "gen_ai.prompt.0.function_response.result": "ok"}  # fmt: skip
    (message,) = legacy_messages(span(2, "chat", recorded, parent=1)) or [{}]
    assert (message["tool_call_id"], message["content"]) == ("c1", "ok")


def test_a_pydantic_ai_request_takes_the_role_of_its_parts() -> None:
    from collector.normalize.messages import role_of

    def request(*kinds: str) -> dict[str, Any]:
        return {"kind": "request", "parts": [{"part_kind": kind} for kind in kinds]}

    assert role_of(request("system-prompt", "user-prompt")) == "user"
    assert role_of(request("tool-return", "retry-prompt")) == "tool"
    assert role_of(request("system-prompt")) == "system"
    assert role_of(request("system-prompt", "tool-return")) is None
    assert role_of({"kind": "response", "parts": []}) == "assistant"
    assert role_of({"kind": "other", "parts": [{"part_kind": "user-prompt"}]}) is None


def test_gemini_parts_in_the_python_sdks_spelling_are_calls_and_answers() -> None:
    """The google-genai SDK dumps its request in snake_case (``function_call``,
    ``function_response``), the REST API writes camelCase: both are read; without ids
    the answers pair with the calls by name, arguments and position."""
    asked = {"role": "model", "parts": [{"function_call": {"name": "refund",
             "args": {"invoice_id": 7}}}]}  # fmt: skip
    answered = {"role": "user", "parts": [{"function_response": {"name": "refund",
                "response": {"error": "RefundWindowExpired"}}}]}  # fmt: skip
    question = {"role": "user", "parts": [{"text": "Refund invoice 7"}]}

    def generate(n: int, contents: list[Any], reply: dict[str, Any]) -> Span:
        calls = reply.get("calls", [])
        attributes: dict[str, Any] = {"openinference.span.kind": "LLM",
            "input.value": json.dumps({"model": "m", "contents": contents}),
            "llm.output_messages.0.message.role": "model"}  # fmt: skip
        for j, call in enumerate(calls):
            prefix = f"llm.output_messages.0.message.tool_calls.{j}.tool_call.function."
            attributes[prefix + "name"] = call["name"]
            attributes[prefix + "arguments"] = json.dumps(call["args"])
        if "text" in reply:
            attributes["llm.output_messages.0.message.content"] = reply["text"]
        return span(n, "GenerateContent", attributes, parent=1, start=n * 10, end=n * 10 + 5)

    trajectory = run(
        span(1, "turn", {"openinference.span.kind": "AGENT", "agent.name": "shop"}),
        generate(2, [question], {"calls": [{"name": "refund", "args": {"invoice_id": 7}}]}),
        generate(3, [question, asked, answered], {"text": "I cannot refund it."}),
    )
    (step,) = trajectory.tool_calls
    assert (step.executed, step.error) == (True, "RefundWindowExpired")


# VoltAgent's own vocabulary (a session-17 capture, read since session 22): entity.type /
# entity.name on every span, span.type on the work spans, input / output.


def volt(n: int, name: str, parent: int = 0, **attributes: Any) -> Span:
    recorded = {"entity.type": "agent", "entity.id": "shop", "entity.name": "shop", **attributes}
    return span(n, name, recorded, parent=parent, start=n * 10, end=n * 10 + 5)


def test_voltagent_spans_are_read_by_their_own_vocabulary() -> None:
    trajectory = run(
        volt(1, "shop", input="Refund invoice 7", output="Refunded.",
             **{"conversation.id": "s1"}),
        volt(2, "llm:generateText", 1, **{"span.type": "llm", "llm.model": "m",
             "llm.messages": json.dumps([{"role": "user", "content": "Refund invoice 7"}])}),
        volt(3, "tool.execution:refund", 1, input=json.dumps({"invoice_id": 7}), output='"ok"',
             **{"span.type": "tool", "tool.name": "refund", "tool.call.id": "c1"}),
        volt(4, "memory.write", 1, **{"span.type": "memory"}),
    )  # fmt: skip
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM, StepKind.TOOL]
    (step,) = trajectory.tool_calls
    assert (step.name, step.call_id, step.result) == ("refund", "c1", "ok")
    assert step.args == {"invoice_id": 7}
    assert (trajectory.agent, trajectory.session_id) == ("shop", "s1")
    assert (trajectory.input, trajectory.output) == ("Refund invoice 7", "Refunded.")


def test_span_type_alone_types_nothing() -> None:
    """``span.type`` is a common key: without VoltAgent's ``entity.type`` it is not read."""
    plain = span(2, "lookup", {"span.type": "tool", "input": "{}"}, parent=1)
    assert run(span(1, "turn", {}), plain).steps == ()


# AgentOps' Agno integration: no model span; the call's arguments under tool.parameters, a
# failure as text under tool.error (status OK), the run's text on the agent span.


def agentops_span(n: int, kind: str, parent: int = 0, **attributes: Any) -> Span:
    return span(n, f"x.{kind}", {"agentops.span.kind": kind, **attributes}, parent=parent)


def test_agentops_tool_parameters_holding_values_are_the_arguments() -> None:
    trajectory = run(
        agentops_span(1, "agent", **{"agent.name": "shop", "agent.input": "Refund invoice 7",
                                     "agent.output": "I cannot refund it."}),
        agentops_span(2, "tool", 1, **{"tool.name": "refund",
                                       "tool.parameters": json.dumps({"invoice_id": 7}),
                                       "tool.error": "RefundWindowExpired: too late",
                                       "tool.result": "failure"}),
        agentops_span(3, "tool", 1, **{"tool.name": "lookup",
                                       "tool.parameters": json.dumps({"id": {"type": "integer"}}),
                                       "tool.error": "None", "tool.result": "{}"}),
    )  # fmt: skip
    refund, lookup = trajectory.tool_calls
    assert (refund.args, refund.error) == ({"invoice_id": 7}, "RefundWindowExpired: too late")
    assert (lookup.args, lookup.error) == (None, None)  # (a schema; "None" is no error)
    assert (trajectory.input, trajectory.output) == ("Refund invoice 7", "I cannot refund it.")


# Rule 79: calls flattened without ids take them from the raw response beside them.


def oi_reply(n: int, calls: list[tuple[str, str]], response: Any) -> Span:
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM",
        "llm.output_messages.0.message.role": "assistant",
        "output.value": json.dumps(response)}  # fmt: skip
    for j, (name, arguments) in enumerate(calls):
        prefix = f"llm.output_messages.0.message.tool_calls.{j}.tool_call.function."
        attributes[prefix + "name"], attributes[prefix + "arguments"] = name, arguments
    return span(n, "chat", attributes, parent=1, start=n * 10, end=n * 10 + 5)


def response_calling(*calls: tuple[str, str, str]) -> dict[str, Any]:
    listed = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
              for call_id, name, args in calls]  # fmt: skip
    return {"choices": [{"message": {"role": "assistant", "tool_calls": listed}}]}


def test_flattened_calls_without_ids_take_the_raw_responses_ids() -> None:
    args = json.dumps({"invoice_id": 7})
    root = span(1, "turn", {"openinference.span.kind": "AGENT", "agent.name": "shop"})
    same = run(root, oi_reply(2, [("refund", args)], response_calling(("c1", "refund", args))))
    assert [step.call_id for step in same.tool_calls] == ["c1"]
    other = response_calling(("c1", "refund", json.dumps({"invoice_id": 8})))
    differs = run(root, oi_reply(2, [("refund", args)], other))
    assert [step.call_id for step in differs.tool_calls] == [None]


# The second review's findings (session 22): what the third round's readings must not read.

GENAI_EXCHANGE = {
    "gen_ai.request.model": "m",
    "gen_ai.input.messages": json.dumps([{"role": "user", "content": "hi"}]),
    "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "hello"}]),
}


def test_a_foreign_entity_type_is_no_voltagent_span() -> None:
    chat = span(2, "chat", {"entity.type": "customer", **GENAI_EXCHANGE}, parent=1)
    foreign = run(span(1, "turn", {"entity.type": "customer"}), chat)
    assert [step.kind for step in foreign.steps] == [StepKind.LLM]
    partial = run(span(1, "invoke", {"entity.type": "agent", "entity.name": "x",
                                     "output": '{"state": 1}', "conversation.id": "row-42"}),
                  span(2, "chat", GENAI_EXCHANGE, parent=1))  # fmt: skip
    assert (partial.output, partial.session_id) == ("hello", None)  # (no entity.id: not marked)


AO_AGENT = agentops_span(1, "agent", **{"agent.name": "shop"})


def agentops_tool(**attributes: Any) -> Any:
    tool = agentops_span(2, "tool", 1, **{"tool.name": "get", **attributes})
    (step,) = run(AO_AGENT, tool).tool_calls
    return step


def test_agentops_tool_parameters_in_a_schema_shape_are_no_arguments() -> None:
    schemas = ({"name": "get", "parameters": {"type": "object", "properties": {}}},
               {"id": "integer", "city": "string"}, {"type": "object"},
               {"$schema": "x", "a": 1}, {"type": "string", "required": ["a"]})  # fmt: skip
    for schema in schemas:
        assert agentops_tool(**{"tool.parameters": json.dumps(schema)}).args is None, schema
    for values in ({"filter": {"type": "news", "since": "2024"}},
                   {"properties": ["a", "b"], "city": "x"}, {"type": "news"}):  # fmt: skip
        assert agentops_tool(**{"tool.parameters": json.dumps(values)}).args == values


def test_agentops_tool_error_placeholders_are_no_failure_and_a_true_flag_is_one() -> None:
    for absent in ("none", "undefined", "N/A", " None", "0", "{}", "[]", ""):
        assert agentops_tool(**{"tool.error": absent, "tool.result": "fine"}).error is None
    assert agentops_tool(**{"tool.error": True, "tool.result": "fine"}).error is not None


def test_tool_parameters_and_tool_error_are_read_on_agentops_spans_only() -> None:
    plain = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get",
             "tool.parameters": json.dumps({"id": 7}), "tool.error": "Boom: failed"}  # fmt: skip
    (step,) = run(genai_agent(1), span(2, "execute_tool get", plain, parent=1)).tool_calls
    assert (step.args, step.error) == (None, None)


def test_agentops_agent_text_is_plain_or_a_json_string_and_yields_to_the_model() -> None:
    bracketed = run(
        agentops_span(
            1,
            "agent",
            **{
                "agent.name": "shop",
                "agent.input": "[URGENT] refund invoice 7",
                "agent.output": "{name} please",
            },
        )
    )
    assert (bracketed.input, bracketed.output) == ("[URGENT] refund invoice 7", "{name} please")
    quoted = run(agentops_span(1, "agent", **{"agent.name": "shop", "agent.input": '"Refund 7"'}))
    assert quoted.input == "Refund 7"
    with_model = run(agentops_span(1, "agent", **{"agent.name": "shop", "agent.input": "x",
                                                   "agent.output": "RunResponse(...)"}),
                     span(2, "chat", {"gen_ai.operation.name": "chat", **GENAI_EXCHANGE},
                          parent=1))  # fmt: skip
    assert (with_model.input, with_model.output) == ("hi", "hello")


def test_rule_79_takes_no_ambiguous_ids() -> None:
    args = json.dumps({"a": 1})
    root = span(1, "turn", {"openinference.span.kind": "AGENT", "agent.name": "shop"})
    twice = response_calling(("c1", "f", args), ("c1", "f", args))
    same_id = run(root, oi_reply(2, [("f", args), ("f", args)], twice))
    assert [step.call_id for step in same_id.tool_calls] == [None, None]


def test_a_foreign_entity_type_leaves_a_tool_spans_namespace_keys_read() -> None:
    """A tool span read by its name's own namespace (``evidence``) keeps its arguments
    when it also carries another library's ``entity.type``."""
    keys = {"entity.type": "customer", "shop.tool.name": "refund", "shop.tool.output": '"ok"',
            "shop.tool.input": json.dumps({"invoice_id": 7})}  # fmt: skip
    (step,) = run(span(1, "turn", {}), span(2, "shop.tool", keys, parent=1)).tool_calls
    assert (step.name, step.args) == ("refund", {"invoice_id": 7})
