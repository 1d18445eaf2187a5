"""LangChain AgentTrajectoryEvaluator subclasses (seed 000) running unchanged through
``langchain:`` references: the trajectory as (AgentAction, observation) pairs,
prediction / input / reference, and their ``{score, value, reasoning}`` as results."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.agents import AgentAction
from support.paths import FIXTURES, GOLDEN

from collector.cli.command import main
from evaluators.langchain import agent_trajectory, to_result
from evaluators.registry import EvaluatorLoadError, EvaluatorRegistry
from evaluators.results import BooleanResult, ErrorResult, NumericResult
from evaluators.runner import EvaluationRunner
from evaluators.spec import SpecError, build_spec
from evaluators.testing import TrajectoryBuilder
from evaluators.trajectory import StepKind

FIXTURES = FIXTURES / "evaluators"
GOLDEN_PYDANTIC = GOLDEN / "traces" / "pydantic-ai"
FILE_REF = "langchain:file://langchain_evaluators.py"
REFUND = "Hi, I'm customer 17. Please refund one copy of 'Comfortably Numb' on invoice 1042."


def refund_run(*, extra: bool = False) -> TrajectoryBuilder:
    builder = TrajectoryBuilder(REFUND).tool(
        "lookup_invoice", {"invoice_id": 1042}, result={"total": 1.98}
    )
    if extra:
        builder.tool("lookup_artist", {"artist_name": "Pink Floyd"}, result="Pink Floyd")
    builder.requested("refund", {"invoice_id": 1042})  # never ran: not part of the trajectory
    builder.tool("refund", {"invoice_id": 1042}, error="RefundWindowExpired")
    return builder.output("Sorry, I can't refund it.")


def spec(*entries: object, reference: dict[str, object] | None = None) -> list:  # type: ignore[type-arg]
    data = {"id": "lc", "reference": reference or {}, "evaluators": list(entries)}
    return list(build_spec(data, base_dir=FIXTURES).bound)


def test_the_trajectory_becomes_agent_actions_and_observations() -> None:
    trajectory = refund_run(extra=True).agent("refund_agent").build()
    pairs = agent_trajectory(trajectory, (StepKind.TOOL,))
    assert [(a.tool, a.tool_input, obs) for a, obs in pairs] == [
        ("lookup_invoice", {"invoice_id": 1042}, '{"total": 1.98}'),
        ("lookup_artist", {"artist_name": "Pink Floyd"}, "Pink Floyd"),
        ("refund", {"invoice_id": 1042}, "Error: RefundWindowExpired"),
    ]
    assert all(isinstance(action, AgentAction) for action, _ in pairs)
    assert pairs[0][0].log == "Invoking: `lookup_invoice` with `{'invoice_id': 1042}`"
    with_agents = agent_trajectory(trajectory, (StepKind.AGENT, StepKind.TOOL))
    assert [a.tool for a, _ in with_agents][-1] == "refund_agent"


def test_seed_000_step_necessity_runs_unchanged_from_a_spec() -> None:
    [bound] = spec(
        {
            "name": f"{FILE_REF}:StepNecessityEvaluator",
            "config": {"higher_is_better": False, "threshold": 0},
        }
    )
    assert bound.id == "step_necessity_evaluator"
    prompts = sys.modules[type(bound.evaluator).wrapped.__module__].PROMPTS
    with EvaluationRunner() as runner:
        needed = runner.run_one(refund_run().build(), bound)
        extra = runner.run_one(refund_run(extra=True).build(), bound)
    assert needed.result == NumericResult(
        score=0.0, explanation="Every step was needed.\nN", details={"value": "N"}
    )
    assert needed.passed is True
    assert extra.result.score == 1.0 and extra.passed is False  # type: ignore[union-attr]
    assert "1: Action=[lookup_artist] returned observation = [Pink Floyd]" in prompts[-1]
    assert f"unnecessary in answering {REFUND}?" in prompts[-1]


def test_module_references_and_the_class_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES))
    registry = EvaluatorRegistry([])
    cls = registry.resolve("langchain:langchain_evaluators:StepNecessityEvaluator")
    assert cls is registry.resolve(" langchain:langchain_evaluators:StepNecessityEvaluator ")
    assert cls.__qualname__ == "LangChain[StepNecessityEvaluator]"
    assert cls.description == "Evaluate the perplexity of a predicted string."
    monkeypatch.delitem(sys.modules, "langchain_evaluators")


def test_the_reference_answer_comes_from_the_spec_or_is_an_error() -> None:
    entry = {
        "name": f"{FILE_REF}:AnswerMatchesReference",
        "config": {"init": {"case_sensitive": False}},
    }
    [bound] = spec(entry, reference={"response": "can't REFUND"})
    [unreferenced] = spec(entry)
    with EvaluationRunner() as runner:
        found = runner.run_one(refund_run().build(), bound)
        missing = runner.run_one(refund_run().build(), unreferenced)
    assert found.result == BooleanResult(value=True, explanation='looked for "can\'t REFUND"')
    assert found.passed is True
    assert missing.result == ErrorResult(
        error="AnswerMatchesReference requires a reference: set reference.response"
    )


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ({"score": True, "value": "yes"}, BooleanResult(value=True, details={"value": "yes"})),
        ({"value": False}, BooleanResult(value=False, details={"value": False})),
        ({"score": 0.25, "reasoning": 7}, NumericResult(score=0.25, explanation="7")),
        ({"score": "high"}, ErrorResult(error="X returned no numeric score (score='high')")),
        ({"score": float("nan")}, ErrorResult(error="X returned no numeric score (score=nan)")),
        ({"score": 1, "value": object}, NumericResult(score=1, details={"value": repr(object)})),
    ],
)
def test_langchain_dicts_become_results(output: dict[str, object], expected: object) -> None:
    assert to_result(output, "X") == expected


def test_garbage_from_the_class_is_an_error_result_not_a_crash() -> None:
    [bound] = spec({"name": f"{FILE_REF}:ReturnsWhatItIsTold", "config": {"init": {"output": 3}}})
    with EvaluationRunner() as runner:
        outcome = runner.run_one(refund_run().build(), bound)
    assert outcome.result == ErrorResult(
        error="TypeError: ReturnsWhatItIsTold returned int, expected a dict with a score"
    )


def test_references_that_are_not_langchain_evaluators_fail_to_load() -> None:
    registry = EvaluatorRegistry([])
    with pytest.raises(EvaluatorLoadError, match="is not a subclass of LangChain's Agent"):
        registry.resolve(f"{FILE_REF}:NotAnAgentTrajectoryEvaluator", FIXTURES)
    with pytest.raises(EvaluatorLoadError, match=r"expected langchain:package\.module:Class"):
        registry.resolve("langchain:step_necessity")
    with pytest.raises(SpecError, match=r"evaluators\[0\]\.name: .*constructing the evaluator"):
        spec({"name": f"{FILE_REF}:AnswerMatchesReference", "config": {"init": {"nope": 1}}})


def test_replay_runs_a_langchain_evaluator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evaluators = tmp_path / "lc.py"
    evaluators.write_text((FIXTURES / "langchain_evaluators.py").read_text())
    (tmp_path / "spec.yaml").write_text(
        textwrap.dedent(
            """
            id: unnecessary-steps
            match: {agent: music_store_support}
            evaluators:
              - name: "langchain:file://lc.py:StepNecessityEvaluator"
                id: step_necessity_lc
                config: {higher_is_better: false, threshold: 0}
            """
        )
    )
    results = tmp_path / "results.jsonl"
    argv = [
        "replay",
        str(GOLDEN_PYDANTIC / "correct.jsonl"),
        str(GOLDEN_PYDANTIC / "extra_call.jsonl"),
    ]
    code = main([*argv, "--spec", str(tmp_path / "spec.yaml"), "--results-out", str(results)])
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    scores = sorted(
        (line["score"], line["passed"])
        for line in lines
        if line["evaluator"] == "step_necessity_lc"
    )
    assert scores == [(0.0, True), (1.0, False)]
    assert code == 1  # the extra call fails the gate
    capsys.readouterr()
