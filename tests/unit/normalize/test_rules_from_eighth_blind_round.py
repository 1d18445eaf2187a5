"""Rules from the eighth round of blind captures (ADR 0017, addendum of 2026-11-27,
session 16): minimal traces of the shapes the captures showed, never keyed to a
library's names. Rule 61: a plumbing span that ran a requested call is its tool span;
rule 62: a GenAI span named after its own model is a phase of the loop, not a step;
Langfuse's own error record; and a message written as ``error.type``."""

from __future__ import annotations

import json

from support.span_kit import genai_agent, genai_chat, genai_tool, run, span

from collector.core.records import Span, StatusCode
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


# A message written as ``error.type`` beside a fixed status description (OpenLIT's Agno
# tool spans: "Tool execution failed", the exception's text as the error type).

REFUSED = "RefundWindowExpired: invoice 877 is outside the 30-day window"


def failed_tool(description: str, error_type: str) -> Span:
    tool = genai_tool(3, "refund", '{"invoice": 877}', call_id="c1", **{"error.type": error_type})
    return tool._replace(status_code=StatusCode.ERROR, status_message=description)


def test_a_message_in_error_type_beats_a_fixed_description() -> None:
    (tool,) = run(genai_agent(), failed_tool("Tool execution failed", REFUSED)).tool_calls
    assert tool.error == REFUSED


def test_a_class_in_error_type_leaves_the_description_the_error() -> None:
    semantic_kernel = "<class 'semantic_kernel.exceptions.service_exceptions.ServiceException'>"
    assert len(semantic_kernel) > len(REFUSED)  # (a class's repr: review of 4279157)
    for error_type in ("StoreError", "common.StoreError", "Refund refused", semantic_kernel):
        (tool,) = run(genai_agent(), failed_tool(REFUSED, error_type)).tool_calls
        assert tool.error == REFUSED, error_type


def test_an_operation_that_called_its_model_is_still_a_step() -> None:
    # (review) the conventions name embeddings spans ``embeddings <model>``: a model's
    # answer on it (response model, tokens) makes it a call, not a phase of the loop
    embeddings = phase(2, "embeddings", "m", **{"gen_ai.response.model": "m"})
    counted = phase(2, "embeddings", "m")._replace(
        attributes={"gen_ai.operation.name": "embeddings", "gen_ai.request.model": "m",
                    "gen_ai.usage.input_tokens": 8}
    )  # fmt: skip
    for span_ in (embeddings, counted):
        trajectory = run(genai_agent(), span_, answered(3))
        assert [step.kind for step in trajectory.steps] == [StepKind.OTHER, StepKind.LLM]


def test_a_flattened_request_written_as_blocks_gives_its_text() -> None:
    # (review) OpenLLMetry writes list content as JSON text; a tool_result block (sent
    # with the user role) is no request
    prompt = {
        "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": '[{"type": "text", "text": "What is 2+2?"}]',
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": '[{"type": "tool_result", "tool_use_id": "t", "content": "4"}]',
        "gen_ai.completion.0.content": "4",
    }
    trajectory = run(span(1, "anthropic.chat", prompt))
    assert trajectory.input == "What is 2+2?"


# Rule 63 (agent_root._idle_runner): a named agent span that only runs a workflow of
# another named agent is that agent's runner (OpenLIT's ADK root, named after the app).


def agentic(n: int, operation: str, name: str, parent: int = 0) -> Span:
    attributes = {"gen_ai.operation.name": operation}
    if operation == "invoke_agent":
        attributes["gen_ai.agent.name"] = name
    return span(n, f"{operation} {name}", attributes, parent=parent, start=n, end=10**6)


def store_work(parent: int) -> list[Span]:
    asked = genai_chat(4, ASKED, parent=parent)
    ran = genai_tool(5, "lookup", '{"order": 7}', call_id="c1", parent=parent)
    return [asked, ran, genai_chat(6, [], parent=parent, text="It shipped.")]


def test_an_agent_that_only_runs_another_agents_workflow_is_its_runner() -> None:
    trajectory = run(
        agentic(1, "invoke_agent", "store_app"),
        agentic(2, "invoke_workflow", "support", parent=1),
        agentic(3, "invoke_agent", "support", parent=2),
        *store_work(3),
    )
    assert trajectory.agent == "support"
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]


def test_without_a_run_of_that_agent_a_named_agent_around_another_is_a_hop() -> None:
    for middle in ("other", None):  # a workflow of another agent, or none at all
        spans = [agentic(1, "invoke_agent", "router")]
        parent = 1
        if middle is not None:
            spans.append(agentic(2, "invoke_workflow", middle, parent=1))
            parent = 2
        spans += [agentic(3, "invoke_agent", "support", parent=parent), *store_work(3)]
        trajectory = run(*spans)
        assert trajectory.agent == "router", middle
        assert "support" in [s.name for s in trajectory.steps if s.kind is StepKind.AGENT]


# Rule 64 (step_list._with_shown_result): a tool span recording its call id but neither
# result nor error gets the answer the model was shown for that id.


def shown(answer: str, answered_id: str = "c1") -> Span:
    history = [
        {"role": "user", "parts": [{"type": "text", "content": "hello"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", **ASKED[0]}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": answered_id,
                                    "response": answer}]},
    ]  # fmt: skip
    final = genai_chat(4, [], text="Done.")
    attributes = {**final.attributes, "gen_ai.input.messages": json.dumps(history)}
    return final._replace(attributes=attributes)


def silent_tool() -> Span:
    return genai_tool(3, "lookup", '{"order": 7}', call_id="c1")  # no result, no error


def test_a_silent_tool_span_gets_the_answer_the_model_was_shown() -> None:
    ok = run(genai_agent(), genai_chat(2, ASKED), silent_tool(), shown('{"status": "shipped"}'))
    (tool,) = ok.tool_calls
    assert tool.result == {"status": "shipped"} and tool.error is None
    refused = '{"status": "error", "message": "OrderNotFound: 7"}'
    (tool,) = run(genai_agent(), genai_chat(2, ASKED), silent_tool(), shown(refused)).tool_calls
    assert tool.error is not None and "OrderNotFound" in tool.error


def test_another_calls_answer_is_not_taken() -> None:
    trajectory = run(genai_agent(), genai_chat(2, ASKED), silent_tool(), shown("7", "c9"))
    (tool,) = trajectory.tool_calls
    assert tool.result is None and tool.error is None


def test_a_runners_failure_is_the_runs() -> None:
    # (review of 4279157) the runner passed by rule 63 is not the agent root any more
    runner = agentic(2, "invoke_agent", "store_app", parent=1)._replace(
        status_code=StatusCode.ERROR, status_message="SessionStoreError: could not save"
    )
    trajectory = run(
        span(1, "POST /run", {}, start=0, end=10**6),
        runner,
        agentic(3, "invoke_workflow", "support", parent=2),
        agentic(4, "invoke_agent", "support", parent=3),
        *store_work(4),
    )
    assert trajectory.agent == "support"
    assert trajectory.failed and trajectory.error == "SessionStoreError: could not save"


def test_a_runner_of_a_team_gives_way_to_the_teams_workflow() -> None:
    # (review of 4279157) ADK's workflow of a team names its first agent: the run is that
    # agent's, the others hops, in every turn of a session alike
    trajectory = run(
        agentic(1, "invoke_agent", "store_app"),
        agentic(2, "invoke_workflow", "front_desk", parent=1),
        agentic(3, "invoke_agent", "front_desk", parent=2)._replace(end_unix_nano=3),
        agentic(7, "invoke_agent", "support", parent=2),
        *store_work(7),
    )
    assert trajectory.agent == "front_desk"
    assert [s.name for s in trajectory.steps if s.kind is StepKind.AGENT] == ["support"]


def test_a_langfuse_run_input_written_as_plain_text_is_read() -> None:
    # Mastra's Langfuse exporter writes a string input as it is (the SDKs JSON-encode
    # only what is not a string); JSON text is read as before
    for recorded, expected in (("Find order 7", "Find order 7"),
                               (json.dumps("Find order 7"), "Find order 7")):  # fmt: skip
        root = span(1, "agent run", {"langfuse.trace.input": recorded})
        model = genai_chat(2, [], text="It shipped.")
        model = model._replace(attributes={
            k: v for k, v in model.attributes.items() if k != "gen_ai.input.messages"
        })  # fmt: skip
        assert run(root, model).input == expected, recorded
