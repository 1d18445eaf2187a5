"""Rules from the thirteenth blind round (session 24, ADR 0017 addendum): minimal traces
of the shapes Langtrace over LlamaIndex and AgentScope's own tracing showed, never keyed
to their names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import genai_agent, genai_tool, run, span

from collector.core.records import Span, StatusCode
from collector.normalize.conventions import openinference
from collector.normalize.detached_calls import adopt_detached_calls
from collector.normalize.detect import classify
from collector.normalize.history import message_of
from collector.normalize.messages import content_tool_calls, role_of
from collector.normalize.results import parse_result
from collector.normalize.tree import SpanTree

ASK = {"role": "user", "content": "Refund track 3 of invoice 9."}


def function_item(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip


def chat_events(n: int, prompt: list[dict[str, Any]], reply: dict[str, Any]) -> Span:
    """A model call recording its request and reply as prompt / completion events."""
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                  "gen_ai.request.model": "m"}  # fmt: skip
    events = (
        ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(prompt)}),
        ("gen_ai.content.completion", {"gen_ai.completion": json.dumps([reply])}),
    )
    return span(n, "openai.chat", attributes, parent=1, events=events)


def test_calls_written_as_the_replys_content_list_are_requested_and_answered() -> None:
    """Rule 86: a reply's ``content`` list of Chat Completions tool-call items."""
    items = [function_item("c1", "lookup_invoice", invoice=9),
             function_item("c2", "lookup_track", track=3)]  # fmt: skip
    first = {"role": "assistant", "content": items}
    stub = {"role": "assistant", "content": [json.dumps({"id": "", "type": ""})]}
    answers = [
        {"role": "tool", "tool_call_id": "c1", "content": '{"total": 1.29}'},
        {"role": "tool", "tool_call_id": "c2", "content": '{"track_id": 3}'},
    ]
    trajectory = run(
        span(1, "turn", {}),
        chat_events(2, [ASK], first),
        chat_events(3, [ASK, stub, *answers], {"role": "assistant", "content": "Refunded."}),
    )
    calls = [(s.name, s.args, s.result, s.call_id) for s in trajectory.tool_calls]
    assert calls == [("lookup_invoice", {"invoice": 9}, {"total": 1.29}, "c1"),
                     ("lookup_track", {"track": 3}, {"track_id": 3}, "c2")]  # fmt: skip
    assert trajectory.output == "Refunded."
    assert "tool_calls" not in trajectory.gaps


def test_a_content_list_with_text_is_no_call() -> None:
    items = [{"type": "text", "text": "hi"}, function_item("c1", "refund")]
    mixed = {"role": "assistant", "content": items}
    trajectory = run(span(1, "turn", {}), chat_events(2, [ASK], mixed))
    assert trajectory.tool_calls == ()


def test_an_assistant_message_of_the_history_with_calls_in_its_content() -> None:
    """The same shape in a later request's history, the reply that asked not recorded:
    the call is rebuilt from the history and paired with its answer."""
    asked = {"role": "assistant", "content": [function_item("c1", "lookup_invoice", invoice=9)]}
    answered = {"role": "tool", "tool_call_id": "c1", "content": '{"total": 1.29}'}
    final = {"role": "assistant", "content": "Done."}
    unanswered = chat_events(2, [ASK], final)
    unanswered = unanswered._replace(events=unanswered.events[:1])  # (no completion event)
    trajectory = run(span(1, "turn", {}), unanswered, chat_events(3, [ASK, asked, answered], final))
    assert [(s.name, s.result, s.executed) for s in trajectory.tool_calls] == [
        ("lookup_invoice", {"total": 1.29}, True)
    ]


RESPONSE_REPR = (
    "ToolResponse(content=[{'type': 'text', 'text': '{\"track_id\": 3}'}], metadata=None,"
    " stream=False, is_last=True, is_interrupted=False, id='x')"
)


def test_a_result_serialised_twice_is_read_once_more() -> None:
    """Rule 87: JSON text of the text a tool's response object printed as."""
    assert parse_result(json.dumps(json.dumps({"a": 1}))).value == {"a": 1}
    assert parse_result(json.dumps("plain words")).value == "plain words"
    # one level only, and only for a structure's text: a string a tool returned, JSON-encoded
    # by its tracer, is that string ("42" stays text, not the number)
    thrice = json.dumps(json.dumps(json.dumps({"a": 1})))
    assert parse_result(thrice).value == json.dumps(json.dumps({"a": 1}))
    assert parse_result(json.dumps("42")).value == "42"


def test_a_response_object_around_text_blocks_is_its_content() -> None:
    """Rule 88: ``content`` text blocks beside bookkeeping scalars, no error flag."""
    assert parse_result(json.dumps(RESPONSE_REPR)).value == {"track_id": 3}
    failed = RESPONSE_REPR.replace('{"track_id": 3}', "Error: RefundWindowExpired: too old")
    found = parse_result(json.dumps(failed))
    assert found.error is not None and "RefundWindowExpired" in found.error
    blocks = [{"type": "text", "text": "ok"}]
    # an error flag raised, or a structured field beside the blocks: not a bare response
    assert parse_result(json.dumps({"content": blocks, "isError": True})).error == "ok"
    structured = {"content": blocks, "structuredContent": {"ok": True}}
    assert parse_result(json.dumps(structured)).value == structured
    # a tool's own fields, or an error it reports, beside the blocks: the tool's object
    page = {"id": "page-1", "title": "Spec", "content": blocks}
    assert parse_result(json.dumps(page)).value == page
    quota = {"content": blocks, "error": "quota exceeded"}
    assert parse_result(json.dumps(quota)).value == quota
    assert parse_result(json.dumps({"content": blocks, "isError": False})).value == "ok"


def test_a_tool_span_whose_result_was_serialised_twice() -> None:
    trajectory = run(
        genai_agent(),
        genai_tool(2, "lookup_track", '{"track": 3}', call_id="c1",
                   **{"gen_ai.tool.call.result": json.dumps(RESPONSE_REPR)}),
    )  # fmt: skip
    assert [s.result for s in trajectory.tool_calls] == [{"track_id": 3}]


def test_a_session_id_written_as_a_json_string_is_the_string() -> None:
    """Rule 89: ``"sess-1"`` with its quotes is ``sess-1``."""
    agent = genai_agent(**{"gen_ai.conversation.id": '"sess-1"'})
    assert run(agent).session_id == "sess-1"
    assert run(genai_agent(**{"gen_ai.conversation.id": '"'})).session_id == '"'
    assert run(genai_agent(**{"gen_ai.conversation.id": '""'})).session_id == '""'


def asking_chat(n: int, call_id: str, name: str, parent: int = 1, **args: Any) -> Span:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": args}
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.input.messages": json.dumps([ASK]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [part]}]),
    }
    return span(n, "chat m", attributes, parent=parent)


FAILURE = "AgentToolExecutionError: Error executing tool 'refund': RefundWindowExpired: too old"


def failed_execution(n: int, name: str = "refund", status: int = StatusCode.ERROR) -> Span:
    """What an instrumentation that writes a tool span's attributes only on return leaves
    of a failed call: the conventions' span name, the status, ``error.type``."""
    message = FAILURE if status == StatusCode.ERROR else ""
    attributes = {"error.type": "AgentToolExecutionError"}
    return span(n, f"execute_tool {name}", attributes, parent=2, status=status, message=message)


def test_a_failed_span_named_as_a_requested_tools_execution_ran_it() -> None:
    """Rule 90: ``execute_tool refund``, ERROR, after the model call that asked for it."""
    ask = asking_chat(3, "c9", "refund", parent=2, invoice=9)
    trajectory = run(genai_agent(), span(2, "step 1", {}, parent=1), ask, failed_execution(4))
    [step] = trajectory.tool_calls
    assert (step.name, step.args, step.call_id, step.executed) == (
        "refund",
        {"invoice": 9},
        "c9",
        True,
    )
    assert step.error is not None and "RefundWindowExpired" in step.error


def test_no_failure_no_request_or_no_order_is_no_tool_span() -> None:
    def refund_calls(*spans: Span) -> list[tuple[str, bool]]:
        trajectory = run(genai_agent(), span(2, "step 1", {}, parent=1), *spans)
        return [(s.name, s.executed) for s in trajectory.tool_calls]

    ask = asking_chat(3, "c9", "refund", parent=2, invoice=9)
    # a span that did not fail is no evidence (a phase of the loop may be named so)
    assert refund_calls(ask, failed_execution(4, status=StatusCode.OK)) == [("refund", False)]
    # a tool no model call requested
    assert refund_calls(ask, failed_execution(4, name="delete_all")) == [("refund", False)]
    # the model asked only after the span had started
    late = asking_chat(5, "c9", "refund", parent=2, invoice=9)
    assert refund_calls(failed_execution(4), late) == [("refund", False)]


def test_a_tool_spans_made_up_id_gives_way_to_the_models() -> None:
    """Rule 91: a span joined by name whose own id the model never gave takes the model's."""
    trajectory = run(
        genai_agent(),
        asking_chat(2, "call_1", "lookup_track", track=3),
        genai_tool(3, "lookup_track", '{"track": 3}', call_id="673e0fb8-uuid"),
    )
    assert [s.call_id for s in trajectory.tool_calls] == ["call_1"]


def oi_span(n: int, kind: str, parent: int, **attributes: Any) -> Span:
    return span(n, f"{kind.lower()} {n}", {"openinference.span.kind": kind, **attributes},
                parent=parent)  # fmt: skip


def loop_trace(with_tools: bool = True, steps: int = 2) -> list[Span]:
    """An agent whose whole loop is one LLM span (the model, the first request, the final
    answer), with one LLM span per request below it, each with a request-less chunk span
    below a chain, and the tools between them (Mastra's AI tracing under OpenInference)."""
    ask = json.dumps([ASK])
    spans = [
        oi_span(1, "AGENT", 0, **{"agent.name": "shop", "input.value": ASK["content"]}),
        oi_span(2, "LLM", 1, **{"llm.model_name": "m",
                                "llm.input_messages.0.message.role": "user",
                                "llm.input_messages.0.message.content": ASK["content"],
                                "llm.output_messages.0.message.role": "assistant",
                                "llm.output_messages.0.message.content": "Done."}),
    ]  # fmt: skip
    for k in range(steps):
        base = 10 * (k + 1)
        last = k == steps - 1
        reply = {"text": "Done." if last else "", "toolCalls": []}
        spans.append(
            oi_span(base, "LLM", 2, **{"input.value": ask, "output.value": json.dumps(reply)})
        )
        spans.append(oi_span(base + 1, "CHAIN", base))
        spans.append(oi_span(base + 2, "LLM", base + 1, **{"output.value": json.dumps(reply)}))
        if with_tools and not last:
            spans.append(
                oi_span(base + 3, "TOOL", base, **{"tool.name": "lookup", "input.value": "{}"})
            )
    return spans


def test_a_model_span_around_the_loop_and_its_tools_is_the_loop() -> None:
    """Rule 92: each request below it is a model call; its chunks are parts of a call."""
    trajectory = run(*loop_trace(steps=3))
    steps = [(s.kind.value, s.name) for s in trajectory.steps]
    assert steps == [("llm", "llm 10"), ("tool", "lookup"), ("llm", "llm 20"),
                     ("tool", "lookup"), ("llm", "llm 30")]  # fmt: skip
    assert "duplicate_instrumentation" not in trajectory.gaps
    assert trajectory.output == "Done."  # (the last call's generation result's text)


def test_a_model_span_without_tools_below_or_with_one_request_is_one_call() -> None:
    no_tools = run(*loop_trace(with_tools=False, steps=3))
    assert sum(s.kind.value == "llm" for s in no_tools.steps) == 1
    one_request = run(*loop_trace(steps=1), oi_span(5, "TOOL", 2, **{"tool.name": "lookup"}))
    [call] = [s for s in one_request.steps if s.kind.value == "llm"]
    assert call.model == "m"  # the outer span is the call, the inner one a layer of it


def test_a_generation_result_recorded_as_the_output_value_is_the_reply() -> None:
    def reply(value: dict[str, Any]) -> str | None:
        return openinference.llm_output(oi_span(2, "LLM", 1, **{"output.value": json.dumps(value)}))

    assert reply({"text": "Done.", "toolCalls": []}) == "Done."
    assert reply({"text": "", "toolCalls": [{"toolName": "lookup"}]}) is None
    assert reply({"choices": [{"message": {"content": "x"}}]}) is None


def idle_agent(n: int, start: int, end: int, name: str = "shop", model: str | None = None) -> Span:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": name,
    }
    if model is not None:
        attributes["gen_ai.request.model"] = model
    return span(n, f"invoke_agent {name}", attributes, parent=2, start=start, end=end)


def detached_chat(n: int, start: int, model: str = "m") -> Span:
    chat = asking_chat(n, f"c{n}", "lookup_track", parent=1, track=n)
    attributes = {**chat.attributes, "gen_ai.request.model": model}
    return chat._replace(attributes=attributes, start_unix_nano=start, end_unix_nano=start + 100)


def detached_run(*spans: Span) -> Any:
    root = span(1, "turn", {}, start=0, end=100_000)
    task = span(
        2, "task", {"gen_ai.operation.name": "invoke_agent"}, parent=1, start=500, end=90_000
    )
    return run(root, task, *spans)


def test_calls_cut_off_from_the_one_named_agent_are_its() -> None:
    """Rule 93: the calls hang under the root, within the idle agent's time, its model."""
    trajectory = detached_run(idle_agent(3, 1_000, 80_000, model="m"),
                              detached_chat(10, 2_000), detached_chat(11, 5_000))  # fmt: skip
    assert trajectory.agent == "shop"
    assert {s.agent for s in trajectory.steps if s.kind.value == "llm"} == {"shop"}


def test_calls_outside_its_time_of_another_model_or_beside_two_agents_stay() -> None:
    before = detached_run(
        idle_agent(3, 1_000, 80_000), detached_chat(10, 600), detached_chat(11, 5_000)
    )
    assert next(s.agent for s in before.steps if s.kind.value == "llm") != "shop"
    late = detached_chat(11, 79_950)  # (ends after the agent did)
    after = detached_run(idle_agent(3, 1_000, 80_000), detached_chat(10, 2_000), late)
    assert [s.agent for s in after.steps if s.kind.value == "llm"][-1] != "shop"
    other_model = detached_run(
        idle_agent(3, 1_000, 80_000, model="m"), detached_chat(10, 2_000, "x")
    )
    assert other_model.agent != "shop"
    two = detached_run(idle_agent(3, 1_000, 80_000), idle_agent(4, 1_000, 80_000, name="b"),
                       detached_chat(10, 2_000))  # fmt: skip
    assert "shop" not in {s.agent for s in two.steps if s.kind.value == "llm"}


def test_an_agent_that_made_calls_adopts_none() -> None:
    own = asking_chat(5, "c5", "lookup_album", parent=3, album=1)
    own = own._replace(start_unix_nano=1_500, end_unix_nano=1_600)
    trajectory = detached_run(idle_agent(3, 1_000, 80_000), own, detached_chat(10, 2_000))
    assert [s.agent for s in trajectory.steps if s.kind.value == "llm"][-1] != "shop"


def test_a_call_inside_another_call_stays_with_it() -> None:
    """A model call below a tool (an agent-as-tool's) is that tool's, not the agent's."""
    tool = genai_tool(6, "ask_expert", "{}", call_id="t1", parent=1)
    tool = tool._replace(start_unix_nano=600, end_unix_nano=3_000)
    inner = detached_chat(7, 2_000)._replace(parent_span_id=tool.span_id)
    trajectory = detached_run(idle_agent(3, 1_000, 80_000), tool, inner, detached_chat(10, 4_000))
    assert next(s.agent for s in trajectory.steps if s.kind.value == "llm") != "shop"


def test_messages_typed_by_role_calls_written_flat_and_results_by_call_id() -> None:
    """Rule 94: AutoGen's own message dumps (no ``role``): ``UserMessage``,
    ``AssistantMessage`` holding ``FunctionCall`` items, ``FunctionExecutionResult`` items
    naming their call by ``call_id``, an error flag raised when the tool failed."""
    assert role_of({"type": "UserMessage", "content": "hi"}) == "user"
    assert role_of({"type": "AssistantMessage"}) == "assistant"
    assert role_of({"type": "TextMessage"}) == "textmessage"  # (no role named)
    flat = {"id": "c1", "name": "refund", "arguments": '{"invoice": 9}'}
    asked = {"type": "AssistantMessage", "source": "shop", "content": [flat]}
    [call] = message_of(asked).calls
    assert (call.call_id, call.name, call.args) == ("c1", "refund", {"invoice": 9})
    results = {"type": "FunctionExecutionResultMessage", "content": [
        {"content": "RefundWindowExpired: too old", "name": "refund", "call_id": "c1",
         "is_error": True},
        {"content": '{"ok": 1}', "name": "lookup", "call_id": "c2", "is_error": False},
    ]}  # fmt: skip
    failed, done = message_of(results).answers
    assert (failed.call_id, failed.result.error) == ("c1", "RefundWindowExpired: too old")
    assert (done.call_id, done.result.value, done.result.error) == ("c2", {"ok": 1}, None)
    # an item with more than an id, a name and the arguments is no flat call
    assert content_tool_calls([{"id": "c1", "name": "x", "arguments": "{}", "text": "t"}]) == []


def mlflow_span(n: int, name: str, kind: str, parent: int, **attributes: Any) -> Span:
    return span(n, name, {"mlflow.spanType": json.dumps(kind), **attributes}, parent=parent)


def replies_by(*authors: str) -> Span:
    """A model call whose request holds earlier replies written by ``authors``."""
    sent = [{"type": "UserMessage", "source": "user", "content": "Refund track 3."}]
    sent += [{"type": "AssistantMessage", "source": who, "content": "..."} for who in authors]
    inputs = json.dumps({"messages": sent})
    return mlflow_span(3, "Client.create", "CHAT_MODEL", 2, **{"mlflow.spanInputs": inputs})


def test_an_agent_span_naming_no_agent_is_the_author_of_its_replies() -> None:
    """Rule 95: ``<agent>.run`` around ``<agent>.on_messages``, the messages' ``source``."""
    outer = mlflow_span(1, "shop.run", "AGENT", 0)
    inner = mlflow_span(2, "shop.on_messages", "AGENT", 1)
    trajectory = run(outer, inner, replies_by("shop", "shop"))
    assert (trajectory.agent, trajectory.agents) == ("shop", ("shop",))
    # two authors (a group chat) or none: the span's name, as before
    assert run(outer, inner, replies_by("shop", "critic")).agent == "shop.run"
    assert run(outer, inner, replies_by()).agent == "shop.run"


def ag2_tool(n: int, **attributes: Any) -> Span:
    """AgentOps' AG2 tool span: the tool's kind as its name, the executed call as the one
    entry of a request's tool list (arguments JSON text in a JSON string), the reply as
    a legacy ``function`` message."""
    base = {"agentops.span.kind": "tool", "tool.name": "function",
            "gen_ai.request.tools.0.name": "refund",
            "gen_ai.request.tools.0.arguments": json.dumps(json.dumps({"invoice": 9})),
            "tool.result": json.dumps({"name": "refund", "role": "function",
                                       "content": "{'refund_id': 'RF-9'}"})}  # fmt: skip
    return span(n, "ag2.tool.function.tool_usage", {**base, **attributes}, parent=1)


def test_a_tool_span_naming_its_kind_runs_its_call_entry() -> None:
    """Rule 96: ``tool.name: function`` is the kind; the entry names the call."""
    [step] = run(genai_agent(), ag2_tool(2)).tool_calls
    assert (step.name, step.args, step.result) == ("refund", {"invoice": 9}, {"refund_id": "RF-9"})
    # two entries are a list of definitions, not the call: nothing is taken from them
    two = ag2_tool(2, **{"gen_ai.request.tools.1.name": "lookup"})
    [step] = run(genai_agent(), two).tool_calls
    assert (step.name, step.args) == ("function", None)
    # a real name is kept
    named = ag2_tool(2, **{"tool.name": "refund_v2"})
    assert [s.name for s in run(genai_agent(), named).tool_calls] == ["refund_v2"]


def test_a_function_message_is_what_the_function_returned() -> None:
    """Rule 97: ``{"role": "function", "name", "content"}`` unwraps to its content, read
    as a result (a Python repr, an error opening)."""
    failed = json.dumps({"name": "refund", "role": "function",
                         "content": "Error: RefundWindowExpired: too old"})  # fmt: skip
    found = parse_result(failed)
    assert found.error is not None and "RefundWindowExpired" in found.error
    assert parse_result(json.dumps({"role": "function", "name": "f", "content": "[1]"})).value == [
        1
    ]
    extra = {"role": "function", "name": "f", "content": "x", "id": "m1"}
    assert parse_result(json.dumps(extra)).value == extra  # (another field: not that message)


def test_an_agent_run_recorded_by_its_namespace_alone_is_read_with_its_gaps() -> None:
    """Rule 98: ``<ns>.agent.name`` and ``<ns>.run.prompt`` (and ``.run.result``) on a span
    named in that namespace, nothing below it: the run, its calls stated as not recorded."""
    attributes = {"acme.agent.name": "shop", "acme.run.prompt": "Refund track 3.",
                  "acme.run.result": "Refunded."}  # fmt: skip
    trajectory = run(span(1, "acme.agent.run", attributes))
    assert trajectory.skip_reason is None
    assert (trajectory.agent, trajectory.input, trajectory.output) == (
        "shop",
        "Refund track 3.",
        "Refunded.",
    )
    assert {"tool_calls", "model_calls"} <= set(trajectory.gaps)
    # a key outside the span name's namespace, or no request: no run
    assert run(span(1, "other.run", attributes)).skip_reason is not None
    no_prompt = {"acme.agent.name": "shop", "acme.run.result": "Refunded."}
    assert run(span(1, "acme.agent.run", no_prompt)).skip_reason is not None


def test_a_failed_span_after_a_recorded_execution_is_no_second_one() -> None:
    """Rule 90 runs a request no tool span ran: one execution recorded, one step."""
    ask = asking_chat(3, "c9", "refund", parent=2, invoice=9)
    ran = genai_tool(5, "refund", '{"invoice": 9}', call_id="c9", parent=2)
    trajectory = run(genai_agent(), span(2, "step 1", {}, parent=1), ask, ran, failed_execution(6))
    assert [(s.name, s.call_id, s.error) for s in trajectory.tool_calls] == [("refund", "c9", None)]


def test_calls_are_adopted_in_start_order_and_never_the_agents_own_ancestors() -> None:
    """Rule 93: adopted calls join the agent's children by start time; a call above the
    agent (a clock too coarse to order them) is not adopted: no parent cycle."""
    agent = idle_agent(3, 1_000, 80_000)
    root = span(1, "turn", {}, start=0, end=100_000)
    task = span(
        2, "task", {"gen_ai.operation.name": "invoke_agent"}, parent=1, start=500, end=90_000
    )
    own = span(4, "note", {}, parent=3, start=3_000, end=3_100)
    tree = SpanTree((root, task, agent, own, detached_chat(10, 5_000), detached_chat(11, 2_000)))
    roles = [classify(s, None)[0] for s in tree.spans]
    adopt_detached_calls(tree, roles, None)
    assert [tree.spans[i].name for i in tree.children(2)] == ["chat m", "note", "chat m"]
    assert [tree.spans[i].start_unix_nano for i in tree.children(2)] == [2_000, 3_000, 5_000]
    outer = span(1, "chat", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
                 start=1_000, end=80_000)  # fmt: skip
    inner = idle_agent(3, 1_000, 80_000)._replace(parent_span_id=outer.span_id)
    tree = SpanTree((outer, inner))
    adopt_detached_calls(tree, [classify(s, None)[0] for s in tree.spans], None)
    assert tree.parent == [-1, 0] and tree.tops() == [0]


def test_an_agent_named_by_its_span_is_not_renamed_after_a_persona_or_a_sub_agent() -> None:
    """Rule 95 reads only ``<X>.<method>`` spans, only ``source`` authors equal to X, and
    never walks into another object's agent span (the second review's reproductions)."""

    def agent(n: int, name: str, parent: int = 0) -> Span:
        return span(n, f"invoke_agent {name}", {"gen_ai.operation.name": "invoke_agent"},
                    parent=parent)  # fmt: skip

    def chat(n: int, parent: int, sent: list[dict[str, Any]], end: int | None = None) -> Span:
        reply = [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                      "gen_ai.input.messages": json.dumps(sent),
                      "gen_ai.output.messages": json.dumps(reply)}  # fmt: skip
        return span(n, "chat m", attributes, parent=parent, end=end)

    ask = {"role": "user", "content": "hi"}
    persona = {"role": "assistant", "name": "Ava", "content": "x"}
    assert run(agent(1, "support"), chat(2, 1, [ask, persona, ask])).agent == "support"
    expert = {"role": "assistant", "source": "research_expert", "content": "r"}
    assert run(agent(1, "supervisor"), chat(2, 1, [ask, expert])).agent == "supervisor"
    outer = mlflow_span(1, "shop.run", "AGENT", 0)
    other = mlflow_span(2, "helper.on_messages", "AGENT", 1)
    assert run(outer, other, replies_by("shop")).agent == "shop.run"  # (helper's call)
    inner = mlflow_span(2, "shop.on_messages", "AGENT", 1)
    assert run(outer, inner, replies_by("critic")).agent == "shop.run"  # (not its method)
    named = {"messages": [ask, {"role": "assistant", "name": "shop", "content": "x"}]}
    call = mlflow_span(3, "Client.create", "CHAT_MODEL", 2,
                       **{"mlflow.spanInputs": json.dumps(named)})  # fmt: skip
    assert run(outer, inner, call).agent == "shop.run"  # (a persona's name is no author)


def test_data_records_and_a_users_mention_of_a_call_are_no_calls_or_answers() -> None:
    products = [{"id": "p1", "name": "Widget", "type": "product"}, {"id": "p2", "name": "Gadget"}]
    assert content_tool_calls(products) == []
    typed = [{"id": "p1", "name": "Widget", "arguments": "{}", "type": "product"}]
    assert content_tool_calls(typed) == []
    said = {"role": "user", "content": [{"call_id": "c1", "content": "please retry c1"}]}
    assert message_of(said).answers == []


def test_an_agentops_tool_span_does_not_take_another_tools_entry() -> None:
    other = ag2_tool(2, **{"tool.name": "refund", "gen_ai.request.tools.0.name": "lookup"})
    [step] = run(genai_agent(), other).tool_calls
    assert (step.name, step.args) == ("refund", None)
