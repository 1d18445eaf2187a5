"""The judge evaluator API: an evaluator whose verdict comes from an LLM.

A ``JudgeEvaluator`` is pure: ``prompt`` says what to ask about a trajectory,
``interpret`` turns the parsed verdict into a result. Everything with side
effects — the cache, the daily budget, rate limits, retries, the HTTP call and
the tolerant parsing of the reply — is the judge runner's
(``evaluators.judges.runner``), so every judge evaluator gets the same
guarantees and can be tested without a server.

A spec references a configured judge by name (``judge: default``, the default);
``evaluate`` alone cannot reach one and says so in an ``ErrorResult``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, Field, ValidationError

from evaluators.base import ConfigT, CriteriaT, Evaluator, EvaluatorConfig
from evaluators.judges.parse import VerdictError, extract_json
from evaluators.judges.prompt import DataLimits, JudgePrompt, Verdict
from evaluators.results import ErrorResult, EvaluationResult
from evaluators.trajectory import StepKind, Trajectory

__all__ = ["DEFAULT_JUDGE", "JudgeConfig", "JudgeEvaluator", "Verdict", "read_verdict"]

DEFAULT_JUDGE = "default"

V = TypeVar("V", bound=BaseModel)
Fallback = Callable[[str], Mapping[str, Any] | None]


class JudgeConfig(EvaluatorConfig):
    """Behaviour common to judge evaluators: which steps are shown, and size limits."""

    step_kinds: tuple[StepKind, ...] = Field(default=(StepKind.TOOL,), min_length=1)
    max_field_chars: int = Field(default=2_000, ge=64, description="per value shown")
    max_steps: int = Field(default=40, ge=2, description="steps shown; the middle is elided")
    max_data_chars: int = Field(default=24_000, ge=1_000, description="the whole data block")

    def limits(self) -> DataLimits:
        return DataLimits(self.max_field_chars, self.max_steps, self.max_data_chars)


class JudgeEvaluator(Evaluator[CriteriaT, ConfigT]):
    """Base of LLM-judge evaluators. Subclasses implement ``prompt`` and ``interpret``."""

    verdict_model: ClassVar[type[Verdict]]

    def prompt(self, trajectory: Trajectory, criteria: CriteriaT) -> JudgePrompt | EvaluationResult:
        """What to ask about ``trajectory``; a result instead when no call is needed
        (nothing to judge). Must be deterministic: the prompt is the cache key."""
        raise NotImplementedError

    def interpret(self, verdict: Verdict, prompt: JudgePrompt) -> EvaluationResult:
        """The result for a validated verdict. The runner adds judge details."""
        raise NotImplementedError

    def fallback(self, text: str) -> Mapping[str, Any] | None:
        """A verdict read from a reply that holds no JSON object; None if there is none."""
        return None

    def read(self, text: str, prompt: JudgePrompt) -> Verdict:
        """The verdict in a reply: JSON object (tolerant), else ``fallback``.

        Raises ``VerdictError`` saying what was wrong.
        """
        return read_verdict(text, prompt.verdict, self.fallback)

    def limits(self) -> DataLimits:
        config = self.config
        return config.limits() if isinstance(config, JudgeConfig) else DataLimits()

    def evaluate(self, trajectory: Trajectory, criteria: CriteriaT) -> EvaluationResult:
        return ErrorResult(
            error=f"{self.id} is an LLM judge: it runs only where judges are configured "
            "(config `judges.endpoints`, spec entry `judge:`)"
        )


def read_verdict(text: str, model: type[V], fallback: Fallback | None = None) -> V:
    """``model`` validated from the JSON object in ``text``, else from ``fallback(text)``.

    Keys the model does not know are dropped (loose servers add some). Raises ``VerdictError``.
    """
    try:
        data: Mapping[str, Any] = extract_json(text)
    except VerdictError:
        found = fallback(text) if fallback is not None else None
        if found is None:
            raise
        data = found
    keys = model.model_fields
    try:
        return model.model_validate({k: v for k, v in data.items() if k in keys})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise VerdictError(
            f"the judge's verdict does not fit {model.__name__}: {problems}"
        ) from None
