"""Rules from the ninth round of blind captures (ADR 0017, session 20): minimal traces of
the shapes Laminar's instrumentation of the OpenAI Agents SDK showed, never keyed to a
library's names. Rule 65: a span with the GenAI request and reply keys is a model call
without an operation name; a reply may list Responses-API ``function_call`` items; a
call rebuilt from messages takes the failure its span records. Rule 66: with the agent's
name mapped, a plain span its turns name is the agent's run."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import run, span

from collector.core.records import Span, StatusCode
from collector.normalize import Mappings
from evaluators.trajectory import StepKind

SYSTEM = {"role": "system", "content": [{"type": "input_text", "text": "Be brief."}]}
ASK = {"role": "user", "content": "Where is order 7?"}
CALL = {
    "type": "function_call",
    "name": "lookup",
    "arguments": '{"order": 7}',
    "call_id": "c1",
    "id": "fc_c1",
    "role": "assistant",
}
ANSWER = {"type": "function_call_output", "call_id": "c1", "output": "shipped"}
REPLY = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "It shipped."}],
}


def model_call(n: int, request: list[Any], reply: list[Any], parent: int, **more: Any) -> Span:
    """A model call recorded with the GenAI message keys and no ``gen_ai.operation.name``."""
    attributes = {
        "gen_ai.input.messages": json.dumps(request),
        "gen_ai.output.messages": json.dumps(reply),
        "gen_ai.request.model": "m",
        "gen_ai.usage.input_tokens": 10,
        **more,
    }
    return span(n, "agents.response", attributes, parent=parent)


def one_call_run(tool_status: int = StatusCode.UNSET, tool_message: str = "") -> list[Span]:
    """A turn: a model call requesting ``lookup``, the span that ran it (no convention
    types it), and the model call answering with the call and its output in its request."""
    return [
        span(1, "turn"),
        model_call(2, [SYSTEM, ASK], [CALL], parent=1),
        span(3, "lookup", parent=1, status=tool_status, message=tool_message),
        model_call(4, [SYSTEM, ASK, {k: v for k, v in CALL.items() if k != "role"}, ANSWER],
                   [REPLY], parent=1),
    ]  # fmt: skip


def test_a_span_with_the_genai_request_and_reply_is_a_model_call() -> None:
    trajectory = run(*one_call_run())
    kinds = [step.kind for step in trajectory.steps]
    assert kinds == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    assert (trajectory.input, trajectory.output) == ("Where is order 7?", "It shipped.")
    (tool,) = trajectory.tool_calls
    assert (tool.name, tool.args, tool.call_id, tool.result) == ("lookup", {"order": 7}, "c1",
                                                                  "shipped")  # fmt: skip
    assert tool.span_id == span(3, "x").span_id.hex()  # timed by the span that ran it


def test_without_a_model_named_or_an_assistant_reply_the_span_is_no_model_call() -> None:
    unnamed = model_call(2, [SYSTEM, ASK], [REPLY], parent=1)
    del unnamed.attributes["gen_ai.request.model"]  # type: ignore[attr-defined]
    del unnamed.attributes["gen_ai.usage.input_tokens"]  # type: ignore[attr-defined]
    assert run(span(1, "turn"), unnamed).steps == ()
    not_a_reply = model_call(2, [SYSTEM, ASK], [ASK], parent=1)
    assert run(span(1, "turn"), not_a_reply).steps == ()
    no_request = model_call(2, [], [REPLY], parent=1)
    assert run(span(1, "turn"), no_request).steps == ()


def test_parallel_function_call_items_in_one_reply_are_two_requested_calls() -> None:
    second = {**CALL, "call_id": "c2", "id": "fc_c2", "arguments": '{"order": 8}'}
    answer_2 = {**ANSWER, "call_id": "c2", "output": "lost"}
    history = [SYSTEM, ASK, CALL, second, ANSWER, answer_2]
    trajectory = run(
        span(1, "turn"),
        model_call(2, [SYSTEM, ASK], [CALL, second], parent=1),
        model_call(3, history, [REPLY], parent=1),
    )
    calls = sorted((step.call_id, step.args["order"]) for step in trajectory.tool_calls)
    assert calls == [("c1", 7), ("c2", 8)]


def test_a_rebuilt_call_takes_the_failure_its_span_records() -> None:
    failed = run(*one_call_run(StatusCode.ERROR, "Error running tool"))
    (tool,) = failed.tool_calls
    assert tool.error == "Error running tool"
    (fine,) = run(*one_call_run()).tool_calls
    assert fine.error is None


AGENT_KEY = "vendor.turn.agent_name"
MAPPED = Mappings(agent_name=AGENT_KEY)


def agent_run(turn_names: list[str]) -> list[Span]:
    """A plain span named after the agent, its turns saying whose they are, a model call
    in each."""
    spans = [span(1, "task"), span(2, "store", parent=1)]
    for k, named in enumerate(turn_names):
        turn, model = 10 + 2 * k, 11 + 2 * k
        spans.append(span(turn, "turn", {AGENT_KEY: named}, parent=2))
        spans.append(model_call(model, [SYSTEM, ASK], [REPLY], parent=turn))
    return spans


def test_with_the_agent_name_mapped_the_span_its_turns_name_is_the_agent() -> None:
    trajectory = run(*agent_run(["store", "store"]), mappings=MAPPED)
    assert trajectory.agent == "store"
    assert {step.agent for step in trajectory.steps} == {"store"}


def test_turns_that_name_another_agent_or_no_mapping_name_no_agent() -> None:
    assert run(*agent_run(["store", "billing"]), mappings=MAPPED).agent is None
    assert run(*agent_run(["billing"]), mappings=MAPPED).agent is None
    assert run(*agent_run(["store"])).agent is None  # an unmapped key is not read


# Rule 67: a model call recorded in its span's events (LlamaIndex's own OTel handler)

SYSTEM_BLOCKS = {"role": "system", "additional_kwargs": {}, "blocks": [
    {"block_type": "text", "text": "Be brief."}]}  # fmt: skip
ASK_BLOCKS = {"role": "user", "additional_kwargs": {}, "blocks": [
    {"block_type": "text", "text": "Where is order 7?"}]}  # fmt: skip
CALL_BLOCK = {"block_type": "tool_call", "tool_call_id": "c1", "tool_name": "lookup",
              "tool_kwargs": '{"order": 7}'}  # fmt: skip
ASKING = {"role": "assistant", "additional_kwargs": {"tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"order": 7}'}}
]}, "blocks": [CALL_BLOCK]}  # fmt: skip
ANSWERED = {"role": "tool", "additional_kwargs": {"tool_call_id": "c1"},
            "blocks": [{"block_type": "text", "text": "shipped"}]}  # fmt: skip


def chat_in_events(n: int, parent: int, request: list[Any], reply: dict[str, Any]) -> list[Span]:
    """A wrapper call span without events around the span whose start and end events
    record the request and the reply (flattened under ``response.message.``)."""
    sent = {"messages": json.dumps(request), "model_dict.model_name": "m"}
    ended = {
        "messages": json.dumps(request),
        "response.message.role": "assistant",
        "response.message.blocks": json.dumps(reply["blocks"]),
        "response.raw.model": "m-2026",
        "response.raw.usage.prompt_tokens": 12,
        "response.raw.usage.completion_tokens": 3,
    }
    if "tool_calls" in reply["additional_kwargs"]:
        calls = json.dumps(reply["additional_kwargs"]["tool_calls"])
        ended["response.message.additional_kwargs.tool_calls"] = calls
    return [
        span(n, "Model.achat", parent=parent),
        span(n + 1, "Model.achat", parent=n, events=(("ChatStart", sent), ("ChatEnd", ended))),
    ]


def test_a_span_whose_events_record_a_request_and_a_reply_is_a_model_call() -> None:
    text_reply = {"role": "assistant", "additional_kwargs": {},
                  "blocks": [{"block_type": "text", "text": "It shipped."}]}  # fmt: skip
    trajectory = run(
        span(1, "Agent.run"),
        *chat_in_events(2, 1, [SYSTEM_BLOCKS, ASK_BLOCKS], ASKING),
        span(4, "Tool.acall", parent=1),
        *chat_in_events(5, 1, [SYSTEM_BLOCKS, ASK_BLOCKS, ASKING, ANSWERED], text_reply),
    )
    kinds = [step.kind for step in trajectory.steps]
    assert kinds == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]  # (not the wrappers)
    assert (trajectory.input, trajectory.output) == ("Where is order 7?", "It shipped.")
    (tool,) = trajectory.tool_calls
    assert (tool.name, tool.args, tool.call_id, tool.result) == ("lookup", {"order": 7}, "c1",
                                                                  "shipped")  # fmt: skip
    first = trajectory.steps[0]
    assert (first.model, first.input_tokens, first.output_tokens) == ("m-2026", 12, 3)


def test_events_without_an_assistant_reply_are_no_model_call() -> None:
    sent = {"messages": json.dumps([SYSTEM_BLOCKS, ASK_BLOCKS])}
    lone = span(2, "Model.achat", parent=1, events=(("ChatStart", sent),))
    assert run(span(1, "Agent.run"), lone).steps == ()
    user_reply = {"messages": json.dumps([ASK_BLOCKS]), "response.message.role": "user"}
    odd = span(2, "Model.achat", parent=1, events=(("ChatEnd", user_reply),))
    assert run(span(1, "Agent.run"), odd).steps == ()


# A review of rules 65-66 (session 20)


def test_a_run_that_records_the_conversation_and_its_model_is_no_model_call() -> None:
    """An agent span writing the GenAI message keys, its model and its token totals, with
    no operation name, is the run around its model calls: they stay the steps."""
    chat = {"gen_ai.operation.name": "chat"}
    trajectory = run(
        model_call(1, [SYSTEM, ASK], [REPLY], parent=0, **{"gen_ai.usage.input_tokens": 400}),
        model_call(2, [SYSTEM, ASK], [CALL], parent=1, **chat),
        span(3, "lookup", parent=1),
        model_call(4, [SYSTEM, ASK, CALL, ANSWER], [REPLY], parent=1, **chat),
    )
    kinds = [step.kind for step in trajectory.steps]
    assert kinds == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    assert "duplicate_instrumentation" not in trajectory.gaps


def test_a_failed_attempt_the_model_did_not_see_is_no_failure_of_the_call() -> None:
    attempts = one_call_run(StatusCode.ERROR, "timeout")
    retried = span(6, "lookup", parent=1, start=3600)  # the second attempt, which succeeded
    trajectory = run(*attempts[:3], retried, attempts[3]._replace(start_unix_nano=5000))
    (tool,) = trajectory.tool_calls
    assert (tool.result, tool.error) == ("shipped", None)


def test_a_bare_failure_of_the_span_keeps_the_message_the_model_was_shown() -> None:
    failing = {**ANSWER, "output": "Error: the order service is down"}
    spans = one_call_run(StatusCode.ERROR)  # (no status message: a bare failure)
    history = [SYSTEM, ASK, {k: v for k, v in CALL.items() if k != "role"}, failing]
    spans[3] = model_call(4, history, [REPLY], parent=1)
    (tool,) = run(*spans).tool_calls
    assert tool.error == "Error: the order service is down"


def invoke_agent(n: int, name: str, parent: int) -> Span:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return span(n, f"invoke_agent {name}", attributes, parent=parent)


def test_a_sub_agent_span_elsewhere_does_not_stop_the_mapped_agent_being_named() -> None:
    trajectory = run(*agent_run(["store"]), invoke_agent(30, "billing", 10), mappings=MAPPED)
    assert trajectory.agent == "store"
    wrapped = run(*agent_run(["store"]), invoke_agent(30, "store", 10), mappings=MAPPED)
    assert wrapped.agents.count("store") == 1  # the plain span is no second "store"


# LangWatch's vocabulary: its span types and typed values


def typed(kind: str, value: Any) -> str:
    return json.dumps({"type": kind, "value": value})


def langwatch(n: int, name: str, kind: str, parent: int, **values: str) -> Span:
    attributes = {"langwatch.span.type": kind, **{f"langwatch.{k}": v for k, v in values.items()}}
    return span(n, name, attributes, parent=parent)


def test_langwatch_spans_are_read_by_their_types_and_typed_values() -> None:
    asked = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Order 7?"}]
    trajectory = run(
        langwatch(1, "turn", "span", 0, input=typed("json", {"message": "Order 7?"}),
                  output=typed("text", "It shipped.")),
        langwatch(2, "graph", "chain", 1),
        langwatch(3, "llm", "llm", 2, input=typed("chat_messages", asked),
                  output=typed("chat_messages", [{"role": "assistant", "content": ""}])),
        langwatch(4, "lookup", "tool", 2, input=typed("text", "{'order': 7}"),
                  output=typed("chat_messages", [{"role": "unknown", "content": '{"at": 1}'}])),
        langwatch(5, "llm", "llm", 2, input=typed("chat_messages", asked),
                  output=typed("chat_messages", [{"role": "assistant", "content": "It shipped."}])),
    )  # fmt: skip
    kinds = [step.kind for step in trajectory.steps]
    assert kinds == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    (tool,) = trajectory.tool_calls
    assert (tool.name, tool.args, tool.result) == ("lookup", {"order": 7}, {"at": 1})
    assert (trajectory.input, trajectory.output) == ("Order 7?", "It shipped.")
    assert trajectory.agent is None  # a traced function and a chain name no agent


def test_a_value_that_is_no_typed_value_is_no_langwatch_content() -> None:
    odd = langwatch(2, "lookup", "tool", 1, input="{'order': 7}", output='{"type": 5}')
    (tool,) = run(span(1, "turn"), odd).tool_calls
    assert (tool.args, tool.result) == (None, None)


# Laminar's own OpenAI spans: the reply as the response's choices, beside another layer

CHOICE = {"index": 0, "finish_reason": "tool_calls", "message": {
    "role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
    "function": {"name": "lookup", "arguments": '{"order": 7}'}}]}}  # fmt: skip
ASKED_CHAT = {"role": "assistant", "tool_calls": CHOICE["message"]["tool_calls"]}  # type: ignore[index]
ANSWER_CHAT = {"role": "tool", "tool_call_id": "c1", "content": "shipped"}
DONE = {
    "index": 0,
    "finish_reason": "stop",
    "message": {"role": "assistant", "content": "It shipped."},
}


def test_a_reply_written_as_the_response_choices_is_read_through_them() -> None:
    trajectory = run(
        span(1, "turn"),
        model_call(2, [SYSTEM, ASK], [CHOICE], parent=1),
        model_call(3, [SYSTEM, ASK, ASKED_CHAT, ANSWER_CHAT], [DONE], parent=1),
    )
    kinds = [step.kind for step in trajectory.steps]
    assert kinds == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    (tool,) = trajectory.tool_calls
    assert (tool.args, tool.call_id, tool.result) == ({"order": 7}, "c1", "shipped")
    assert trajectory.output == "It shipped."


def beside(n: int, response: str, start: int, **more: Any) -> Span:
    """A model call read by rule 65 (no operation) recording ``response``, from ``start``."""
    found = model_call(n, [SYSTEM, ASK], [REPLY], parent=1, **{"gen_ai.response.id": response})
    return found._replace(start_unix_nano=start, end_unix_nano=start + 300, **more)


def test_a_second_instrumentation_beside_a_call_is_a_layer_of_it() -> None:
    chat = {"gen_ai.operation.name": "chat", "gen_ai.response.id": "r1"}
    framework = model_call(2, [SYSTEM, ASK], [REPLY], parent=1, **chat)  # 2000-2500
    twice = run(span(1, "turn"), framework, beside(3, "r1", 2100))
    assert [step.kind for step in twice.steps] == [StepKind.LLM]
    assert "duplicate_instrumentation" in twice.gaps
    assert len(run(span(1, "turn"), framework, beside(3, "r2", 2100)).steps) == 2  # two calls
    reused = run(span(1, "turn"), framework, beside(3, "r1", 9000))  # later: a reused id
    assert len(reused.steps) == 2 and "duplicate_instrumentation" not in reused.gaps
    empty = {**chat, "gen_ai.response.id": ""}
    no_ids = run(span(1, "turn"), model_call(2, [SYSTEM, ASK], [REPLY], parent=1, **empty),
                 beside(3, "", 2100))  # fmt: skip
    assert len(no_ids.steps) == 2


def test_of_two_instrumentations_the_one_with_the_content_stays() -> None:
    """The client library's span with content capture off (model, tokens, response id)
    beside a span read by rule 65: the reply's calls and text are kept."""
    bare = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.response.id": "r1",
    }
    spans = one_call_run()
    spans[1] = spans[1]._replace(attributes={**spans[1].attributes, "gen_ai.response.id": "r1"})
    client = span(9, "chat m", bare, parent=1, start=2100, end=2400)
    trajectory = run(*spans, client)
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    assert "duplicate_instrumentation" in trajectory.gaps
    nested = run(*spans, client._replace(parent_span_id=spans[1].span_id))
    assert [step.kind for step in nested.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]


def test_a_chain_of_layers_below_a_call_read_by_evidence_is_one_call() -> None:
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    outer = model_call(2, [SYSTEM, ASK], [REPLY], parent=1)
    layered = run(span(1, "turn"), outer, span(3, "chat m", chat, parent=2),
                  span(4, "chat m", chat, parent=3))  # fmt: skip
    assert [step.kind for step in layered.steps] == [StepKind.LLM]
    workflow = {"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "w"}
    inner = model_call(4, [SYSTEM, ASK], [REPLY], parent=3, **{"gen_ai.operation.name": "chat"})
    through = run(span(1, "turn"), outer, span(3, "invoke_workflow w", workflow, parent=2), inner)
    assert [step.kind for step in through.steps] == [StepKind.LLM]


def test_only_the_first_choice_is_the_reply() -> None:
    second = {
        "index": 1,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": "No."},
    }
    trajectory = run(span(1, "turn"), model_call(2, [SYSTEM, ASK], [DONE, second], parent=1))
    assert trajectory.output == "It shipped."


# A review of rule 67 and the LangWatch vocabulary (session 20)


def test_a_client_layer_below_a_call_read_by_evidence_is_the_same_call() -> None:
    """A framework's call span (read by rule 67 or 65) over the client library's GenAI
    span (content capture off: model and tokens only) is one call, its content kept."""
    text_reply = {"role": "assistant", "additional_kwargs": {},
                  "blocks": [{"block_type": "text", "text": "It shipped."}]}  # fmt: skip
    client = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
              "gen_ai.usage.input_tokens": 12}  # fmt: skip
    first = chat_in_events(2, 1, [SYSTEM_BLOCKS, ASK_BLOCKS], ASKING)
    second = chat_in_events(5, 1, [SYSTEM_BLOCKS, ASK_BLOCKS, ASKING, ANSWERED], text_reply)
    trajectory = run(
        span(1, "Agent.run"), *first, span(8, "chat m", client, parent=3),
        span(4, "Tool.acall", parent=1), *second, span(9, "chat m", client, parent=6),
    )  # fmt: skip
    kinds = [step.kind for step in trajectory.steps]
    assert kinds == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    assert (trajectory.input, trajectory.output) == ("Where is order 7?", "It shipped.")
    assert "duplicate_instrumentation" in trajectory.gaps


def test_events_that_name_no_model_nor_a_role_in_the_request_are_no_model_call() -> None:
    dumped = {"messages": json.dumps([ASK_BLOCKS]), "response.message.role": "assistant",
              "response.message.content": "done"}  # fmt: skip
    assert run(span(1, "Agent.run"), span(2, "memory.save", parent=1,
                                          events=(("Saved", dumped),))).steps == ()  # fmt: skip
    texts = {**dumped, "messages": '["email sent", "sms sent"]', "response.raw.model": "m"}
    assert run(span(1, "Agent.run"), span(2, "notify", parent=1,
                                          events=(("Sent", texts),))).steps == ()  # fmt: skip


def test_odd_tool_calls_values_cost_no_trace() -> None:
    odd = {"role": "assistant", "tool_calls": 5, "additional_kwargs": {"tool_calls": 5}}
    trajectory = run(span(1, "turn"), model_call(2, [SYSTEM, ASK, odd], [REPLY], parent=1))
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM]
    reply = typed("chat_messages", [{"role": "assistant", "content": "", "tool_calls": 5}])
    llm = langwatch(2, "llm", "llm", 1, input=typed("chat_messages", [ASK]), output=reply)
    assert [step.kind for step in run(span(1, "turn"), llm).steps] == [StepKind.LLM]


def test_provider_fields_name_no_answer_off_tool_messages_nor_refused_calls() -> None:
    user = {"role": "user", "content": "hi", "additional_kwargs": {"tool_call_id": "c1"}}
    asked = ASKING["additional_kwargs"]["tool_calls"]
    refused = {"role": "assistant", "content": "", "tool_calls": [],
               "invalid_tool_calls": [{"name": "lookup", "args": "{bad"}],
               "additional_kwargs": {"tool_calls": asked}}  # fmt: skip
    trajectory = run(
        span(1, "turn"),
        model_call(2, [SYSTEM, ASK], [CALL], parent=1),
        model_call(3, [SYSTEM, ASK, refused, user], [REPLY], parent=1),
    )
    assert all(step.result != "hi" for step in trajectory.tool_calls)  # (the user's text)


def test_langwatch_values_are_unwrapped_whatever_their_type() -> None:
    answers = [{"role": "tool", "content": "draft"}, {"role": "tool", "content": '{"at": 1}'}]
    tool = langwatch(3, "lookup", "tool", 1, input=typed("list", [typed_item("text", "7")]),
                     output=typed("chat_messages", answers))  # fmt: skip
    asked = typed("json", {"messages": [ASK]})
    llm = langwatch(2, "llm", "llm", 1, input=asked, output=typed("chat_messages", [REPLY]))
    trajectory = run(span(1, "turn"), llm, tool)
    (step,) = trajectory.tool_calls
    assert (step.args, step.result) == (["7"], {"at": 1})
    assert trajectory.input == "Where is order 7?"


def typed_item(kind: str, value: Any) -> dict[str, Any]:
    return {"type": kind, "value": value}


# MLflow's LlamaIndex autolog: a response object, and a prepared request typed as a model


def mlflow_span(  # noqa: PLR0917 - the span's fields, in the order a tree reads
    n: int, name: str, kind: str, parent: int, inputs: Any, outputs: Any
) -> Span:
    attributes = {"mlflow.spanType": json.dumps(kind), "mlflow.spanInputs": json.dumps(inputs),
                  "mlflow.spanOutputs": json.dumps(outputs)}  # fmt: skip
    return span(n, name, attributes, parent=parent)


def test_mlflow_a_response_object_holds_the_reply_and_a_prepared_request_requests_nothing() -> None:
    done = {"role": "assistant", "additional_kwargs": {},
            "blocks": [{"block_type": "text", "text": "It shipped."}]}  # fmt: skip
    history = {"messages": [SYSTEM_BLOCKS, ASK_BLOCKS, ASKING, ANSWERED]}
    trajectory = run(
        mlflow_span(1, "Agent.run", "AGENT", 0, {"user_msg": "Where is order 7?"}, {}),
        mlflow_span(2, "Model.achat", "CHAT_MODEL", 1, {"messages": [SYSTEM_BLOCKS, ASK_BLOCKS]},
                    {"message": ASKING, "raw": {"id": "r1"}}),
        mlflow_span(3, "lookup", "TOOL", 1, {"kwargs": {"order": 7}}, "shipped"),
        mlflow_span(4, "Model._prepare_chat_with_tools", "LLM", 1, {"tools": []}, history),
        mlflow_span(5, "Model.achat", "CHAT_MODEL", 1, history, {"message": done, "raw": {}}),
    )  # fmt: skip
    assert [call.name for call in trajectory.tool_calls] == ["lookup"]  # (no phantom call)
    assert all(step.executed for step in trajectory.tool_calls)
    assert trajectory.output == "It shipped."


def test_mlflow_arguments_rendered_as_a_python_repr_are_no_run_input() -> None:
    repr_input = "{'user_msg': 'Where is order 7?', 'memory': ChatMemoryBuffer(token_limit=3)}"
    root = mlflow_span(1, "Agent.run", "AGENT", 0, repr_input, {})  # (MLflow JSON-quotes it)
    call = mlflow_span(2, "Model.achat", "CHAT_MODEL", 1, {"messages": [SYSTEM_BLOCKS, ASK_BLOCKS]},
                       {"message": {"role": "assistant", "content": "Hi."}})  # fmt: skip
    assert run(root, call).input == "Where is order 7?"  # (the model's request instead)


def test_mlflow_replies_without_roles_and_user_text_like_a_repr_are_kept() -> None:
    """A reply list whose items carry no role (DSPy's LM: ``[{"text", "tool_calls"}]``) is
    still a reply; a user's question that starts like a dict's repr is still the input."""
    asked = [{"text": None, "tool_calls": ASKING["additional_kwargs"]["tool_calls"]}]
    question = "{'a': 1} -- why is this not valid JSON?"
    trajectory = run(
        mlflow_span(1, "Program", "AGENT", 0, {"messages": [{"role": "user", "content": question}]},
                    {}),
        mlflow_span(2, "LM.__call__", "CHAT_MODEL", 1,
                    {"messages": [{"role": "user", "content": question}]}, asked),
    )  # fmt: skip
    assert [call.name for call in trajectory.tool_calls] == ["lookup"]
    assert trajectory.input == question
