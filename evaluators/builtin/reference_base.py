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

from pydantic import Field

from evaluators.argmatch import ArgsSetting, matcher_for
from evaluators.base import Criteria, Evaluator, EvaluatorConfig
from evaluators.gaps import TOOL_ARGS, tool_calls_of

# Moved to evaluators.match_details (compiled); still importable from here.
from evaluators.match_details import ambiguous_names as ambiguous_names  # noqa: PLC0414
from evaluators.match_details import copied_details as copied_details  # noqa: PLC0414
from evaluators.match_details import match_details as match_details  # noqa: PLC0414
from evaluators.match_details import summary_and_details as summary_and_details  # noqa: PLC0414
from evaluators.matching import CallMatcher, called_steps
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
        """The tool calls (when ``step_kinds`` counts them), and their arguments when the
        reference gives some and the config compares them."""
        calls = tool_calls_of(self.config.step_kinds)
        return calls | {TOOL_ARGS} if compares_args(self.config.args, criteria) else calls

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


def ratio(part: float, whole: int, empty: float) -> float:
    """``part / whole``, or ``empty`` when ``whole`` is 0."""
    return part / whole if whole else empty
