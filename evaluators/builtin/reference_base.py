"""The one base of the built-ins that compare a trajectory with a reference.

The *predicted* trajectory is the executed steps of ``step_kinds`` (the spec's,
by default tools only); the reference is the criteria's ``trajectory``; one
reference item matches one step per the ``args`` setting (see
``evaluators.argmatch``).
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from evaluators.argmatch import ArgsSetting, matcher_for
from evaluators.base import Criteria, Evaluator, EvaluatorConfig
from evaluators.gaps import TOOL_ARGS
from evaluators.matching import (
    CallMatcher,
    MatchSummary,
    Pairs,
    called_steps,
    kept_matching,
    labels,
    names_match,
    summarize,
)
from evaluators.reference import ExpectedStep
from evaluators.results import EvaluationResult
from evaluators.trajectory import Step, StepKind, Trajectory


class TrajectoryCriteria(Criteria):
    """The reference trajectory (usually from the spec's ``reference.trajectory``)."""

    trajectory: tuple[ExpectedStep, ...]


class TrajectoryMatchConfig(EvaluatorConfig):
    """Which steps form the trajectory and how arguments are compared."""

    step_kinds: tuple[StepKind, ...] = Field(default=(StepKind.TOOL,), min_length=1)
    args: ArgsSetting = "auto"  # auto | exact | ignore, or an args mapping (evaluators.argmatch)


ReferenceConfig = TrajectoryMatchConfig
"""``step_kinds`` and ``args``: the config of every reference-trajectory evaluator."""


class ReferenceEvaluator(Evaluator[TrajectoryCriteria, ReferenceConfig]):
    """Select the predicted steps, build the matcher once, delegate to ``judge``."""

    criteria_model = TrajectoryCriteria
    config_model = ReferenceConfig

    def __init__(self, config: ReferenceConfig) -> None:
        super().__init__(config)
        self.matches: CallMatcher = matcher_for(config.args)

    def needs(self, criteria: TrajectoryCriteria) -> frozenset[str]:
        """Tool arguments, when the reference gives some and the config compares them."""
        return frozenset({TOOL_ARGS}) if compares_args(self.config.args, criteria) else frozenset()

    def evaluate(self, trajectory: Trajectory, criteria: TrajectoryCriteria) -> EvaluationResult:
        reference, predicted = shared_inputs(
            trajectory, self.config.step_kinds, criteria.trajectory
        )
        return self.judge(reference, predicted)

    @abstractmethod
    def judge(
        self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]
    ) -> EvaluationResult:
        """Judge ``predicted`` against ``reference``."""


class _Shared(threading.local):
    """The inputs the last reference evaluator of this thread judged."""

    def __init__(self) -> None:
        self.trajectory: Trajectory | None = None
        self.kinds: tuple[StepKind, ...] = ()
        self.predicted: tuple[Step, ...] = ()
        self.reference: tuple[ExpectedStep, ...] = ()


_SHARED = _Shared()


def shared_inputs(
    trajectory: Trajectory, kinds: tuple[StepKind, ...], reference: tuple[ExpectedStep, ...]
) -> tuple[tuple[ExpectedStep, ...], tuple[Step, ...]]:
    """The reference and the predicted steps to judge, as the same objects the previous
    reference evaluator got when it judged the same trajectory, kinds and an equal
    reference (a spec's evaluators run one after another): its match table and
    ambiguous names are then reused (``matching.match_table``, ``ambiguous_names``)."""
    shared = _SHARED
    if shared.trajectory is not trajectory or shared.kinds != kinds:
        shared.trajectory, shared.kinds = trajectory, kinds
        shared.predicted = called_steps(trajectory, kinds)
    elif shared.reference is not reference and _equal(shared.reference, reference):
        return shared.reference, shared.predicted
    shared.reference = reference
    return reference, shared.predicted


def _equal(a: tuple[ExpectedStep, ...], b: tuple[ExpectedStep, ...]) -> bool:
    """``a == b``, kept per pair of objects: the references of a spec's evaluators are
    long-lived, immutable spec data, compared on every trace (the kept pair holds both
    objects, so their ids cannot be reused while the answer is kept)."""
    key = (id(a), id(b))
    found = _EQUAL.get(key)
    if found is not None and found[0] is a and found[1] is b:
        return found[2]
    equal = a == b
    if len(_EQUAL) >= _EQUAL_KEPT:
        _EQUAL.clear()
    _EQUAL[key] = (a, b, equal)
    return equal


_EQUAL_KEPT = 256
_EQUAL: dict[tuple[int, int], tuple[object, object, bool]] = {}


def compares_args(setting: ArgsSetting, criteria: TrajectoryCriteria) -> bool:
    """Whether matching under ``setting`` reads the arguments of the steps."""
    mode = setting if isinstance(setting, str) else getattr(setting, "mode", None)
    if mode == "ignore":
        return False
    return any(item.args is not None for item in criteria.trajectory)


def match_details(
    reference: Sequence[ExpectedStep],
    predicted: Sequence[Step],
    pairs: Pairs,
    summary: MatchSummary | None = None,
) -> dict[str, Any]:
    """Both trajectories as labels, the matched index pairs, what was left over (the
    ``summary`` of ``pairs``, when the caller has it), and the reference names that
    stand for several namespaced tools (``ambiguous``). A new dict of new lists:
    callers may change it."""
    return copied_details(summary_and_details(reference, predicted, pairs, summary)[1])


def summary_and_details(
    reference: Sequence[ExpectedStep],
    predicted: Sequence[Step],
    pairs: Pairs,
    summary: MatchSummary | None = None,
) -> tuple[MatchSummary, dict[str, Any]]:
    """``summarize`` and ``match_details`` of ``pairs``, both read-only: the answers for
    the two kept matchings (``matching.kept_matching``: ordered and maximum) of the
    shared inputs are kept, as several reference evaluators of one spec judge them in
    turn (``match_details`` copies)."""
    global _kept_details  # noqa: PLW0603 - a two-entry memo; a tuple is swapped atomically
    kept = _kept_details
    for entry in kept:
        if entry[0] is reference and entry[1] is predicted and entry[2] is pairs:
            return entry[3], entry[4]
    summary = summary or summarize(reference, predicted, pairs)
    details: dict[str, Any] = {
        "reference": labels(reference),
        "predicted": [step.name for step in predicted],
        "matched": [list(pair) for pair in pairs],
        "missing": summary.missing,
        "extra": summary.extra,
    }
    ambiguous = ambiguous_names(reference, predicted)
    if ambiguous:
        details["ambiguous"] = ambiguous
    if type(reference) is tuple and type(predicted) is tuple and kept_matching(pairs):
        _kept_details = ((reference, predicted, pairs, summary, details), *kept[:1])
    return summary, details


_kept_details: tuple[tuple[object, object, object, MatchSummary, dict[str, Any]], ...] = ()


def copied_details(details: dict[str, Any]) -> dict[str, Any]:
    """The details of ``summary_and_details`` as a new dict of new lists (those inside
    ``matched`` and ``ambiguous`` too): what a result may own and a caller change."""
    out: dict[str, Any] = {key: list(v) for key, v in details.items() if key != "ambiguous"}
    out["matched"] = [list(pair) for pair in details["matched"]]
    if "ambiguous" in details:
        out["ambiguous"] = {name: list(full) for name, full in details["ambiguous"].items()}
    return out


def ambiguous_names(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step]
) -> dict[str, list[str]]:
    """Bare reference names that match tools of two or more namespaces in ``predicted``
    (``refund`` for ``billing__refund`` and ``store__refund``). The last answer is kept
    for the same two objects (``shared_inputs``); callers copy what they change."""
    global _last_ambiguous  # noqa: PLW0603 - a one-entry memo; a tuple is swapped atomically
    last = _last_ambiguous
    if last is not None and last[0] is reference and last[1] is predicted:
        return {name: list(full) for name, full in last[2].items()}
    found: dict[str, list[str]] = {}
    for name in {item.name for item in reference}:
        full = sorted({s.name for s in predicted if s.name != name and names_match(name, s.name)})
        if len(full) > 1:
            found[name] = full
    if type(reference) is tuple and type(predicted) is tuple:  # immutable: safe to keep
        _last_ambiguous = (reference, predicted, found)
    return {name: list(full) for name, full in found.items()}


_last_ambiguous: tuple[object, object, dict[str, list[str]]] | None = None


def ratio(part: float, whole: int, empty: float) -> float:
    """``part / whole``, or ``empty`` when ``whole`` is 0."""
    return part / whole if whole else empty
