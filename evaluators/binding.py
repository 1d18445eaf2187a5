"""Binding a spec's evaluator entries into ``BoundEvaluator``s, once, at load.

Two phases. ``bind_entries``, once per spec: resolve each entry's class through
the registry; validate its config with the class's ``config_model`` (the spec's
``step_kinds`` is injected when the model has that field and the entry did not
set it); build the evaluator; pick its id and threshold (``thresholds[id]``,
else ``config.threshold``); resolve the sampling rate (the spec rate times the
entry rate) and, for LLM judge evaluators, the judge name (``judge``, else
``default``), checked against the configured judges when the caller passes them.
``bind_case``, once per case (the spec itself, or each item of its dataset):
build each entry's criteria from the ``reference`` fields its ``criteria_model``
declares, the entry's own ``criteria`` and the case's criteria for that entry id.
Every problem is collected, with its field path, so one load reports them all.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from evaluators.base import Criteria, Evaluator, EvaluatorConfig
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
CaseCriteria = Mapping[str, Mapping[str, Any]]
"""Per-case criteria by evaluator id (a dataset item's ``criteria``)."""


class BindError(Exception):
    """The entries of a spec could not all be bound; ``problems`` says where and why."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


class BoundEntry(NamedTuple):
    """One entry resolved, configured and built: everything but its per-case criteria."""

    position: int
    entry: EvaluatorEntry
    cls: EvaluatorClass
    evaluator: Evaluator[Any, Any]
    id: str
    threshold: float | None
    sample_rate: float
    judge: str | None


def bind_spec(
    spec: Spec,
    registry: EvaluatorRegistry,
    base_dir: Path | None,
    judges: Collection[str] | None = None,
) -> tuple[BoundEvaluator, ...]:
    """Bind every entry of ``spec`` with the spec's own reference, or raise ``BindError``.

    ``judges``: the configured judge names to check ``judge`` references
    against; None skips the check (a missing judge then gives error results).
    """
    entries, problems = _bind_entries(spec, registry, base_dir, judges)
    try:
        bound = bind_case(spec.id, entries, spec.reference, check_unused=not problems)
    except BindError as exc:
        problems.extend(exc.problems)
    if problems:
        raise BindError(problems)
    return bound


def bind_entries(
    spec: Spec,
    registry: EvaluatorRegistry,
    base_dir: Path | None,
    judges: Collection[str] | None = None,
) -> tuple[BoundEntry, ...]:
    """Resolve, configure and build every entry of ``spec``; raises ``BindError``."""
    entries, problems = _bind_entries(spec, registry, base_dir, judges)
    if problems:
        raise BindError(problems)
    return entries


def _bind_entries(
    spec: Spec,
    registry: EvaluatorRegistry,
    base_dir: Path | None,
    judges: Collection[str] | None,
) -> tuple[tuple[BoundEntry, ...], list[Problem]]:
    """The entries that could be bound, and every problem of the others."""
    problems: list[Problem] = []
    bound: list[BoundEntry] = []
    for index, entry in enumerate(spec.evaluators):
        try:
            bound.append(_bind_entry(spec, index, entry, registry, base_dir, judges=judges))
        except BindError as exc:
            problems.extend(exc.problems)
    problems.extend(_duplicate_ids(bound))
    if not problems:  # with an entry unresolved, its id is unknown
        problems.extend(_unknown_thresholds(spec, bound))
    return tuple(bound), problems


def bind_case(
    spec_id: str,
    entries: tuple[BoundEntry, ...],
    reference: Reference,
    criteria: CaseCriteria | None = None,
    *,
    check_unused: bool = True,
) -> tuple[BoundEvaluator, ...]:
    """The entries with their criteria for one case; raises ``BindError``.

    Problem locations: ``reference.…`` (the reference given), ``criteria.<id>.…``
    (``criteria``, the case's own) or ``evaluators[i].criteria.…`` (the entry's).
    ``check_unused``: reject reference keys no entry's criteria declare.
    """
    criteria = criteria or {}
    problems = _unknown_case_ids(entries, criteria)
    bound: list[BoundEvaluator] = []
    for item in entries:
        found = _criteria(item, reference, criteria.get(item.id, {}), problems)
        if found is not None:
            bound.append(_with_criteria(spec_id, item, found))
    if check_unused and not problems:  # with criteria unknown, their fields are unknown too
        problems.extend(_unused_reference_keys(reference, entries))
    if problems:
        raise BindError(problems)
    return tuple(bound)


def _with_criteria(spec_id: str, item: BoundEntry, criteria: Criteria) -> BoundEvaluator:
    return BoundEvaluator(
        spec_id,
        item.id,
        item.evaluator,
        criteria,
        item.threshold,
        item.sample_rate,
        item.judge,
    )


def _bind_entry(
    spec: Spec,
    index: int,
    entry: EvaluatorEntry,
    registry: EvaluatorRegistry,
    base_dir: Path | None,
    *,
    judges: Collection[str] | None,
) -> BoundEntry:
    at: Loc = ("evaluators", index)
    try:
        cls = registry.resolve(entry.name, base_dir)
    except EvaluatorLoadError as exc:
        raise BindError([Problem((*at, "name"), str(exc))]) from None
    problems: list[Problem] = []
    config = _config(cls, entry, spec, at, problems)
    problems.extend(_unknown_criteria_keys(cls, entry, at))
    judge = _judge(cls, entry, at, judges, problems)
    if config is None or problems:
        raise BindError(problems)
    try:
        with user_code(entry.name, "constructing the evaluator"):
            evaluator = cls(config)
    except EvaluatorLoadError as exc:
        raise BindError([Problem((*at, "name"), str(exc))]) from None
    ident = entry.id or (entry.name if is_registered_name(entry.name) else cls.id)
    threshold = spec.thresholds.get(ident, config.threshold)
    rate = spec.match.sample_rate * entry.sample_rate  # nested: see BoundEvaluator
    return BoundEntry(index, entry, cls, evaluator, ident, threshold, rate, judge)


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


def _unknown_criteria_keys(cls: EvaluatorClass, entry: EvaluatorEntry, at: Loc) -> list[Problem]:
    fields = cls.criteria_model.model_fields
    known = ", ".join(fields) or "none"
    return [
        Problem((*at, "criteria", key), f"unknown key (criteria: {known})")
        for key in entry.criteria
        if key not in fields
    ]


def _unknown_case_ids(entries: tuple[BoundEntry, ...], criteria: CaseCriteria) -> list[Problem]:
    ids = [item.id for item in entries]
    known = ", ".join(ids)
    return [
        Problem(("criteria", key), f"no evaluator with id {key!r} in this spec (ids: {known})")
        for key in criteria
        if key not in ids
    ]


def _criteria(
    item: BoundEntry,
    reference: Reference,
    overrides: Mapping[str, Any],
    problems: list[Problem],
) -> Criteria | None:
    """Reference fields the model declares, then the entry's criteria, then the case's."""
    fields = item.cls.criteria_model.model_fields
    at: Loc = ("evaluators", item.position, "criteria")
    case_at: Loc = ("criteria", item.id)
    unknown = [key for key in overrides if key not in fields]
    known = ", ".join(fields) or "none"
    problems.extend(Problem((*case_at, key), f"unknown key (criteria: {known})") for key in unknown)
    if unknown:
        return None
    given = reference.model_dump(mode="json", exclude_unset=True)
    from_reference = {key: value for key, value in given.items() if key in fields}
    data = {**from_reference, **item.entry.criteria, **overrides}

    def place(loc: Loc) -> Loc:
        if loc[:1] and loc[0] in overrides:
            return (*case_at, *loc)
        if loc[:1] and loc[0] in from_reference and loc[0] not in item.entry.criteria:
            return ("reference", *loc)
        return (*at, *loc)

    found: list[Problem] = []
    criteria = _validate(item.cls.criteria_model, data, place, found)
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


def _duplicate_ids(bound: list[BoundEntry]) -> list[Problem]:
    first: dict[str, int] = {}
    problems = []
    for item in bound:
        if item.id in first:
            message = (
                f"duplicate evaluator id {item.id!r} (also evaluators[{first[item.id]}]): "
                "give one an `id`"
            )
            problems.append(Problem(("evaluators", item.position), message))
        first.setdefault(item.id, item.position)
    return problems


def _unknown_thresholds(spec: Spec, bound: list[BoundEntry]) -> list[Problem]:
    ids = [item.id for item in bound]
    known = ", ".join(ids)
    return [
        Problem(("thresholds", key), f"no evaluator with id {key!r} in this spec (ids: {known})")
        for key in spec.thresholds
        if key not in ids
    ]


def _unused_reference_keys(reference: Reference, bound: tuple[BoundEntry, ...]) -> list[Problem]:
    """Extra reference keys must feed some evaluator's criteria, so typos surface."""
    wanted = {name for item in bound for name in item.cls.criteria_model.model_fields}
    extra = reference.model_extra or {}
    return [
        Problem(("reference", key), "not a criteria field of any evaluator of this spec")
        for key in extra
        if key not in wanted
    ]
