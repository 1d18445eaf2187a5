"""``rubric``: a pointwise LLM judge with the operator's own criteria and rating scale.

Modelled on Vertex AI's ``PointwiseMetricPromptTemplate`` (seed 003): named
``criteria`` definitions, a ``rating_rubric`` mapping each score to what it means,
and the parts of the run to show (``show``). The score is the rating as written
in the rubric (e.g. 1 to 5); set the spec's threshold in the same units. Example::

    - name: rubric
      id: politeness
      config:
        criteria: {politeness: "The response is courteous and never blames the customer."}
        rating_rubric: {"1": polite, "0": impolite}
        show: [input, output]
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, create_model, field_validator

from evaluators.base import Criteria
from evaluators.judges.base import JudgeConfig, JudgeEvaluator, Verdict
from evaluators.judges.parse import VerdictError
from evaluators.judges.prompt import JudgePrompt
from evaluators.judges.views import steps_view, text_view
from evaluators.results import EvaluationResult, NumericResult
from evaluators.trajectory import Trajectory

Part = Literal["input", "output", "trajectory", "reference"]

PREAMBLE = """\
You are an expert evaluator of AI agents. Rate the agent's run against the criteria \
and the rating rubric below. First assess the run against each criterion, then \
choose the one rating of the rubric that fits best, and explain why."""


class RubricConfig(JudgeConfig):
    """The criteria (name → definition), the rating rubric (score → meaning), what to show."""

    criteria: dict[str, str] = Field(min_length=1)
    rating_rubric: dict[str, str] = Field(min_length=2)
    show: tuple[Part, ...] = Field(default=("input", "output", "trajectory"), min_length=1)

    @field_validator("criteria", mode="before")
    @classmethod
    def _one_criterion(cls, value: Any) -> Any:
        return {"criteria": value} if isinstance(value, str) else value

    @field_validator("rating_rubric")
    @classmethod
    def _numeric_ratings(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            try:
                float(key)
            except ValueError:
                raise ValueError(f"rating {key!r} is not a number") from None
        return value

    def ratings(self) -> list[float]:
        return sorted(float(key) for key in self.rating_rubric)


class RubricCriteria(Criteria):
    """Optional reference answer (``reference.response``), shown when ``show`` has it."""

    response: str | None = None


class Rubric(JudgeEvaluator[RubricCriteria, RubricConfig]):
    """LLM judge with user-written criteria and rating rubric; the score is the rating."""

    id = "rubric"
    criteria_model = RubricCriteria
    config_model = RubricConfig
    verdict_model = Verdict  # the real model depends on the rubric: see __init__
    description = __doc__ or ""

    def __init__(self, config: RubricConfig) -> None:
        super().__init__(config)
        ratings = config.ratings()
        self._verdict: type[Verdict] = create_model(
            "RubricVerdict",
            __base__=Verdict,
            reasoning=(str, Field(description="your assessment against each criterion")),
            score=(float, Field(description="the chosen rating", json_schema_extra=_enum(ratings))),
        )
        self._instructions = _instructions(config)

    def prompt(
        self, trajectory: Trajectory, criteria: RubricCriteria
    ) -> JudgePrompt | EvaluationResult:
        show, kinds = self.config.show, self.config.step_kinds

        def data(field_chars: int, steps: int) -> dict[str, Any]:
            parts: dict[str, Any] = {}
            if "input" in show:
                parts["input"] = text_view(trajectory.input, field_chars, "(no input recorded)")
            if "trajectory" in show:
                parts["trajectory"] = steps_view(trajectory, kinds, field_chars, steps)
            if "output" in show:
                parts["response"] = text_view(trajectory.output, field_chars)
            if "reference" in show:
                parts["reference"] = text_view(criteria.response, field_chars, "(no reference)")
            return parts

        return JudgePrompt(self._instructions, data, self._verdict)

    def interpret(self, verdict: Verdict, prompt: JudgePrompt) -> EvaluationResult:
        score = float(getattr(verdict, "score"))  # noqa: B009 - field of a dynamic model
        if score not in self.config.ratings():
            raise VerdictError(f"rating {score:g} is not in the rubric {self.config.ratings()}")
        return NumericResult(score=score, explanation=str(getattr(verdict, "reasoning")))  # noqa: B009


def _enum(ratings: list[float]) -> dict[str, Any]:
    return {"enum": [int(r) if r.is_integer() else r for r in ratings]}


def _instructions(config: RubricConfig) -> str:
    criteria = "\n".join(f"{name}: {text}" for name, text in config.criteria.items())
    rubric = "\n".join(f"{score}: {text}" for score, text in config.rating_rubric.items())
    return f"{PREAMBLE}\n\n## Criteria\n{criteria}\n\n## Rating rubric\n{rubric}"
