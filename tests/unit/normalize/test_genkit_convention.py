"""Firebase Genkit's own ``genkit:*`` attributes (``conventions.genkit``): its spans carry
no GenAI conventions, so without this reading a Genkit run had no steps at all and was
skipped as "no agent spans" (the ``genkit`` capture)."""

from __future__ import annotations

import json

from support.span_kit import run, span

from collector.core.records import Span
from evaluators.trajectory import StepKind


def action(n: int, subtype: str, name: str, parent: int = 0, **more: str) -> Span:
    attributes = {
        "genkit:type": "action",
        "genkit:metadata:subtype": subtype,
        "genkit:name": name,
        **more,
    }
    return span(n, name, attributes, parent=parent)


def model_output(parts: list[dict[str, object]]) -> str:
    return json.dumps(
        {
            "message": {"role": "model", "content": parts},
            "usage": {"inputTokens": 12, "outputTokens": 4},
            "raw": {"model": "gpt-test"},
        }
    )


def test_a_genkit_agent_run_is_read_from_its_actions() -> None:
    request = [{"toolRequest": {"name": "lookup", "ref": "r1", "input": {"q": "x"}}}]
    trajectory = run(
        action(
            1,
            "agent",
            "shop",
            **{
                "genkit:output": json.dumps(
                    {"message": {"role": "model", "content": [{"text": "done"}]}}
                ),
                "genkit:metadata:agent:sessionId": "s-1",
            },
        ),
        span(2, "generate", {"genkit:type": "util", "genkit:name": "generate"}, parent=1),
        action(
            3,
            "model",
            "compat-oai/m",
            parent=2,
            **{
                "genkit:input": json.dumps(
                    {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
                ),
                "genkit:output": model_output(request),
            },
        ),
        action(
            4,
            "tool",
            "lookup",
            parent=2,
            **{"genkit:input": '{"q": "x"}', "genkit:output": '{"found": 1}'},
        ),
        action(
            5,
            "model",
            "compat-oai/m",
            parent=2,
            **{"genkit:output": model_output([{"text": "done"}])},
        ),
    )
    assert trajectory.skip_reason is None
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]
    llm, tool = trajectory.steps[0], trajectory.steps[1]
    assert (llm.model, llm.input_tokens, llm.output_tokens) == ("gpt-test", 12, 4)
    assert (tool.name, tool.args, tool.result, tool.call_id) == (
        "lookup",
        {"q": "x"},
        {"found": 1},
        "r1",
    )
    assert (trajectory.agent, trajectory.session_id) == ("shop", "s-1")
    assert (trajectory.input, trajectory.output) == ("hi", "done")
    assert "genkit" in trajectory.conventions


def test_genkit_names_are_read_only_on_spans_genkit_marks() -> None:
    """A bare ``genkit:name`` on a span without ``genkit:type`` names nothing."""
    trajectory = run(span(1, "step", {"genkit:name": "shop"}))
    assert trajectory.skip_reason is not None
