"""What a matching of a reference against predicted steps left over, as the details and
explanations the reference evaluators report (``evaluators.builtin.reference_base``).

Compiled with mypyc when evald is installed with a C compiler, like ``matching``
(setup.py, docs/adr/0011-compiled-hot-path.md): every reference evaluator of a spec
asks for these on every trace. Kept answers (``summary_and_details``,
``ambiguous_names``) are read-only; callers copy what they change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluators.matching import (
    MatchSummary,
    PairsLike,
    kept_matching,
    labels,
    names_match,
    summarize,
)
from evaluators.reference import ExpectedStep
from evaluators.trajectory import Step


def match_details(
    reference: Sequence[ExpectedStep],
    predicted: Sequence[Step],
    pairs: PairsLike,
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
    pairs: PairsLike,
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
