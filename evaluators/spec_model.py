"""The schema of a reference spec file, and what its evaluator entries become.

Loading (files, errors with lines, binding) is ``evaluators.spec``; this module
only says what a valid spec *is*.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from evaluators.base import Criteria, Evaluator
from evaluators.dataset_model import DatasetRef
from evaluators.reference import Reference
from evaluators.selectors import MatchRule
from evaluators.trajectory import StepKind, Trajectory

IDENTIFIER = r"^\S+$"  # ids end up in metric labels and file names: no blanks

# What a spec is matched and evaluated on: one trace's trajectory, or the merged
# trajectory of a session's turns (``evaluators.session_merge.merge_session``).
Scope = Literal["trace", "session"]


class BoundEvaluator(NamedTuple):
    """An evaluator ready to run: built with its config, criteria resolved.

    ``spec_id`` is None for evaluators that run on every trace without a spec.
    ``threshold`` None means a numeric result gets no verdict. ``sample_rate`` is
    the share of *all* traces this evaluator runs on, decided by trace id (the
    spec's rate times the entry's: see ``evaluators.selectors.sampled``).
    ``judge`` names the configured LLM judge of a judge evaluator, else None.
    ``item`` is, for a dataset spec, the item these evaluators were bound for: its
    ``id``, else its normalised input (``evald compare --align-by item``).
    """

    spec_id: str | None
    id: str
    evaluator: Evaluator[Any, Any]
    criteria: Criteria
    threshold: float | None
    sample_rate: float = 1.0
    judge: str | None = None
    item: str | None = None


class EvaluatorEntry(BaseModel):
    """One item of a spec's ``evaluators`` list: a bare reference, or the mapping form.

    ``name`` is an evaluator reference (see ``evaluators.registry``). ``id``
    names this use of it (thresholds and results are keyed by it); by default
    the registered name, or the class's ``id`` for ``file://`` / ``module:Class``.
    ``sample_rate`` is the share of the spec's matching traces this evaluator
    runs on (by trace id: replays make the same choice). ``judge`` names the
    configured LLM judge of a judge evaluator (default ``default``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1)
    id: str | None = Field(default=None, pattern=IDENTIFIER)
    config: dict[str, Any] = Field(default_factory=dict)
    criteria: dict[str, Any] = Field(default_factory=dict)
    sample_rate: float = Field(default=1.0, ge=0.0, le=1.0)
    judge: str | None = Field(default=None, min_length=1, pattern=IDENTIFIER)

    @model_validator(mode="before")
    @classmethod
    def _accept_bare_name(cls, data: Any) -> Any:
        return {"name": data} if isinstance(data, str) else data


class Spec(BaseModel):
    """A reference spec: which traces (``match``), what is expected, which evaluators.

    A ``Spec`` returned by ``evaluators.spec.load_spec`` is bound: ``bound``
    holds its evaluators ready to run, in the order of the file. With a
    ``dataset`` each item is a case with its own criteria: ``evaluators_for``
    picks the item of a trace (``bound`` is then the first item's, which has the
    same ids, thresholds and evaluators as every other).

    ``scope`` is ``trace`` (default: each trace on its own) or ``session``: the spec
    is matched and evaluated once per completed session, on the merge of its turns.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=IDENTIFIER)
    description: str = ""
    scope: Scope = "trace"
    match: MatchRule = Field(default_factory=MatchRule)
    step_kinds: tuple[StepKind, ...] = Field(default=(StepKind.TOOL,), min_length=1)
    reference: Reference = Field(default_factory=Reference)
    evaluators: tuple[EvaluatorEntry, ...] = Field(min_length=1)
    thresholds: dict[str, float | None] = Field(default_factory=dict)
    dataset: DatasetRef | None = None

    _bound: tuple[BoundEvaluator, ...] = PrivateAttr(default=())
    _source: Path | None = PrivateAttr(default=None)
    _cases: Mapping[str, tuple[BoundEvaluator, ...]] = PrivateAttr(default_factory=dict)
    _dataset_source: Path | None = PrivateAttr(default=None)

    @property
    def bound(self) -> tuple[BoundEvaluator, ...]:
        """The bound evaluators (empty until the loader binds the spec)."""
        return self._bound

    @property
    def source(self) -> Path | None:
        """The file the spec was loaded from, if any."""
        return self._source

    @property
    def sources(self) -> tuple[Path, ...]:
        """The files this spec was built from: the spec file and its dataset file."""
        return tuple(path for path in (self._source, self._dataset_source) if path is not None)

    @property
    def cases(self) -> int:
        """How many dataset items the spec has (0 without a dataset)."""
        return len(self._cases)

    def attach(
        self,
        bound: tuple[BoundEvaluator, ...],
        source: Path | None,
        cases: Mapping[str, tuple[BoundEvaluator, ...]] | None = None,
        dataset_source: Path | None = None,
    ) -> None:
        """Record the binding; called once by the loader, before the spec is shared.

        ``cases``: with a dataset, the bound evaluators of each item by its key.
        """
        self._bound = bound
        self._source = source
        self._cases = cases or {}
        self._dataset_source = dataset_source

    def matches(self, trajectory: Trajectory) -> bool:
        """Whether this spec applies to ``trajectory`` (see ``MatchRule``)."""
        return self.match.matches(trajectory)

    def evaluators_for(self, trajectory: Trajectory) -> tuple[BoundEvaluator, ...] | None:
        """What runs on ``trajectory`` (a trace this spec matches): ``bound``, or with a
        dataset the bound evaluators of its item — None when no item has its key."""
        if self.dataset is None:
            return self._bound
        key = self.dataset.key_of(trajectory)
        return None if key is None else self._cases.get(key)
