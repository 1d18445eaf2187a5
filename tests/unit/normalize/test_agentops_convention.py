"""AgentOps' own ``agentops.*`` attributes (``conventions.agentops``) and the older
flattened OpenLLMetry request its OpenAI instrumentation writes (``conventions.traceloop``):
without them an AgentOps run had no role on any span and was skipped as "no agent spans"
(the ``agentops-manual`` capture)."""

from __future__ import annotations

import json

from support.span_kit import run, span

from collector.core.records import Span, StatusCode
from evaluators.trajectory import StepKind


def decorated(n: int, kind: str, name: str, parent: int = 0, **more: str) -> Span:
    attributes = {"agentops.span.kind": kind, "operation.name": name, **more}
    return span(n, f"{name}.{kind}", attributes, parent=parent)


def chat(n: int, parent: int, prompt: list[dict[str, str]], **completion: str) -> Span:
    """A model call in the flattened layout, marked by ``gen_ai.request.type``."""
    attributes: dict[str, str | int] = {
        "gen_ai.request.type": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.usage.prompt_tokens": 10,
        "gen_ai.usage.completion_tokens": 2,
    }
    for i, message in enumerate(prompt):
        for key, value in message.items():
            attributes[f"gen_ai.prompt.{i}.{key}"] = value
    for key, value in completion.items():
        attributes[f"gen_ai.completion.0.{key}"] = value
    return span(n, "openai.chat.completion", attributes, parent=parent)


def agent_run(*work: Span, **root: str) -> list[Span]:
    return [
        decorated(1, "session", "support_turn", **root),
        decorated(2, "agent", "shop", parent=1, **{"agentops.entity.input": '{"args": ["<x>"]}'}),
        decorated(3, "task", "answer", parent=2),
        *work,
    ]


REQUEST = {"role": "user", "content": "Find order 7"}
ASKED = {
    "role": "assistant",
    "tool_calls.0.id": "call_1",
    "tool_calls.0.name": "lookup",
    "tool_calls.0.arguments": '{"order": 7}',
}
ANSWERED = {"role": "tool", "content": '{"status": "shipped"}', "tool_call_id": "call_1"}


def lookup(n: int, **more: str) -> Span:
    return decorated(
        n,
        "tool",
        "lookup",
        parent=3,
        **{
            "agentops.tool.input": json.dumps({"args": [], "kwargs": {"order": 7}}),
            "agentops.tool.output": '{"status": "shipped"}',
            **more,
        },
    )


def test_an_agentops_run_is_read_from_its_decorators_and_model_calls() -> None:
    trajectory = run(
        *agent_run(
            chat(4, 3, [REQUEST], role="assistant", finish_reason="tool_calls"),
            lookup(5),
            chat(6, 3, [REQUEST, ASKED, ANSWERED], role="assistant", content="It shipped."),
            **{"trace.metadata.session_id": "s-9"},
        )
    )
    assert trajectory.agent == "shop"  # the @agent span's operation.name
    assert trajectory.input == "Find order 7"  # the model call's request, not the agent's
    assert trajectory.output == "It shipped."
    assert trajectory.session_id == "s-9"
    assert [(s.kind, s.name) for s in trajectory.steps] == [
        (StepKind.LLM, "m"),
        (StepKind.TOOL, "lookup"),
        (StepKind.LLM, "m"),
    ]
    tool = trajectory.steps[1]
    assert tool.args == {"order": 7}  # out of the recorded call's envelope
    assert tool.result == {"status": "shipped"}
    assert tool.call_id == "call_1"  # from the next request's flattened history
    assert trajectory.steps[0].input_tokens == 10


def test_a_tool_named_only_by_its_span_name_and_a_failed_call() -> None:
    failing = span(
        5,
        "refund.tool",
        {"agentops.span.kind": "tool", "agentops.tool.input": '{"args": [], "kwargs": {}}'},
        parent=3,
        status=StatusCode.ERROR,
        events=(("exception", {"exception.type": "E", "exception.message": "refused"}),),
    )
    trajectory = run(*agent_run(chat(4, 3, [REQUEST], role="assistant"), failing))
    tool = trajectory.tool_calls[0]
    assert tool.name == "refund" and tool.error is not None and "refused" in tool.error


def test_without_the_kind_marker_nothing_agentops_is_read() -> None:
    # operation.name alone is no evidence: a span without agentops.span.kind is not a tool
    plain = span(5, "lookup.tool", {"operation.name": "lookup", "agentops.tool.input": "{}"})
    trajectory = run(plain)
    assert trajectory.steps == () and trajectory.skip_reason == "no_agent_spans"


def test_the_older_request_type_key_marks_a_model_call_and_its_request() -> None:
    for key in ("llm.request.type", "gen_ai.request.type"):
        model = span(1, "openai.chat", {key: "chat", "gen_ai.prompt.0.role": "user",
                                        "gen_ai.prompt.0.content": "hello",
                                        "gen_ai.completion.0.content": "hi"})  # fmt: skip
        trajectory = run(model)
        assert [s.kind for s in trajectory.steps] == [StepKind.LLM], key
        assert (trajectory.input, trajectory.output) == ("hello", "hi"), key
    other = span(1, "x", {"gen_ai.request.type": "embedding", "gen_ai.prompt.0.role": "user"})
    assert run(other).steps == ()
