"""The evaluator API: one door for built-ins and user code.

An evaluator class declares a pydantic *criteria* model (per-case data, e.g. the
reference trajectory) and a pydantic *config* model (behaviour: threshold, modes),
and implements ``evaluate(trajectory, criteria)``, sync or async, returning a
``NumericResult``, ``BooleanResult`` or ``ErrorResult``.

Example::

    class MaxTools(Evaluator[MaxToolsCriteria, EvaluatorConfig]):
        id = "max_tools"
        criteria_model = MaxToolsCriteria
        config_model = EvaluatorConfig

        def evaluate(self, trajectory, criteria):
            return BooleanResult(value=len(trajectory.tool_calls) <= criteria.limit)
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from evaluators.results import EvaluationResult
from evaluators.trajectory import Trajectory


class Criteria(BaseModel):
    """Base of per-case criteria models. Unknown keys are an error, so typos surface."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class NoCriteria(Criteria):
    """For evaluators that need no per-case data (latency, failure …)."""


class EvaluatorConfig(BaseModel):
    """Base of evaluator config models.

    ``threshold``: a numeric result passes when ``score >= threshold`` (or
    ``score <= threshold`` for evaluators whose ``higher_is_better`` is False).
    ``None`` means the evaluator reports a score without a verdict, except for
    boolean results, whose value is the verdict.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float | None = None


CriteriaT = TypeVar("CriteriaT", bound=Criteria)
ConfigT = TypeVar("ConfigT", bound=EvaluatorConfig)


class Evaluator(Generic[CriteriaT, ConfigT]):
    """Base class of every evaluator.

    Subclasses set the class attributes and implement ``evaluate``. Instances are
    built once per (spec, evaluator entry) with a validated config and then called
    for many trajectories, possibly from a worker thread: ``evaluate`` must not
    mutate shared state without its own locking.
    """

    id: ClassVar[str]
    criteria_model: ClassVar[type[Criteria]] = NoCriteria
    config_model: ClassVar[type[EvaluatorConfig]] = EvaluatorConfig
    higher_is_better: ClassVar[bool] = True
    description: ClassVar[str] = ""

    def __init__(self, config: ConfigT) -> None:
        self.config = config

    def evaluate(
        self, trajectory: Trajectory, criteria: CriteriaT
    ) -> EvaluationResult | Awaitable[EvaluationResult]:
        """Judge one trajectory against one case's criteria.

        Return a result; raising is allowed (the runner records an ``ErrorResult``)
        but returning ``ErrorResult`` with a clear message is better.
        """
        raise NotImplementedError

    def passed(self, score: float, threshold: float) -> bool:
        """Whether ``score`` meets ``threshold`` in this evaluator's direction."""
        return score >= threshold if self.higher_is_better else score <= threshold

    @classmethod
    def build(cls, config: dict[str, Any] | None = None) -> Evaluator[Any, Any]:
        """Validate ``config`` with ``config_model`` and construct the evaluator.

        Raises ``pydantic.ValidationError`` for a bad config.
        """
        # ``config_model`` is a ClassVar, so its tie to ConfigT cannot be typed.
        validated: Any = cls.config_model.model_validate(config or {})
        return cls(validated)
