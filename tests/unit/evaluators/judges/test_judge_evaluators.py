"""The built-in judge evaluators, end to end through the judge worker and a real
local chat-completions server: prompts, verdicts, tolerant parsing, results."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from support.fake_openai import FakeChatServer, Reply, text, verdict
from support.judge_kit import CountingMetrics, bind, step, trajectory, worker

from evaluators.base import NoCriteria
from evaluators.judges.answer import GRADER_INSTRUCTIONS, FinalAnswerCorrect, FinalAnswerCriteria
from evaluators.judges.pairwise import (
    PairwiseCriteria,
    PairwisePreference,
    pairwise_prompt,
    position_seed,
    prefer,
)
from evaluators.judges.rubric import Rubric, RubricCriteria
from evaluators.judges.steps import ResponseFollowsTrajectory, StepNecessity
from evaluators.judges.worker import JudgeWorker
from evaluators.results import BooleanResult, ErrorResult, NumericResult
from evaluators.runner import Outcome

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

REFERENCE = FinalAnswerCriteria(response="We have 20 songs by James Brown")
SEED_000_STEPS = (  # seed 000's example trajectory
    step("ask", "What is today?", "tomorrow's yesterday", i=0),
    step("check_tv", "Watch tv for half hour", "bzzz", i=1),
)


@pytest.fixture
def server(loop_thread: LoopThread, start: Callable[[Any], Any]) -> FakeChatServer:
    server: FakeChatServer = start(FakeChatServer(loop_thread))
    return server


@pytest.fixture
def metrics() -> CountingMetrics:
    return CountingMetrics()


@pytest.fixture
def judges(server: FakeChatServer, metrics: CountingMetrics) -> Iterator[JudgeWorker]:
    running = worker(server, metrics=metrics)
    yield running
    running.close(5.0)


def data_block(user_message: str) -> dict[str, Any]:
    """The JSON document between the data markers of a judge's user message."""
    body = user_message.split(">>>\n", 1)[1].rsplit("\n<<<END DATA", 1)[0]
    return dict(json.loads(body))


def one(judges: JudgeWorker, bound: Any, traj: Any = None) -> Outcome:
    (outcome,) = judges.evaluate(traj or trajectory(), [bound])
    return outcome


def test_final_answer_correct_grades_against_the_reference(
    server: FakeChatServer, judges: JudgeWorker
) -> None:
    server.script.append(verdict(reasoning="Both say 20 songs.", is_correct=True))
    outcome = one(judges, bind(FinalAnswerCorrect, criteria=REFERENCE))
    assert outcome.result.kind == "boolean"
    assert isinstance(outcome.result, BooleanResult) and outcome.result.value is True
    assert outcome.passed is True
    assert outcome.result.explanation == "Both say 20 songs."
    details = outcome.result.details or {}
    assert details["verdict"] == {"reasoning": "Both say 20 songs.", "is_correct": True}
    assert (details["judge"], details["model"], details["cached"]) == (
        "default",
        "judge-model",
        False,
    )
    seen = server.requests[0]
    assert seen.system.startswith(GRADER_INSTRUCTIONS)
    assert data_block(seen.user) == {
        "question": "How many James Brown songs do you have?",
        "ground_truth_response": "We have 20 songs by James Brown",
        "student_response": "We have 20 songs by James Brown.",
    }


def test_final_answer_correct_without_an_answer_makes_no_call(
    server: FakeChatServer, judges: JudgeWorker
) -> None:
    outcome = one(judges, bind(FinalAnswerCorrect, criteria=REFERENCE), trajectory(output=None))
    assert isinstance(outcome.result, ErrorResult)
    assert "no final answer" in outcome.result.error
    assert server.calls == 0


def test_fenced_json_among_prose_is_read(server: FakeChatServer, judges: JudgeWorker) -> None:
    server.script.append(
        text('Let me think.\n```json\n{"reasoning": "20 vs 12", "is_correct": false}\n```\nDone.')
    )
    outcome = one(judges, bind(FinalAnswerCorrect, criteria=REFERENCE))
    assert isinstance(outcome.result, BooleanResult) and outcome.result.value is False
    assert outcome.passed is False


def test_an_unreadable_verdict_is_an_error_and_is_not_cached(
    server: FakeChatServer, judges: JudgeWorker, metrics: CountingMetrics
) -> None:
    server.default = text("I cannot decide, it depends")
    bound = bind(FinalAnswerCorrect, criteria=REFERENCE)
    first = one(judges, bound)
    assert isinstance(first.result, ErrorResult)
    assert "no JSON object" in first.result.error
    assert (first.result.details or {})["reply"] == "I cannot decide, it depends"
    assert first.passed is None
    one(judges, bound)
    assert server.calls == 2  # asked again: garbage is not remembered
    assert metrics.get("error", "default", "parse") == 2


def test_a_verdict_missing_keys_is_an_error(server: FakeChatServer, judges: JudgeWorker) -> None:
    server.script.append(verdict(reasoning="hmm"))
    outcome = one(judges, bind(FinalAnswerCorrect, criteria=REFERENCE))
    assert isinstance(outcome.result, ErrorResult)
    assert "is_correct" in outcome.result.error


def test_step_necessity_reads_seed_000_free_text_verdict(
    server: FakeChatServer, loop_thread: LoopThread, metrics: CountingMetrics
) -> None:
    server.script.append(text("Watching TV does not help to know the date.\nY"))
    running = worker(server, metrics=metrics, response_format="none")
    try:
        outcome = one(
            running, bind(StepNecessity), trajectory(*SEED_000_STEPS, input="What is today?")
        )
    finally:
        running.close(5.0)
    assert "response_format" not in server.requests[0].body
    assert isinstance(outcome.result, BooleanResult)
    assert outcome.result.value is False  # a step was unnecessary: not all necessary
    details = outcome.result.details or {}
    assert details["decision"] == "Y"
    assert details["verdict"]["verdict"] == "Y"  # the raw verdict, as read
    shown = data_block(server.requests[0].user)
    assert shown["input"] == "What is today?"
    assert shown["steps"][1] == {
        "step": 2, "kind": "tool", "name": "check_tv",
        "arguments": "Watch tv for half hour", "result": "bzzz",
    }  # fmt: skip


def test_step_necessity_structured_verdict(server: FakeChatServer, judges: JudgeWorker) -> None:
    server.script.append(verdict(reasoning="all needed", unnecessary_steps=[], verdict="N"))
    outcome = one(judges, bind(StepNecessity), trajectory(*SEED_000_STEPS))
    assert isinstance(outcome.result, BooleanResult) and outcome.result.value is True
    assert not server.schema_problems


def test_step_necessity_without_steps_makes_no_call(
    server: FakeChatServer, judges: JudgeWorker
) -> None:
    outcome = one(judges, bind(StepNecessity), trajectory())
    assert isinstance(outcome.result, BooleanResult) and outcome.result.value is True
    assert server.calls == 0


def test_response_follows_trajectory_uses_the_vertex_rubric(
    server: FakeChatServer, judges: JudgeWorker
) -> None:
    server.script.append(verdict(reasoning="It cites the lookup.", score=1))
    traj = trajectory(step("lookup_track", {"artist": "James Brown"}, {"count": 20}))
    outcome = one(judges, bind(ResponseFollowsTrajectory), traj)
    assert isinstance(outcome.result, NumericResult) and outcome.result.score == 1.0
    assert outcome.passed is True  # default threshold 1.0
    seen = server.requests[0]
    assert (
        "Follows trajectory: Evaluate whether the agent's response logically follows" in seen.system
    )
    assert set(data_block(seen.user)) == {"prompt", "predicted_trajectory", "response"}


def test_rubric_scores_with_the_operator_scale(server: FakeChatServer, judges: JudgeWorker) -> None:
    config = {
        "criteria": {"politeness": "The reply is courteous."},
        "rating_rubric": {str(n): f"level {n}" for n in range(1, 6)},
        "show": ["input", "output", "reference"],
    }
    server.script.extend([verdict(reasoning="polite", score=4), verdict(reasoning="?", score=7)])
    bound = bind(Rubric, config, RubricCriteria(response="ref"), threshold=3.0)
    outcome = one(judges, bound)
    assert isinstance(outcome.result, NumericResult) and outcome.result.score == 4.0
    assert outcome.passed is True
    fmt = server.requests[0].body["response_format"]["json_schema"]["schema"]
    assert fmt["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert "politeness: The reply is courteous." in server.requests[0].system
    assert data_block(server.requests[0].user)["reference"] == "ref"
    off_scale = one(judges, bound, trajectory(output="another answer"))
    assert (
        isinstance(off_scale.result, ErrorResult) and "not in the rubric" in off_scale.result.error
    )


def test_rubric_config_is_validated() -> None:
    with pytest.raises(ValueError, match="rating 'good' is not a number"):
        Rubric.build({"criteria": "c", "rating_rubric": {"good": "g", "0": "bad"}})


def test_pairwise_evaluator_maps_the_shown_order_back(
    server: FakeChatServer, judges: JudgeWorker
) -> None:
    server.default = verdict(reasoning="A is better", preferred="A")
    bound = bind(PairwisePreference, criteria=PairwiseCriteria(response="the reference"))
    runs = [trajectory(trace_id=f"{n:032x}", output=f"answer {n}") for n in range(1, 9)]
    outcomes = [one(judges, bound, run) for run in runs]
    for seen, outcome, run in zip(server.requests, outcomes, runs, strict=True):
        details = outcome.result.details or {}
        shown_first = data_block(seen.user)["assistant_A"]["response"]
        agent_first = shown_first == run.output
        assert details["swapped"] is (not agent_first)
        assert outcome.result.kind == "numeric"
        assert isinstance(outcome.result, NumericResult)
        assert outcome.result.score == (1.0 if agent_first else 0.0)
    assert {(o.result.details or {})["swapped"] for o in outcomes} == {True, False}
    again = one(judges, bound, runs[0])
    assert (again.result.details or {})["seed"] == (outcomes[0].result.details or {})["seed"]
    assert (again.result.details or {})["cached"] is True  # same seed, same prompt


def test_pairwise_tie_scores_half(server: FakeChatServer, judges: JudgeWorker) -> None:
    server.script.append(verdict(reasoning="same", preferred="tie"))
    bound = bind(PairwisePreference, criteria=PairwiseCriteria(response="r"))
    outcome = one(judges, bound)
    assert isinstance(outcome.result, NumericResult) and outcome.result.score == 0.5


def test_pairwise_function_api_for_compare(server: FakeChatServer, judges: JudgeWorker) -> None:
    server.default = verdict(reasoning="B wins", preferred="B")
    seeds = {pairwise_prompt("q", "x", "y", seed).context["swapped"]: seed for seed in range(20)}
    for swapped, seed in seeds.items():
        preference = judges.call(
            lambda r, s=seed: prefer(r, "q?", "answer one", "answer two", seed=s)
        )
        assert preference.seed == seed and preference.swapped is swapped
        assert preference.preferred == ("a" if swapped else "b")  # "B" is what was shown second
        assert preference.reasoning == "B wins"


def test_position_seed_is_stable() -> None:
    assert position_seed("0", "abc") == position_seed("0", "abc") != position_seed("1", "abc")


def test_a_judge_evaluator_alone_reports_that_it_needs_a_judge() -> None:
    result = StepNecessity.build().evaluate(trajectory(), NoCriteria())
    assert isinstance(result, ErrorResult) and "LLM judge" in result.error


def test_an_unknown_judge_name_is_an_error_result(judges: JudgeWorker) -> None:
    outcome = one(judges, bind(FinalAnswerCorrect, criteria=REFERENCE, judge="strict"))
    assert isinstance(outcome.result, ErrorResult)
    assert "no judge named 'strict'" in outcome.result.error


def test_server_errors_become_error_results(
    server: FakeChatServer, judges: JudgeWorker, metrics: CountingMetrics
) -> None:
    server.default = Reply(status=404, body=b'{"error": {"message": "model not found"}}')
    outcome = one(judges, bind(FinalAnswerCorrect, criteria=REFERENCE))
    assert isinstance(outcome.result, ErrorResult)
    assert outcome.result.error == "HTTP 404: model not found"
    assert metrics.get("error", "default", "client_error") == 1
