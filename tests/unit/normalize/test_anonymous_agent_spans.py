"""Agent spans that name no agent, inside one that does, are that agent's own work.

OpenLIT records the OpenAI Agents SDK's per-model-step ``turn`` spans (a span type it
does not know) as bare ``invoke_agent`` spans below the named agent, each around that
step's model call and the tools it ran. They name nothing to hop to: no agent-name
attribute, and a span name that is only the GenAI operation (the form the conventions
prescribe when the name is unknown). Keyed to that shape, not to OpenLIT or the SDK.
"""

from __future__ import annotations

from support.span_kit import genai_agent, genai_chat, genai_tool, run, span

from evaluators.trajectory import StepKind

BARE = {"gen_ai.operation.name": "invoke_agent"}


def test_bare_agent_spans_inside_a_named_agent_are_its_loop_turns() -> None:
    trajectory = run(
        genai_agent(1),
        span(2, "invoke_agent", BARE, parent=1),
        genai_chat(3, [{"id": "c1", "name": "lookup", "arguments": {"q": "x"}}], parent=2),
        genai_tool(4, "lookup", '{"q": "x"}', call_id=None, parent=2),
        span(5, "invoke_agent", BARE, parent=1),
        genai_chat(6, [], parent=5, text="done"),
    )
    assert trajectory.agent == "shop"
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    assert {step.agent for step in trajectory.steps} == {"shop"}
    assert trajectory.tool_calls[0].call_id == "c1"
    assert trajectory.agents == ("shop",)


def test_an_empty_span_name_names_no_agent_either() -> None:
    trajectory = run(genai_agent(1), span(2, "", BARE, parent=1), genai_chat(3, [], parent=2))
    assert not [step for step in trajectory.steps if step.kind is StepKind.AGENT]


def test_a_sub_agent_named_only_in_its_span_name_is_still_a_hop() -> None:
    trajectory = run(
        genai_agent(1),
        span(2, "invoke_agent researcher", BARE, parent=1),
        genai_chat(3, [], parent=2, text="found"),
    )
    agents = [step.name for step in trajectory.steps if step.kind is StepKind.AGENT]
    assert agents == ["researcher"]


def test_a_bare_agent_span_with_no_agent_around_it_is_still_the_run() -> None:
    trajectory = run(span(1, "invoke_agent", BARE), genai_chat(2, [], parent=1, text="hi"))
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM]
    assert trajectory.agent == "invoke_agent"
