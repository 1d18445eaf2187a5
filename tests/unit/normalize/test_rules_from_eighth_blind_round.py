"""Rules from the eighth round of blind captures (ADR 0017, addendum of 2026-11-27,
session 16): minimal traces of the shapes the captures showed, never keyed to a
library's names. Rule 61: a plumbing span that ran a requested call is its tool span;
rule 62: a GenAI span named after its own model is a phase of the loop, not a step;
and Langfuse's own error record."""

from __future__ import annotations

import json

from support.span_kit import genai_agent, genai_chat, run, span

from collector.core.records import Span
from evaluators.trajectory import StepKind

ASKED = [{"id": "c1", "name": "lookup", "arguments": {"order": 7}}]


def traced(n: int, name: str, recorded_input: str, *, start: int, **more: str) -> Span:
    """A plain traced function (Langfuse ``span`` observation): no tool typing."""
    attributes = {
        "langfuse.observation.type": "span",
        "langfuse.observation.input": recorded_input,
        **more,
    }
    return span(n, name, attributes, parent=1, start=start, end=start + 100)


def answered(n: int) -> Span:
    return genai_chat(n, [], text="It shipped.")._replace(start_unix_nano=n * 1000)


# Rule 61


def test_a_traced_span_that_ran_a_requested_call_is_its_tool_span() -> None:
    trajectory = run(
        genai_agent(),
        genai_chat(2, ASKED),  # ends at 2 500
        traced(3, "lookup", '{"order": 7}', start=3000,
               **{"langfuse.observation.output": '{"status": "shipped"}'}),
        answered(4),
    )  # fmt: skip
    (tool,) = trajectory.tool_calls
    assert tool.executed and tool.span_id == span(3, "x").span_id.hex()
    assert tool.args == {"order": 7} and tool.result == {"status": "shipped"}
    assert tool.call_id == "c1"


def test_without_the_evidence_a_traced_span_stays_plumbing() -> None:
    other_args = traced(3, "lookup", '{"order": 8}', start=3000)  # not what was asked
    too_early = traced(3, "lookup", '{"order": 7}', start=2000)  # before the model answered
    other_name = traced(3, "lookup_order", '{"order": 7}', start=3000)
    for candidate in (other_args, too_early, other_name):
        trajectory = run(genai_agent(), genai_chat(2, ASKED), candidate, answered(4))
        (tool,) = trajectory.tool_calls  # the request, never executed by a span
        assert not tool.executed, candidate


def test_a_span_holding_work_is_no_tool_span_whatever_its_input() -> None:
    wrapper = traced(3, "lookup", '{"order": 7}', start=3000)._replace(end_unix_nano=9000)
    inner = genai_chat(5, [], parent=3, text="x")._replace(start_unix_nano=3500)
    trajectory = run(genai_agent(), genai_chat(2, ASKED), wrapper, inner)
    assert not any(step.executed for step in trajectory.tool_calls)


def test_langfuse_level_error_is_the_failure_of_its_span() -> None:
    failed = traced(3, "lookup", '{"order": 7}', start=3000, **{
        "langfuse.observation.level": "ERROR",
        "langfuse.observation.status_message": "OrderNotFound: 7",
    })  # fmt: skip
    (tool,) = run(genai_agent(), genai_chat(2, ASKED), failed, answered(4)).tool_calls
    assert tool.error == "OrderNotFound: 7"
    warned = failed._replace(
        attributes={**failed.attributes, "langfuse.observation.level": "WARNING"}
    )
    (tool,) = run(genai_agent(), genai_chat(2, ASKED), warned, answered(4)).tool_calls
    assert tool.error is None


# Rule 62


def phase(n: int, operation: str, subject: str, **more: str) -> Span:
    attributes = {"gen_ai.operation.name": operation, "gen_ai.request.model": "m", **more}
    return span(n, f"{operation} {subject}", attributes, parent=1, start=n * 1000)


def test_spans_named_after_their_own_model_are_phases_of_the_loop() -> None:
    trajectory = run(
        genai_agent(),
        phase(2, "model_request", "m"),
        genai_chat(3, ASKED),
        phase(4, "execute_tool", "m"),  # names no tool: the tool phase of the step
        answered(5),
    )
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    (tool,) = trajectory.tool_calls
    assert tool.name == "lookup" and tool.call_id == "c1"  # the request, rebuilt


def test_a_tool_span_or_an_operation_named_otherwise_is_still_read() -> None:
    trajectory = run(
        genai_agent(),
        genai_chat(2, ASKED),
        phase(3, "execute_tool", "lookup", **{"gen_ai.tool.call.arguments": json.dumps({})}),
        phase(4, "memory_operation", "History"),
    )
    assert [(step.kind, step.name) for step in trajectory.steps][1:] == [
        (StepKind.TOOL, "lookup"),
        (StepKind.OTHER, "memory_operation History"),
    ]
    named_tool = phase(3, "execute_tool", "m", **{"gen_ai.tool.name": "m"})
    assert run(genai_agent(), named_tool).tool_calls[0].executed  # a tool named like the model
