"""Partial-credit trajectory scores: LangSmith's subsequence, an LCS score, F1.

All take the reference trajectory as criteria and the ``step_kinds`` / ``args``
config of ``ReferenceConfig``; one reference item matches one step per the
``args`` setting, so partial credit works over (tool, args) as well as names.
"""

from __future__ import annotations

from collections.abc import Sequence

from evaluators.builtin.reference_base import ReferenceEvaluator, ratio
from evaluators.match_details import match_details
from evaluators.matching import CallMatcher, Pairs, maximum_matching, ordered_matching
from evaluators.reference import ExpectedStep
from evaluators.results import NumericResult
from evaluators.trajectory import Step


def subsequence_prefix(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step], matches: CallMatcher
) -> Pairs:
    """The longest *prefix* of ``reference`` found in order in ``predicted``, as pairs.

    Matching each item at the earliest step that satisfies it is optimal for a
    prefix, whatever the matcher: an earlier step leaves more room for the rest.
    """
    pairs: Pairs = []
    for j, step in enumerate(predicted):
        if len(pairs) == len(reference):
            break
        if matches(reference[len(pairs)], step):
            pairs.append((len(pairs), j))
    return pairs


class TrajectorySubsequence(ReferenceEvaluator):
    """LangSmith's partial credit: share of the reference matched, in order, as a prefix.

    Seed 001's ``trajectory_subsequence``: walk the prediction and advance in the
    reference on each match; the score is how far the reference got. As there, a
    prediction shorter than the reference scores 0. An empty reference scores 1.
    """

    id = "trajectory_subsequence"
    description = __doc__ or ""

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> NumericResult:
        details = match_details(reference, predicted, [])
        if len(reference) > len(predicted):
            text = f"prediction shorter than the reference ({len(predicted)} < {len(reference)})"
            return NumericResult(score=0.0, explanation=text, details=details)
        pairs = subsequence_prefix(reference, predicted, self.matches)
        details = match_details(reference, predicted, pairs)
        explanation = None
        if len(pairs) < len(reference):
            stuck = reference[len(pairs)].label()
            explanation = f"{len(pairs)} of {len(reference)} in order; not found after: {stuck}"
        score = ratio(len(pairs), len(reference), 1.0)
        return NumericResult(score=score, explanation=explanation, details=details)


class TrajectoryLcsScore(ReferenceEvaluator):
    """Order-aware overlap: 2·|LCS| / (|reference| + |predicted|), 1 only for an exact match.

    The longest common subsequence under the call matcher penalises missing,
    extra and out-of-order calls alike; ``details`` also give its share of the
    reference (``lcs_recall``) and of the prediction (``lcs_precision``).
    """

    id = "trajectory_lcs_score"
    description = __doc__ or ""

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> NumericResult:
        pairs = ordered_matching(reference, predicted, self.matches)
        common, total = len(pairs), len(reference) + len(predicted)
        details = match_details(reference, predicted, pairs)
        details["lcs_recall"] = ratio(common, len(reference), 1.0)
        details["lcs_precision"] = ratio(common, len(predicted), 1.0)
        explanation = (
            f"longest common subsequence: {common} of {len(reference)} expected, "
            f"{len(predicted)} made"
        )
        return NumericResult(
            score=ratio(2 * common, total, 1.0), explanation=explanation, details=details
        )


class TrajectoryF1(ReferenceEvaluator):
    """Harmonic mean of ``trajectory_precision`` and ``trajectory_recall``, order ignored.

    Both count a maximum one-to-one matching of (tool, args) under the ``args``
    setting, so repeated calls count as a multiset; with ``args: ignore`` it is
    the F1 over tool names.
    """

    id = "trajectory_f1"
    description = __doc__ or ""

    def judge(self, reference: Sequence[ExpectedStep], predicted: Sequence[Step]) -> NumericResult:
        pairs = maximum_matching(reference, predicted, self.matches)
        precision = ratio(len(pairs), len(predicted), 0.0 if reference else 1.0)
        recall = ratio(len(pairs), len(reference), 1.0)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        details = match_details(reference, predicted, pairs)
        details |= {"precision": precision, "recall": recall}
        text = f"precision {precision:.3f}, recall {recall:.3f}"
        return NumericResult(score=f1, explanation=text, details=details)
