"""Rules from the fourteenth blind round (session 25, ADR 0017 addendum): minimal traces
of the shapes the session's captures showed, never keyed to a library's names."""

from __future__ import annotations

from typing import Any

from support.span_kit import genai_agent, genai_chat, genai_tool, run, span

from collector.core.records import AttrValue, Span
from collector.normalize import Mappings
from collector.normalize.detect import classify
from collector.normalize.named_agents import confirmed_agents
from collector.normalize.tree import SpanTree
from evaluators.trajectory import Trajectory


def test_a_span_its_children_name_under_a_dot_agent_name_key_is_that_agent() -> None:
    """Rule 99 (rule 66 unmapped): a plain span named X, a child recording X under a key
    ending in ``.agent.name`` (Langtrace's ``agno.agent.name`` on a zero-length
    ``Agent.arun`` beside the model calls), a model call below: agent X's run."""
    trajectory = run(
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"vendor.agent.name": "music_store_support"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    assert trajectory.agent == "music_store_support"
    assert {step.agent for step in trajectory.steps} == {"music_store_support"}


def chat_of(n: int, agent: str, parent: int = 1) -> Span:
    """A model call under span ``parent`` that says which agent made it."""
    chat = genai_chat(n, [], parent=parent, text="Done.")
    return chat._replace(attributes={**chat.attributes, "gen_ai.agent.name": agent})


def test_a_wrapper_around_the_agent_span_it_names_is_no_agent() -> None:
    """A user's span named after the agent around the agent's own span (which records
    the name, ``gen_ai.agent.name``), a model call beside it: one agent run, the span's;
    the wrapper is not the agent a second time. A sub-agent among the children does not
    stop a supervisor named by its own model calls."""
    wrapped = (
        span(1, "shop", {}),
        span(
            2,
            "invoke_agent shop",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shop"},
            parent=1,
        ),
        chat_of(3, "shop"),  # (its model call beside it says whose it is)
    )
    tree = SpanTree(wrapped)
    roles = [classify(s, None)[0] for s in tree.spans]
    assert confirmed_agents(tree, roles) == {}
    supervisor = run(
        span(1, "triage", {}),
        chat_of(2, "triage"),
        span(3, "invoke_agent billing", {"gen_ai.operation.name": "invoke_agent",
                                         "gen_ai.agent.name": "billing"}, parent=1),
        genai_chat(4, [], parent=3, text="Done."),
    )  # fmt: skip
    assert supervisor.agent == "triage"


def test_no_name_without_the_match_a_model_call_or_agreement() -> None:
    named_else = run(
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"vendor.agent.name": "other"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    no_model = run(
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"vendor.agent.name": "music_store_support"}, parent=1),
    )
    names = {"vendor.agent.name": "music_store_support", "other.agent.name": "billing"}
    disagreeing = [
        run(
            span(1, "music_store_support", {}),
            span(2, "Agent.arun", dict(order), parent=1),
            genai_chat(3, [], parent=1, text="Done."),
        )
        for order in (names.items(), reversed(names.items()))
    ]
    bare_key = run(  # (a bare ``agent_name`` is no namespaced key)
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"agent_name": "music_store_support"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    across = [  # (two children, each one name: they disagree)
        run(
            span(1, "music_store_support", {}),
            span(2, "a", {first: "music_store_support"}, parent=1),
            span(3, "b", {second: "billing"}, parent=1),
            genai_chat(4, [], parent=1, text="Done."),
        )
        for first, second in (("v.agent.name", "w.agent.name"), ("w.agent.name", "v.agent.name"))
    ]
    undotted = run(
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"x.subagent.name": "music_store_support"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    cases = (named_else, no_model, *disagreeing, bare_key, *across, undotted)
    assert [t.agent for t in cases] == [None] * len(cases)


def test_a_mapped_key_is_read_as_before() -> None:
    """With ``normalization.mappings.agent_name`` the mapped key alone is read."""
    spans = (
        span(1, "music_store_support", {}),
        span(2, "turn", {"x.turn.agent_name": "music_store_support"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    assert run(*spans).agent is None
    mapped = Mappings.model_validate({"agent_name": "x.turn.agent_name"})
    assert run(*spans, mappings=mapped).agent == "music_store_support"


def tool_with_result(result: str, **extra: Any) -> Trajectory:
    """An agent run whose one tool span records its own call id and ``result``."""
    return run(
        genai_agent(),
        genai_tool(
            2,
            "refund",
            '{"invoice_id": 877}',
            call_id="c1",
            **{"gen_ai.tool.call.result": result},
            **extra,
        ),
    )


def test_an_exception_kept_as_the_output_is_the_calls_failure() -> None:
    """Rule 100: the repr of an exception object (its class, one quoted argument) as the
    whole result text. Found though the span records its own call id (such a text is
    never deferred unparsed); escapes decoded, a lone surrogate kept escaped."""
    cases = {
        "StoreError('RefundWindowExpired: invoice 877')":
            "StoreError: RefundWindowExpired: invoice 877",
        'ValueError("it\\\'s \\\\ late")': "ValueError: it's \\ late",
        "Exception('')": "Exception",
        "StoreError('a\\nb\\x41')": "StoreError: a\nbA",
        "StoreError('\\ud800')": "StoreError: \\ud800",
    }  # fmt: skip
    for text, error in cases.items():
        step = tool_with_result(text).tool_calls[0]
        assert step.error == error, text


def test_what_is_no_exception_repr_is_a_result() -> None:
    texts = [
        "{'result': StoreError('x'), 'other': 1}",  # two keys
        "{'status': 'ok', 'result': StoreError('x')}",
        "{'result': StoreError('x')}",  # (no declared output: a field a tool may return)
        "{'last_error': TimeoutError('upstream took 30s')}",
        "StoreError('x', 2)",  # two arguments
        "TrackInfo('Money')",  # no exception class
        "myError('x')",  # (a class name opens with a capital)
        "StoreError('x')}",
        "Retry after ValueError('x')",  # a text about one
        "{'result': 'ValueError'}",
    ]
    for text in texts:
        assert tool_with_result(text).tool_calls[0].error is None, text


def declaring(*titles: str) -> tuple[tuple[str, dict[str, AttrValue]], ...]:
    """A tool span's events declaring its outputs by title (Agent Spec Tracing)."""
    declared: dict[str, AttrValue] = {
        f"tool.outputs.{i}.title": title for i, title in enumerate(titles)
    }
    return (("ToolExecutionRequest", declared), ("ToolExecutionResponse", declared))


def oi_tool_with_events(output: str, events: tuple[tuple[str, dict[str, AttrValue]], ...]) -> Span:
    return span(2, "ToolExecutionSpan", {
        "openinference.span.kind": "TOOL", "tool.name": "lookup_invoice",
        "tool_call.id": "c1", "input.value": '{"invoice_id": 1042}', "output.value": output,
    }, parent=1, events=events)  # fmt: skip


def test_a_tools_one_declared_output_is_what_it_returned() -> None:
    """Rule 101: the span's events declare the tool's one output ``result``, and the
    recorded output is the object ``{"result": ...}`` the runtime built: the value."""
    output = '{"result": {"invoice_id": 1042, "total": 2.97}}'
    trajectory = run(genai_agent(), oi_tool_with_events(output, declaring("result")))
    assert trajectory.tool_calls[0].result == {"invoice_id": 1042, "total": 2.97}
    failed = run(genai_agent(), oi_tool_with_events('{"result": "Error: refused"}',
                                                    declaring("result")))  # fmt: skip
    assert failed.tool_calls[0].error == "Error: refused"
    raised = run(
        genai_agent(),
        oi_tool_with_events(
            "{'result': StoreError('RefundWindowExpired: invoice 877')}", declaring("result")
        ),
    )
    assert raised.tool_calls[0].error == "StoreError: RefundWindowExpired: invoice 877"
    flagged = run(genai_agent(), oi_tool_with_events('{"error": "boom"}', declaring("error")))
    assert flagged.tool_calls[0].error == "boom"  # (the error it reported is kept)


def test_an_object_is_kept_without_one_declared_output() -> None:
    output = '{"result": {"invoice_id": 1042}}'
    two = run(genai_agent(), oi_tool_with_events(output, declaring("result", "status")))
    none = run(genai_agent(), oi_tool_with_events(output, ()))
    other = run(genai_agent(), oi_tool_with_events(output, declaring("invoice")))
    disagreeing = [
        run(genai_agent(), oi_tool_with_events(output, (
            ("ToolExecutionRequest", {"tool.outputs.0.title": first}),
            ("ToolExecutionResponse", {"tool.outputs.0.title": second}))))
        for first, second in (("value", "result"), ("result", "value"))
    ]  # fmt: skip
    for trajectory in (two, none, other, *disagreeing):
        assert trajectory.tool_calls[0].result == {"result": {"invoice_id": 1042}}
    beside = run(genai_agent(), oi_tool_with_events('{"result": 1, "x": 2}', declaring("result")))
    assert beside.tool_calls[0].result == {"result": 1, "x": 2}


def test_a_history_message_of_bytes_is_read_as_json_text() -> None:
    """A legacy flattened request (``gen_ai.prompt.N.*``) whose tool message content is
    an OTLP bytes value: the call rebuilt from it has a JSON-ready result (hex text),
    and the trajectory serializes (found by the fuzz test, session 25)."""

    def legacy_chat(n: int, prompt: list[tuple[str, AttrValue]], reply: dict[str, Any]) -> Span:
        attributes: dict[str, AttrValue] = {"gen_ai.system": "openai", "llm.request.type": "chat",
                                            "gen_ai.request.model": "m"}  # fmt: skip
        for i, (role, content) in enumerate(prompt):
            attributes[f"gen_ai.prompt.{i}.role"] = role
            attributes[f"gen_ai.prompt.{i}.content"] = content
        for key, value in reply.items():
            attributes[f"gen_ai.completion.0.{key}"] = value
        return span(n, "openai.chat", attributes, parent=1)

    asked = legacy_chat(2, [("user", "Refund it.")], {
        "role": "assistant", "tool_calls.0.id": "c1", "tool_calls.0.name": "refund",
        "tool_calls.0.arguments": '{"invoice": 9}'})  # fmt: skip
    answered = legacy_chat(3, [("user", "Refund it."), ("assistant", ""), ("tool", b"\xff\x00")],
                           {"role": "assistant", "content": "Done."})  # fmt: skip
    answered = answered._replace(attributes={
        **answered.attributes, "gen_ai.prompt.1.tool_calls.0.id": "c1",
        "gen_ai.prompt.1.tool_calls.0.name": "refund",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"invoice": 9}',
        "gen_ai.prompt.2.tool_call_id": "c1"})  # fmt: skip
    trajectory = run(span(1, "turn", {}), asked, answered)  # (``run`` serializes it)
    assert [(s.name, s.result) for s in trajectory.tool_calls] == [("refund", "ff00")]


def test_an_agent_run_recording_a_database_operation_is_that_operation() -> None:
    """Rule 102: OpenLIT types Dynamiq's memory reads and writes ``invoke_agent`` beside
    the OTel database conventions' ``db.operation.name``: a storage call, not an agent."""
    memory = {"gen_ai.operation.name": "invoke_agent", "db.operation.name": "GET"}
    trajectory = run(
        genai_agent(),
        span(2, "dynamiq.memory_search", memory, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    assert [(s.kind.value, s.name) for s in trajectory.steps if s.kind.value != "llm"] == [
        ("other", "dynamiq.memory_search")
    ]
    assert trajectory.agents == ("shop",)  # (the run's own agent only)
    plain = run(genai_agent(), span(2, "invoke_agent billing", {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "billing"}, parent=1),
        genai_chat(3, [], parent=2, text="Done."))  # fmt: skip
    assert "billing" in plain.agents  # (without the database key: an agent, as before)
