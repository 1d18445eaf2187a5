"""``final_answer_correct``: is the agent's final answer right, against a reference answer?

The grading instructions and verdict shape are seed 001's (LangSmith's "evaluate a
complex agent": a teacher grading a quiz, ``{reasoning, is_correct}``); the
reference answer is the spec's ``reference.response`` (or the entry's criteria).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from evaluators.base import Criteria
from evaluators.judges.base import JudgeConfig, JudgeEvaluator, Verdict
from evaluators.judges.parse import last_line
from evaluators.judges.prompt import JudgePrompt
from evaluators.judges.views import text_view
from evaluators.results import BooleanResult, ErrorResult, EvaluationResult
from evaluators.trajectory import Trajectory

GRADER_INSTRUCTIONS = """\
You are a teacher grading a quiz.

You will be given a QUESTION, the GROUND TRUTH (correct) RESPONSE, and the STUDENT RESPONSE.

Here are the grading criteria to follow:
(1) Grade the student response based ONLY on its factual accuracy relative to the ground truth \
response.
(2) Ensure that the student response does not contain any conflicting statements.
(3) It is OK if the student response contains more information than the ground truth \
response, as long as it is factually accurate relative to the ground truth response.

Correctness:
True means that the student's response meets all of the criteria.
False means that the student's response does not meet all of the criteria.

Explain your reasoning in a step-by-step manner to ensure your reasoning and conclusion \
are correct."""

_TRUE_WORDS = frozenset({"true", "correct", "yes", "y"})
_FALSE_WORDS = frozenset({"false", "incorrect", "no", "n"})


class FinalAnswerCriteria(Criteria):
    """The reference answer (usually ``reference.response``)."""

    response: str


class Grade(Verdict):
    reasoning: str = Field(description="your step-by-step reasoning about the student response")
    is_correct: bool = Field(description="true if the student response is mostly or fully correct")


class FinalAnswerCorrect(JudgeEvaluator[FinalAnswerCriteria, JudgeConfig]):
    """LLM judge: the final answer is factually correct relative to the reference answer."""

    id = "final_answer_correct"
    criteria_model = FinalAnswerCriteria
    config_model = JudgeConfig
    verdict_model = Grade
    description = __doc__ or ""

    def prompt(
        self, trajectory: Trajectory, criteria: FinalAnswerCriteria
    ) -> JudgePrompt | EvaluationResult:
        if trajectory.output is None:
            return ErrorResult(error="the trajectory has no final answer to grade")

        def data(field_chars: int, steps: int) -> dict[str, Any]:
            return {
                "question": text_view(trajectory.input, field_chars, "(no question recorded)"),
                "ground_truth_response": text_view(criteria.response, field_chars),
                "student_response": text_view(trajectory.output, field_chars),
            }

        return JudgePrompt(GRADER_INSTRUCTIONS, data, Grade)

    def interpret(self, verdict: Verdict, prompt: JudgePrompt) -> EvaluationResult:
        assert isinstance(verdict, Grade)
        return BooleanResult(value=verdict.is_correct, explanation=verdict.reasoning)

    def fallback(self, text: str) -> Mapping[str, Any] | None:
        """A bare ``True``/``False`` (or correct/incorrect) on the last line."""
        word = last_line(text).strip(" .*`\"'").lower()
        if word in _TRUE_WORDS or word in _FALSE_WORDS:
            return {"reasoning": text.strip(), "is_correct": word in _TRUE_WORDS}
        return None
