"""The evaluator API: one door for built-ins and user code.

An evaluator class declares a pydantic *criteria* model (per-case data, e.g. the
reference trajectory) and a pydantic *config* model (behaviour: threshold, modes),
and implements ``evaluate(trajectory, criteria)``, sync or async, returning a
``NumericResult``, ``BooleanResult`` or ``ErrorResult``.

Example::

    class MaxTools(Evaluator[MaxToolsCriteria, EvaluatorConfig]):
        id = "max_tools"

        def evaluate(self, trajectory, criteria):
            return BooleanResult(value=len(trajectory.tool_calls) <= criteria.limit)

``criteria_model`` and ``config_model`` default to the class's type parameters
(``MaxToolsCriteria``, ``EvaluatorConfig`` above); setting them explicitly is
allowed, and the registry rejects a class whose models disagree with its type
parameters (see ``declared_models``).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable
from typing import Any, ClassVar, Generic, Literal, TypeVar, get_args, get_origin

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


Unit = Literal["score", "seconds"]
UNITS: tuple[Unit, ...] = ("score", "seconds")

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
    # What the evaluator reads that an instrumentation may not record (``evaluators.gaps``):
    # on a trajectory with one of these gaps it is not run, and reports the gap instead.
    requires: ClassVar[frozenset[str]] = frozenset()
    # What the evaluator reads that the normalizer builds only on demand
    # (``evaluators.depth``: ``call_ids``); None: everything (the safe default).
    reads: ClassVar[frozenset[str] | None] = None
    unit: ClassVar[Unit] = "score"
    """What a numeric result measures: ``score`` (a grade, usually in [0, 1]) or
    ``seconds`` (a duration such as ``latency``). Seconds get their own histogram
    (``evald_evaluation_result_seconds``), never the score buckets."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Take ``criteria_model`` / ``config_model`` from ``Evaluator[C, K]`` when not set."""
        super().__init_subclass__(**kwargs)
        criteria, config = declared_models(cls, own_bases_only=True)
        if "criteria_model" not in cls.__dict__ and _is_model(criteria, Criteria):
            cls.criteria_model = criteria
        if "config_model" not in cls.__dict__ and _is_model(config, EvaluatorConfig):
            cls.config_model = config

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

    def needs(self, criteria: CriteriaT) -> frozenset[str]:
        """The gaps that make ``criteria`` unanswerable (default: ``requires``)."""
        return self.requires

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


def declared_models(cls: type, *, own_bases_only: bool = False) -> tuple[Any, Any]:
    """The (criteria, config) type arguments ``cls`` gives ``Evaluator`` (or a generic subclass).

    The nearest parametrised base in the MRO wins (only ``cls``'s own bases with
    ``own_bases_only``). An argument that is still a type variable, or a base
    whose parameters are not ``CriteriaT`` / ``ConfigT``, gives None.
    """
    owners = [cls] if own_bases_only else list(cls.__mro__)
    for owner in owners:
        for base in owner.__dict__.get("__orig_bases__", ()):
            origin = get_origin(base)
            if isinstance(origin, type) and issubclass(origin, Evaluator):
                names = getattr(origin, "__parameters__", ())
                params = dict(zip(names, get_args(base), strict=False))
                criteria, config = params.get(CriteriaT), params.get(ConfigT)
                if criteria is not None or config is not None:
                    return _concrete(criteria), _concrete(config)
    return None, None


def type_inconsistency(cls: type[Evaluator[Any, Any]]) -> str | None:
    """Why ``cls``'s models disagree with its type parameters or ``evaluate``, or None.

    ``class E(Evaluator[A, K])`` with ``criteria_model = B`` would hand ``evaluate``
    a ``B`` where its author expects an ``A``; the registry rejects it at load.
    """
    criteria, config = declared_models(cls)
    for attribute, declared in (("criteria_model", criteria), ("config_model", config)):
        model = getattr(cls, attribute)
        if isinstance(declared, type) and not issubclass(model, declared):
            return (
                f"type inconsistency in {cls.__name__}: {attribute} is {model.__name__} but "
                f"the class is declared over {declared.__name__} (Evaluator[criteria, config])"
            )
    annotated = _annotated_criteria(cls)
    if isinstance(annotated, type) and not issubclass(cls.criteria_model, annotated):
        return (
            f"type inconsistency in {cls.__name__}: evaluate() takes criteria of type "
            f"{annotated.__name__} but criteria_model is {cls.criteria_model.__name__}"
        )
    return None


def _annotated_criteria(cls: type[Evaluator[Any, Any]]) -> object:
    """The annotation of ``evaluate``'s criteria parameter, or None if unknown."""
    try:
        parameters = list(inspect.signature(cls.evaluate).parameters.values())
        hints = typing.get_type_hints(cls.evaluate)
    except (NameError, TypeError, ValueError):  # unresolvable string annotations: no check
        return None
    return hints.get(parameters[2].name) if len(parameters) > 2 else None


def _concrete(arg: Any) -> Any:
    return None if isinstance(arg, TypeVar) or arg is Any else arg


def _is_model(value: Any, base: type) -> bool:
    return isinstance(value, type) and issubclass(value, base)
