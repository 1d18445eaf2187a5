"""Loading a spec's dataset and binding each item: one tuple of bound evaluators per case.

File formats, by suffix:

- ``.yaml`` / ``.yml`` / ``.json``: a list of items, or a mapping with ``items``
  (plus optional ``id`` and ``description``);
- ``.jsonl``: one item (a JSON object) per line; blank lines are skipped.

Each item is validated (``evaluators.dataset_model.DatasetItem``), keyed
(``DatasetRef.match_by``) and bound at load: its reference is merged over the
spec's and every evaluator's criteria are validated with the item's overrides,
so a bad item fails the load with a problem naming the dataset file, the line,
the item and the field — never a trace later.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, cast

from pydantic import ValidationError

from evaluators.binding import BindError, BoundEntry, bind_case
from evaluators.dataset_model import DatasetItem, DatasetRef, MatchByAttribute, normalize_input
from evaluators.documents import TOO_DEEP, DocumentError, read_document, too_deep
from evaluators.problems import Loc, Problem, format_loc, from_validation_error
from evaluators.reference import Reference
from evaluators.spec_model import BoundEvaluator, Spec

JSONL_SUFFIXES = (".jsonl", ".ndjson")
LineOf = Callable[[Loc], int | None]


class DatasetProblem(NamedTuple):
    """One problem of a dataset file: the file, the 1-based line, the field path, what."""

    path: Path
    line: int | None
    field: str | None
    message: str


class DatasetError(Exception):
    """A dataset that cannot be used; ``problems`` lists every problem found."""

    def __init__(self, problems: list[DatasetProblem]) -> None:
        super().__init__("\n".join(problem.message for problem in problems))
        self.problems = problems


class BoundDataset(NamedTuple):
    """A loaded dataset: the item key → that item's bound evaluators."""

    path: Path
    cases: dict[str, tuple[BoundEvaluator, ...]]


class _Raw(NamedTuple):
    position: int
    data: Any
    line_of: LineOf


def dataset_path(ref: DatasetRef, base_dir: Path | None) -> Path:
    """The dataset file, relative to ``base_dir`` (the spec's directory) unless absolute."""
    path = Path(ref.path).expanduser()
    return (path if path.is_absolute() else (base_dir or Path.cwd()) / path).resolve()


def load_dataset(
    spec: Spec, ref: DatasetRef, entries: tuple[BoundEntry, ...], path: Path
) -> BoundDataset:
    """Read ``path`` and bind every item against ``spec``'s entries; raises ``DatasetError``."""
    raw = _read_items(path)
    binder = _Binder(spec, ref, entries, path)
    for item in raw:
        binder.add(item)
    if not raw:
        binder.problems.append(DatasetProblem(path, None, None, "the dataset has no items"))
    if binder.problems:
        raise DatasetError(binder.problems)
    return BoundDataset(path, binder.cases)


class _Binder:
    """Validates, keys and binds items one by one, collecting problems."""

    def __init__(
        self, spec: Spec, ref: DatasetRef, entries: tuple[BoundEntry, ...], path: Path
    ) -> None:
        self.spec, self.ref, self.entries, self.path = spec, ref, entries, path
        self.base = spec.reference.model_dump(mode="json", exclude_unset=True)
        self.cases: dict[str, tuple[BoundEvaluator, ...]] = {}
        self.first: dict[str, int] = {}
        self.labels: dict[str, int] = {}  # item label (id, else key) -> its position
        self.problems: list[DatasetProblem] = []

    def add(self, raw: _Raw) -> None:
        try:
            item = DatasetItem.model_validate(raw.data)
        except ValidationError as exc:
            self._report(raw, None, from_validation_error(exc))
            return
        key = self._key(raw, item)
        try:
            reference = Reference.model_validate({**self.base, **item.reference_data()})
            bound = bind_case(self.spec.id, self.entries, reference, item.criteria)
        except BindError as exc:
            self._report(raw, item, [self._from_bind(item, problem) for problem in exc.problems])
            return
        if key is None:
            return
        label = item.id or key  # what results carry (`item`) and compare aligns on
        if label in self.labels:
            message = f"the same id as items[{self.labels[label]}]: ids must be unique"
            self._report(raw, item, [Problem(("id",), message)])
            return
        self.labels[label] = raw.position
        self.cases[key] = tuple(entry._replace(item=label) for entry in bound)

    def _key(self, raw: _Raw, item: DatasetItem) -> str | None:
        by = self.ref.match_by
        if isinstance(by, MatchByAttribute):
            key, field, what = item.id, "id", f"an `id` (matched to attribute {by.attribute})"
        else:
            key, field, what = item.input, "input", "an `input` (traces are matched by input)"
            key = None if key is None else normalize_input(key)
        if key is None:
            self._report(raw, item, [Problem((field,), f"required: every item needs {what}")])
        elif key in self.first:
            message = f"the same {field} as items[{self.first[key]}]: keys must be unique"
            self._report(raw, item, [Problem((field,), message)])
            return None
        else:
            self.first[key] = raw.position
        return key

    def _from_bind(self, item: DatasetItem, problem: Problem) -> Problem:
        """Place a binding problem in the item, or say it comes from the spec."""
        loc, message = problem
        if loc[:1] == ("criteria",):
            return problem
        if loc[:1] == ("reference",) and len(loc) > 1 and str(loc[1]) in item.reference_data():
            return problem
        if message.startswith("required") and loc[:1] == ("evaluators",) and len(loc) == 4:
            return self._missing(loc[1], str(loc[3]))
        return Problem((), f"{format_loc(loc)} (in the spec, with this item): {message}")

    def _missing(self, position: Any, name: str) -> Problem:
        if name in Reference.model_fields:
            return Problem(
                ("reference", name), "required key missing (nor in the spec's reference)"
            )
        ident = next(entry.id for entry in self.entries if entry.position == position)
        message = f"required key missing (nor in the spec's criteria for {ident})"
        return Problem(("criteria", ident, name), message)

    def _report(self, raw: _Raw, item: DatasetItem | None, problems: list[Problem]) -> None:
        label = f"item {item.id!r}: " if item is not None and item.id else ""
        for loc, message in problems:
            field = format_loc(("items", raw.position, *loc))
            self.problems.append(
                DatasetProblem(self.path, raw.line_of(loc), field, label + message)
            )


def _read_items(path: Path) -> list[_Raw]:
    if path.suffix.lower() in JSONL_SUFFIXES:
        return list(_jsonl_items(path))
    try:
        document = read_document(path)
    except DocumentError as exc:
        raise DatasetError([DatasetProblem(path, exc.line, None, exc.message)]) from None
    data, prefix = document.data, cast(Loc, ())
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"id", "description", "items"})
        if unknown or not isinstance(data.get("items"), list):
            message = "expected a list of items, or a mapping of `items`, `id`, `description`"
            raise DatasetError([DatasetProblem(path, document.line_of(()), None, message)])
        data, prefix = data["items"], ("items",)
    if not isinstance(data, list):
        message = "expected a list of items, or a mapping with `items`"
        raise DatasetError([DatasetProblem(path, document.line_of(()), None, message)])

    def line_of(index: int) -> LineOf:
        return lambda loc: document.line_of((*prefix, index, *loc))

    return [_Raw(index, item, line_of(index)) for index, item in enumerate(data)]


def _jsonl_items(path: Path) -> Iterator[_Raw]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError([DatasetProblem(path, None, None, f"cannot read file: {exc}")]) from None
    index = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            deep = too_deep(data) is not None
        except json.JSONDecodeError as exc:
            message = f"JSON syntax error: {exc.msg}"
            raise DatasetError([DatasetProblem(path, number, None, message)]) from None
        except RecursionError:  # deeper than json.loads goes
            deep = True
        if deep:
            raise DatasetError([DatasetProblem(path, number, None, TOO_DEEP)])
        yield _Raw(index, data, _always(number))
        index += 1


def _always(line: int) -> LineOf:
    """JSON lines: every field of an item is on the item's line."""
    return lambda _loc: line
