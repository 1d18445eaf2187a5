"""Loading reference specs (YAML or JSON) and picking the ones that apply to a trace.

``load_spec(path)`` parses a file, validates it (``evaluators.spec_model.Spec``,
unknown keys rejected), compiles its regexes, binds its evaluators through
the registry (``evaluators.binding``) and loads its dataset, if any
(``evaluators.datasets``). ``load_specs(paths)`` loads many (files or
directories) and rejects duplicate spec ids, and a default evaluator id that
names different classes in two specs. Every problem becomes a ``SpecError`` line
such as::

    config/specs/refund.yaml:14: evaluators[1].criteria.tool: required key missing
    config/datasets/refunds.yaml:9: items[2].criteria.refund_issued.tool: item 'r-2': …

A ``SpecSet`` is immutable: reloading builds a new one, and a failed reload
leaves the previous set in use.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from evaluators.binding import BindError, BoundEntry, bind_entries, bind_spec
from evaluators.datasets import DatasetError, dataset_path, load_dataset
from evaluators.depth import parts_read
from evaluators.documents import (
    JSON_SUFFIXES,
    YAML_SUFFIXES,
    Document,
    DocumentError,
    read_document,
)
from evaluators.problems import Problem, format_loc, from_validation_error
from evaluators.registry import EvaluatorRegistry, default_registry
from evaluators.spec_model import BoundEvaluator, EvaluatorEntry, Scope, Spec
from evaluators.trajectory import Trajectory

__all__ = [
    "BoundEvaluator",
    "EvaluatorEntry",
    "Scope",
    "Spec",
    "SpecError",
    "SpecProblem",
    "SpecSet",
    "build_spec",
    "load_spec",
    "load_specs",
]

SPEC_SUFFIXES = YAML_SUFFIXES + JSON_SUFFIXES


class SpecProblem(NamedTuple):
    """One problem: the file, the 1-based line and the field path when known, and what."""

    path: Path | None
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = str(self.path) if self.path is not None else "<spec>"
        if self.line is not None:
            where += f":{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class SpecError(Exception):
    """Specs that cannot be loaded; ``problems`` lists them all, one per line of the message."""

    def __init__(self, problems: Sequence[SpecProblem]) -> None:
        super().__init__("\n".join(str(problem) for problem in problems))
        self.problems = list(problems)


def load_spec(
    path: str | Path,
    *,
    registry: EvaluatorRegistry | None = None,
    judges: Collection[str] | None = None,
) -> Spec:
    """Load, validate and bind one spec file. Raises ``SpecError``.

    ``judges``: configured judge names that ``judge:`` may reference (None: unchecked).
    """
    return _load(Path(path), registry, judges)[0]


def build_spec(
    data: Mapping[str, Any],
    *,
    base_dir: Path | None = None,
    registry: EvaluatorRegistry | None = None,
    judges: Collection[str] | None = None,
) -> Spec:
    """Validate and bind a spec given as data; errors carry no line. Raises ``SpecError``."""
    return _build(data, None, base_dir, registry, judges)


def load_specs(
    paths: Iterable[str | Path],
    *,
    registry: EvaluatorRegistry | None = None,
    judges: Collection[str] | None = None,
) -> SpecSet:
    """Load spec files and directories (their ``*.yaml|yml|json``, sorted, not recursive).

    Every file is tried, so one ``SpecError`` reports the problems of all of them,
    including spec ids defined twice.
    """
    loaded: list[tuple[Spec, Document]] = []
    problems: list[SpecProblem] = []
    for path in _expand(paths, problems):
        try:
            loaded.append(_load(path, registry, judges))
        except SpecError as exc:
            problems.extend(exc.problems)
    problems.extend(_duplicate_ids(loaded))
    problems.extend(_conflicting_evaluator_ids(loaded))
    if problems:
        raise SpecError(problems)
    return SpecSet(spec for spec, _ in loaded)


class SpecSet:
    """Loaded specs with unique ids, in load order. Immutable: safe to share across threads.

    ``matching`` and ``bound_for`` consider the specs of one ``scope``: per trace
    (default) or per session (``has_session_specs`` says whether there are any).
    """

    def __init__(self, specs: Iterable[Spec] = ()) -> None:
        self._specs = tuple(specs)
        ids = [spec.id for spec in self._specs]
        duplicates = sorted({ident for ident in ids if ids.count(ident) > 1})
        if duplicates:
            raise SpecError([SpecProblem(None, None, "id", f"duplicate spec id {duplicates[0]!r}")])
        self._by_id = {spec.id: spec for spec in self._specs}
        self._by_scope: dict[Scope, tuple[Spec, ...]] = {
            scope: tuple(spec for spec in self._specs if spec.scope == scope)
            for scope in ("trace", "session")
        }
        self._session_parts = parts_read_by(
            bound for spec in self._by_scope["session"] for bound in spec.bound
        )
        # (scope, service) → the specs whose ``match.service`` holds for that service:
        # most traces are ruled out by their service alone, and there are few services.
        self._by_service: dict[tuple[Scope, str], tuple[Spec, ...]] = {}

    def __iter__(self) -> Iterator[Spec]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._by_id)

    @property
    def sources(self) -> tuple[Path, ...]:
        """Every file the specs were built from (spec and dataset files), for change watching."""
        return tuple(path for spec in self._specs for path in spec.sources)

    def get(self, spec_id: str) -> Spec | None:
        return self._by_id.get(spec_id)

    @property
    def has_session_specs(self) -> bool:
        """Whether any spec has ``scope: session`` (then sessions are worth assembling)."""
        return bool(self._by_scope["session"])

    def may_hold_session_of(self, turn: Trajectory) -> bool:
        """Whether some session spec can match a session with ``turn`` among its turns
        (``MatchRule.may_match_session_of``: its service): only those are held."""
        return bool(self._by_scope["session"]) and bool(self._candidates("session", turn.service))

    @property
    def session_parts(self) -> frozenset[str]:
        """The optional trajectory parts (``evaluators.depth``) that the evaluators of
        the session specs read: a turn a session spec may hold is built with them."""
        return self._session_parts

    def matching(self, trajectory: Trajectory, scope: Scope = "trace") -> list[Spec]:
        """Every spec of ``scope`` that applies to ``trajectory`` (several may), in load
        order; for ``session``, ``trajectory`` is a session's merged trajectory."""
        candidates = self._candidates(scope, trajectory.service)
        return [spec for spec in candidates if spec.matches(trajectory)]

    def _candidates(self, scope: Scope, service: str) -> tuple[Spec, ...]:
        """The specs of ``scope`` whose service condition holds for ``service`` (cached;
        a race computes one twice, the same answer)."""
        key = (scope, service)
        found = self._by_service.get(key)
        if found is None:
            if len(self._by_service) >= _MAX_SERVICES:
                self._by_service.clear()  # bounded: services come from traffic
            found = tuple(
                spec for spec in self._by_scope[scope] if spec.match.service_holds(service)
            )
            self._by_service[key] = found
        return found

    def bound_for(self, trajectory: Trajectory, scope: Scope = "trace") -> list[BoundEvaluator]:
        """The bound evaluators of every matching spec of ``scope`` (for a dataset spec,
        those of the trace's item; none when no item matches), ready for the runner."""
        return [
            bound
            for spec in self.matching(trajectory, scope)
            for bound in spec.evaluators_for(trajectory) or ()
        ]


_MAX_SERVICES = 4096


def parts_read_by(bound: Iterable[BoundEvaluator]) -> frozenset[str]:
    """The optional trajectory parts (``evaluators.depth``) the ``bound`` evaluators read."""
    found: frozenset[str] = frozenset()
    for each in bound:
        found |= parts_read(each.evaluator)
    return found


def _load(
    path: Path, registry: EvaluatorRegistry | None, judges: Collection[str] | None
) -> tuple[Spec, Document]:
    try:
        document = read_document(path)
    except DocumentError as exc:
        raise SpecError([SpecProblem(path, exc.line, None, exc.message)]) from None
    return _build(document.data, document, path.resolve().parent, registry, judges), document


def _build(
    data: Any,
    document: Document | None,
    base_dir: Path | None,
    registry: EvaluatorRegistry | None,
    judges: Collection[str] | None = None,
) -> Spec:
    if not isinstance(data, Mapping):
        problem = Problem((), "expected a mapping (id, match, reference, evaluators, …)")
        raise _spec_error([problem], document)
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        raise _spec_error(from_validation_error(exc), document) from None
    registry = registry or default_registry()
    try:
        if spec.dataset is None:
            spec.attach(bind_spec(spec, registry, base_dir, judges), _path(document))
            return spec
        entries = bind_entries(spec, registry, base_dir, judges)
    except BindError as exc:
        raise _spec_error(exc.problems, document) from None
    _attach_dataset(spec, entries, document, base_dir)
    return spec


def _attach_dataset(
    spec: Spec, entries: tuple[BoundEntry, ...], document: Document | None, base_dir: Path | None
) -> None:
    assert spec.dataset is not None
    path = dataset_path(spec.dataset, base_dir)
    if not path.is_file():
        problem = Problem(("dataset", "path"), f"dataset file not found: {path}")
        raise _spec_error([problem], document)
    try:
        dataset = load_dataset(spec, spec.dataset, entries, path)
    except DatasetError as exc:
        raise SpecError([SpecProblem(*problem) for problem in exc.problems]) from None
    first = next(iter(dataset.cases.values()))
    spec.attach(first, _path(document), dataset.cases, path)


def _path(document: Document | None) -> Path | None:
    return document.path if document is not None else None


def _spec_error(problems: Iterable[Problem], document: Document | None) -> SpecError:
    path = document.path if document is not None else None
    return SpecError(
        [
            SpecProblem(
                path,
                document.line_of(problem.loc) if document is not None else None,
                format_loc(problem.loc) or None,
                problem.message,
            )
            for problem in problems
        ]
    )


def _expand(paths: Iterable[str | Path], problems: list[SpecProblem]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if _is_spec_file(p)))
        elif path.exists():
            files.append(path)
        else:
            problems.append(SpecProblem(path, None, None, "no such file or directory"))
    return files


def _is_spec_file(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in SPEC_SUFFIXES


def _conflicting_evaluator_ids(loaded: list[tuple[Spec, Document]]) -> list[SpecProblem]:
    """A default evaluator id (a registered name or a class ``id``) must mean one class.

    Results and metrics are labelled by evaluator id: a custom class whose ``id``
    is ``trajectory_recall`` must not pass for the built-in one.
    """
    first: dict[str, tuple[type, Path]] = {}
    problems = []
    for spec, document in loaded:
        for index, (entry, bound) in enumerate(zip(spec.evaluators, spec.bound, strict=True)):
            cls = type(bound.evaluator)
            if entry.id is not None:
                continue
            seen = first.setdefault(bound.id, (cls, document.path))
            if seen[0] is not cls:
                message = (
                    f"evaluator id {bound.id!r} already names {seen[0].__qualname__} in "
                    f"{seen[1]}, not {cls.__qualname__}: give this entry an `id`"
                )
                loc = ("evaluators", index, "name")
                problems.append(
                    SpecProblem(document.path, document.line_of(loc), format_loc(loc), message)
                )
    return problems


def _duplicate_ids(loaded: list[tuple[Spec, Document]]) -> list[SpecProblem]:
    first: dict[str, Path] = {}
    problems = []
    for spec, document in loaded:
        if spec.id in first:
            message = f"duplicate spec id {spec.id!r} (first defined in {first[spec.id]})"
            problems.append(SpecProblem(document.path, document.line_of(("id",)), "id", message))
        first.setdefault(spec.id, document.path)
    return problems
