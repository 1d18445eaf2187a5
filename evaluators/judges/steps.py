"""Judges of the trajectory itself: ``step_necessity`` (seed 000) and
``response_follows_trajectory`` (seed 003, Vertex AI's LLM-based trajectory metric).

``step_necessity`` asks seed 000's question — are any of the steps unnecessary to
answer the input? — and keeps its raw ``Y``/``N`` in ``details.decision``. Unlike the
seed, whose score is 1 for "Y" (some step was unnecessary), evald reports a boolean
that is **true when every step was necessary**, so that, like every other
evaluator, true / higher means better and passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from evaluators.base import NoCriteria
from evaluators.judges.base import JudgeConfig, JudgeEvaluator, Verdict
from evaluators.judges.parse import last_line
from evaluators.judges.prompt import JudgePrompt
from evaluators.judges.views import steps_view, text_view
from evaluators.results import BooleanResult, EvaluationResult, NumericResult
from evaluators.trajectory import Trajectory

NECESSITY_INSTRUCTIONS = """\
You review the steps an AI agent took to answer a user's input.

Are any of the steps unnecessary in answering the input? A step is unnecessary if \
the answer could have been reached as well without it (a repeated call, a lookup \
whose result was not needed or not used, a detour). Give the verdict "Y" for yes \
(at least one step was unnecessary) or "N" for no (every step was necessary), \
and list the numbers of the unnecessary steps."""

FOLLOWS_INSTRUCTIONS = """\
You are an expert evaluator of AI agents. Rate the agent's response against the \
criteria and rating rubric below.

## Criteria
Follows trajectory: Evaluate whether the agent's response logically follows from the \
sequence of actions it took. Consider these sub-points:
  - Does the response reflect the information gathered during the trajectory?
  - Is the response consistent with the goals and constraints of the task?
  - Are there any unexpected or illogical jumps in reasoning?
Provide specific examples from the trajectory and response to support your evaluation.

## Rating rubric
1: Follows trajectory
0: Does not follow trajectory"""


class NecessityVerdict(Verdict):
    reasoning: str = Field(description="why each step was or was not needed")
    unnecessary_steps: list[int] = Field(description="numbers of the unnecessary steps")
    verdict: Literal["Y", "N"] = Field(description='"Y" if any step was unnecessary, else "N"')


class StepNecessity(JudgeEvaluator[NoCriteria, JudgeConfig]):
    """LLM judge: every step was necessary to answer the input (seed 000, inverted: true = good)."""

    id = "step_necessity"
    config_model = JudgeConfig
    verdict_model = NecessityVerdict
    description = __doc__ or ""

    def prompt(
        self, trajectory: Trajectory, criteria: NoCriteria
    ) -> JudgePrompt | EvaluationResult:
        kinds = self.config.step_kinds
        if not trajectory.steps_of(kinds):
            return BooleanResult(value=True, explanation="no steps to judge")

        def data(field_chars: int, steps: int) -> dict[str, Any]:
            return {
                "input": text_view(trajectory.input, field_chars, "(no input recorded)"),
                "steps": steps_view(trajectory, kinds, field_chars, steps),
            }

        return JudgePrompt(NECESSITY_INSTRUCTIONS, data, NecessityVerdict)

    def interpret(self, verdict: Verdict, prompt: JudgePrompt) -> EvaluationResult:
        assert isinstance(verdict, NecessityVerdict)
        return BooleanResult(
            value=verdict.verdict == "N",
            explanation=verdict.reasoning,
            details={"decision": verdict.verdict, "unnecessary_steps": verdict.unnecessary_steps},
        )

    def fallback(self, text: str) -> Mapping[str, Any] | None:
        """Seed 000's format: free reasoning, the verdict alone on the last line."""
        decision = last_line(text).strip(" .*`\"'").upper()
        if decision in ("Y", "N"):
            return {"reasoning": text.strip(), "unnecessary_steps": [], "verdict": decision}
        return None


class FollowsVerdict(Verdict):
    reasoning: str = Field(description="your evaluation, with examples from the data")
    score: Literal[0, 1] = Field(description="1 if the response follows the trajectory, else 0")


class FollowsConfig(JudgeConfig):
    threshold: float | None = 1.0


class ResponseFollowsTrajectory(JudgeEvaluator[NoCriteria, FollowsConfig]):
    """LLM judge (Vertex rubric): the response logically follows from the actions taken."""

    id = "response_follows_trajectory"
    config_model = FollowsConfig
    verdict_model = FollowsVerdict
    description = __doc__ or ""

    def prompt(
        self, trajectory: Trajectory, criteria: NoCriteria
    ) -> JudgePrompt | EvaluationResult:
        kinds = self.config.step_kinds

        def data(field_chars: int, steps: int) -> dict[str, Any]:
            return {
                "prompt": text_view(trajectory.input, field_chars, "(no input recorded)"),
                "predicted_trajectory": steps_view(trajectory, kinds, field_chars, steps),
                "response": text_view(trajectory.output, field_chars),
            }

        return JudgePrompt(FOLLOWS_INSTRUCTIONS, data, FollowsVerdict)

    def interpret(self, verdict: Verdict, prompt: JudgePrompt) -> EvaluationResult:
        assert isinstance(verdict, FollowsVerdict)
        return NumericResult(score=float(verdict.score), explanation=verdict.reasoning)
