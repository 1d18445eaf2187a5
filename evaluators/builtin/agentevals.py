"""langchain agentevals' trajectory match modes, with a maximum bipartite matching.

``trajectory_match`` with ``mode``:

- ``strict``: the same calls in the same order, nothing extra;
- ``unordered``: the same calls in any order (a perfect one-to-one matching);
- ``superset``: the prediction contains every reference call (extras allowed);
- ``subset``: every predicted call is in the reference (nothing unexpected;
  reference calls may be missing).

agentevals pairs calls first-fit: each reference call takes the first unused
call that matches. With a non-equivalence argument matcher (``subset`` /
``superset`` args) that can use up the only call a later reference item could
match and report a false mismatch; here the pairing is a maximum matching.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from evaluators.builtin.reference_base import ReferenceConfig, ReferenceEvaluator
from evaluators.match_details import match_details
from evaluators.matching import MatchSummary, exact_sequence, maximum_matching, summarize
from evaluators.reference import ExpectedStep
from evaluators.results import BooleanResult
from evaluators.trajectory import Step

TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]

Verdict = Callable[[int, int, int], bool]
"""``(matched pairs, reference length, predicted length) -> match?`` for the any-order modes."""

_ANY_ORDER: dict[str, Verdict] = {
    "unordered": lambda pairs, n, m: pairs == n == m,
    "superset": lambda pairs, n, m: pairs == n,
    "subset": lambda pairs, n, m: pairs == m,
}


class TrajectoryModeConfig(ReferenceConfig):
    """``mode``: strict | unordered | subset | superset (see the module doc)."""

    mode: TrajectoryMode = "strict"


class TrajectoryMatch(ReferenceEvaluator):
    """True if the prediction matches the reference under ``mode`` (agentevals' semantics)."""

    id = "trajectory_match"
    config_model = TrajectoryModeConfig
    description = __doc__ or ""

    def __init__(self, config: TrajectoryModeConfig) -> None:
        if config.mode != "strict" and config.mode not in _ANY_ORDER:
            raise ValueError(f"unknown trajectory match mode {config.mode!r}")
        super().__init__(config)
        self.mode: TrajectoryMode = config.mode

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> BooleanResult:
        if self.mode == "strict" and exact_sequence(reference, predicted, self.matches):
            pairs = [(i, i) for i in range(len(reference))]
            return BooleanResult(value=True, details=match_details(reference, predicted, pairs))
        pairs = maximum_matching(reference, predicted, self.matches)
        verdict = _ANY_ORDER.get(self.mode)
        value = verdict is not None and verdict(len(pairs), len(reference), len(predicted))
        summary = summarize(reference, predicted, pairs)
        return BooleanResult(
            value=value,
            explanation=None if value else self._why(summary),
            details={"mode": self.mode, **match_details(reference, predicted, pairs)},
        )

    def _why(self, summary: MatchSummary) -> str:
        """What broke the match, in this mode's terms."""
        missing = "missing: " + ", ".join(summary.missing) if summary.missing else ""
        extra = "unexpected: " + ", ".join(summary.extra) if summary.extra else ""
        relevant = {"superset": [missing], "subset": [extra]}.get(self.mode, [missing, extra])
        return "; ".join(part for part in relevant if part) or "same calls, different order"
