"""Binding a spec's evaluator entries into ``BoundEvaluator``s, once, at load.

For each entry: resolve the class through the registry; validate its config
with the class's ``config_model`` (the spec's ``step_kinds`` is injected when
the model has that field and the entry did not set it); build its criteria from
the ``reference`` fields the ``criteria_model`` declares plus the entry's own
``criteria``; pick the threshold (``thresholds[id]``, else ``config.threshold``);
resolve the sampling rate (the spec rate times the entry rate) and, for LLM judge
evaluators, the judge name (``judge``, else ``default``), checked against the
configured judges when the caller passes them.
Every problem is collected, with its field path, so one load reports them all.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from evaluators.base import Criteria, EvaluatorConfig
from evaluators.judges.base import DEFAULT_JUDGE, JudgeEvaluator
from evaluators.problems import Loc, Problem, from_validation_error
from evaluators.reference import Reference
from evaluators.registry import (
    EvaluatorClass,
    EvaluatorLoadError,
    EvaluatorRegistry,
    is_registered_name,
    user_code,
)
from evaluators.spec_model import BoundEvaluator, EvaluatorEntry, Spec

_M = TypeVar("_M", bound=BaseModel)


class BindError(Exception):
    """The entries of a spec could not all be bound; ``problems`` says where and why."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


class _Bound(NamedTuple):
    position: int
    cls: EvaluatorClass
    evaluator: BoundEvaluator


def bind_spec(
    spec: Spec,
    registry: EvaluatorRegistry,
    base_dir: Path | None,
    judges: Collection[str] | None = None,
) -> tuple[BoundEvaluator, ...]:
    """Bind every entry of ``spec``, or raise ``BindError`` listing every problem.

    ``judges``: the configured judge names to check ``judge`` references
    against; None skips the check (a missing judge then gives error results).
    """
    problems: list[Problem] = []
    bound: list[_Bound] = []
    for index, entry in enumerate(spec.evaluators):
        try:
            bound.append(_bind_entry(spec, index, entry, registry, base_dir, judges=judges))
        except BindError as exc:
            problems.extend(exc.problems)
    problems.extend(_duplicate_ids(bound))
    if not problems:  # with an entry unresolved, its id and criteria fields are unknown
        problems.extend(_unknown_thresholds(spec, bound))
        problems.extend(_unused_reference_keys(spec, bound))
    if problems:
        raise BindError(problems)
    return tuple(item.evaluator for item in bound)


def _bind_entry(
    spec: Spec,
    index: int,
    entry: EvaluatorEntry,
    registry: EvaluatorRegistry,
    base_dir: Path | None,
    *,
    judges: Collection[str] | None,
) -> _Bound:
    at: Loc = ("evaluators", index)
    try:
        cls = registry.resolve(entry.name, base_dir)
    except EvaluatorLoadError as exc:
        raise BindError([Problem((*at, "name"), str(exc))]) from None
    problems: list[Problem] = []
    config = _config(cls, entry, spec, at, problems)
    criteria = _criteria(cls, entry, spec.reference, at, problems)
    judge = _judge(cls, entry, at, judges, problems)
    if config is None or criteria is None or problems:
        raise BindError(problems)
    try:
        with user_code(entry.name, "constructing the evaluator"):
            evaluator = cls(config)
    except EvaluatorLoadError as exc:
        raise BindError([Problem((*at, "name"), str(exc))]) from None
    ident = entry.id or (entry.name if is_registered_name(entry.name) else cls.id)
    threshold = spec.thresholds.get(ident, config.threshold)
    rate = spec.match.sample_rate * entry.sample_rate  # nested: see BoundEvaluator
    return _Bound(
        index, cls, BoundEvaluator(spec.id, ident, evaluator, criteria, threshold, rate, judge)
    )


def _judge(
    cls: EvaluatorClass,
    entry: EvaluatorEntry,
    at: Loc,
    judges: Collection[str] | None,
    problems: list[Problem],
) -> str | None:
    """The judge name of an LLM judge evaluator; ``judge:`` elsewhere is a problem."""
    if not issubclass(cls, JudgeEvaluator):
        if entry.judge is not None:
            problems.append(Problem((*at, "judge"), f"{entry.name!r} is not an LLM judge"))
        return None
    name = entry.judge or DEFAULT_JUDGE
    if judges is not None and name not in judges:
        known = ", ".join(sorted(judges)) or "none"
        message = f"no judge named {name!r} is configured (judges.endpoints: {known})"
        problems.append(Problem((*at, "judge"), message))
    return name


def _config(
    cls: EvaluatorClass, entry: EvaluatorEntry, spec: Spec, at: Loc, problems: list[Problem]
) -> EvaluatorConfig | None:
    data = dict(entry.config)
    injected = "step_kinds" in cls.config_model.model_fields and "step_kinds" not in data
    if injected:
        data["step_kinds"] = [kind.value for kind in spec.step_kinds]

    def place(loc: Loc) -> Loc:
        return loc if injected and loc[:1] == ("step_kinds",) else (*at, "config", *loc)

    return _validate(cls.config_model, data, place, problems)


def _criteria(
    cls: EvaluatorClass,
    entry: EvaluatorEntry,
    reference: Reference,
    at: Loc,
    problems: list[Problem],
) -> Criteria | None:
    fields = cls.criteria_model.model_fields
    unknown = [key for key in entry.criteria if key not in fields]
    for key in unknown:
        known = ", ".join(fields) or "none"
        problems.append(Problem((*at, "criteria", key), f"unknown key (criteria: {known})"))
    if unknown:
        return None
    given = reference.model_dump(mode="json", exclude_unset=True)
    from_reference = {key: value for key, value in given.items() if key in fields}
    data = {**from_reference, **entry.criteria}

    def place(loc: Loc) -> Loc:
        if loc[:1] and loc[0] in from_reference and loc[0] not in entry.criteria:
            return ("reference", *loc)
        return (*at, "criteria", *loc)

    found: list[Problem] = []
    criteria = _validate(cls.criteria_model, data, place, found)
    problems.extend(_with_reference_hint(problem) for problem in found)
    return criteria


def _with_reference_hint(problem: Problem) -> Problem:
    """A missing criteria field that ``reference`` can provide: say both places."""
    name = problem.loc[-1]
    if problem.message != "required key missing" or name not in Reference.model_fields:
        return problem
    return problem._replace(message=f"required: set reference.{name} or this entry's criteria")


def _validate(
    model: type[_M], data: dict[str, Any], place: Callable[[Loc], Loc], problems: list[Problem]
) -> _M | None:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems.extend(from_validation_error(exc, place))
        return None


def _duplicate_ids(bound: list[_Bound]) -> list[Problem]:
    first: dict[str, int] = {}
    problems = []
    for item in bound:
        ident = item.evaluator.id
        if ident in first:
            message = (
                f"duplicate evaluator id {ident!r} (also evaluators[{first[ident]}]): "
                "give one an `id`"
            )
            problems.append(Problem(("evaluators", item.position), message))
        first.setdefault(ident, item.position)
    return problems


def _unknown_thresholds(spec: Spec, bound: list[_Bound]) -> list[Problem]:
    ids = [item.evaluator.id for item in bound]
    known = ", ".join(ids)
    return [
        Problem(("thresholds", key), f"no evaluator with id {key!r} in this spec (ids: {known})")
        for key in spec.thresholds
        if key not in ids
    ]


def _unused_reference_keys(spec: Spec, bound: list[_Bound]) -> list[Problem]:
    """Extra reference keys must feed some evaluator's criteria, so typos surface."""
    wanted = {name for item in bound for name in item.cls.criteria_model.model_fields}
    extra = spec.reference.model_extra or {}
    return [
        Problem(("reference", key), "not a criteria field of any evaluator of this spec")
        for key in extra
        if key not in wanted
    ]
