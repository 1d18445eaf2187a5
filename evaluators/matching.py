"""Matching predicted steps against a reference trajectory.

A *call matcher* decides whether one predicted step satisfies one reference
item. The algorithms here work for any matcher, so richer argument matchers
(subset, regex, numeric tolerance, per-tool overrides) plug in without touching
them:

- ``exact_sequence``: same length, item *i* matches step *i*;
- ``ordered_matching``: the longest order-preserving matching (an LCS), so a
  reference is an ordered subsequence iff every item is in it;
- ``maximum_matching``: a maximum bipartite matching, each step used at most
  once. First-fit greedy matching is not enough once a matcher is not an
  equivalence (e.g. subset-of-args): it can block a later item that only the
  step it took would satisfy.

All functions are pure and take sequences, so they are cheap to test and reuse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal, NamedTuple

from evaluators.reference import ExpectedStep
from evaluators.trajectory import Step, StepKind, Trajectory

CallMatcher = Callable[[ExpectedStep, Step], bool]
"""``matcher(expected, step) -> bool``: does ``step`` satisfy ``expected``?"""

ArgsMode = Literal["auto", "exact", "ignore"]
"""How arguments are compared by ``call_matcher``:

- ``auto``: only for reference items that give ``args`` (exact dict equality);
- ``exact``: always; a reference without ``args`` requires a step without args;
- ``ignore``: never, names (and kinds) only.
"""


# How instrumentations qualify a tool with its plugin or server: ``mcp__store__refund``,
# ``store__refund``, ``store.refund``, ``store/refund``, ``Store-refund``.
_NAMESPACE_SEPARATORS: Final = ("__", ".", "/", "-")


def bare_name(name: str) -> str:
    """The function name inside a plugin- or server-qualified tool name (``name`` itself
    when it is not qualified)."""
    cut = -1
    width = 0
    for separator in _NAMESPACE_SEPARATORS:
        at = name.rfind(separator)
        if at > cut:
            cut, width = at, len(separator)
    return name[cut + width :] if cut > 0 and cut + width < len(name) else name


def names_match(expected: str, recorded: str) -> bool:
    """A reference names a tool by its full recorded name or by its bare function name."""
    if expected == recorded:
        return True
    return recorded.endswith(expected) and bare_name(recorded) == expected


def same_call(expected: ExpectedStep, step: Step) -> bool:
    """Same name (full or bare, ``names_match``), and same kind unless the reference item
    leaves the kind open."""
    return names_match(expected.name, step.name) and expected.kind in (None, step.kind)


def call_matcher(args: ArgsMode = "auto") -> CallMatcher:
    """The matcher for an ``ArgsMode``. Raises ``ValueError`` for an unknown mode."""
    try:
        return _SHORTHAND_MATCHERS[args]
    except (KeyError, TypeError):  # TypeError: not even a string
        raise ValueError(f"unknown args mode {args!r}: expected auto, exact or ignore") from None


# ``same_call`` inlined: matchers run for every (reference item, step) pair.
def _auto_args(expected: ExpectedStep, step: Step) -> bool:
    return (
        names_match(expected.name, step.name)
        and expected.kind in (None, step.kind)
        and (expected.args is None or expected.args == step.args)
    )


def _exact_args(expected: ExpectedStep, step: Step) -> bool:
    return (
        names_match(expected.name, step.name)
        and expected.kind in (None, step.kind)
        and (expected.args == step.args)
    )


_SHORTHAND_MATCHERS: Final[dict[str, CallMatcher]] = {
    "ignore": same_call,
    "auto": _auto_args,
    "exact": _exact_args,
}


def called_steps(trajectory: Trajectory, kinds: Sequence[StepKind]) -> tuple[Step, ...]:
    """The steps of ``kinds`` that actually ran (requested-only calls excluded).

    The last answer is kept (one trajectory, one ``kinds``): most evaluators of a
    spec ask for the executed tool calls of the trajectory they are given in turn.
    """
    global _last_called  # noqa: PLW0603 - a one-entry memo, swapped atomically
    last = _last_called
    if last is not None and last[0] is trajectory and last[1] == kinds:
        return last[2]
    found = tuple([step for step in trajectory.steps if step.executed and step.kind in kinds])
    if type(trajectory.steps) is tuple:  # immutable: safe to keep
        _last_called = (trajectory, tuple(kinds), found)
    return found


_last_called: tuple[Trajectory, tuple[StepKind, ...], tuple[Step, ...]] | None = None


Pairs = list[tuple[int, int]]
"""(reference index, predicted index) pairs, sorted by reference index."""

PairsLike = Sequence[Sequence[int]]
"""What the functions that read pairs accept: ``Pairs``, or any sequence of two-item
sequences (a tuple of lists read back from JSON). This module is compiled (mypyc),
which checks declared types where a value enters a function: the wider type keeps
the compiled build accepting what the interpreted one does."""

LooseMatcher = Callable[[ExpectedStep, Step], object]
"""A ``CallMatcher`` as this module calls it: a plug-in's matcher may return any truthy
value (a ``re.Match``, 1), which compiled code would refuse as a ``bool``."""

Table = list[list[bool]]
"""``table[i][j]``: whether predicted step ``j`` satisfies reference item ``i``."""


class _Memo:
    """The table of one (reference, predicted, matcher) and the matchings found in it.

    The last one is kept, read-only, for tuples (a list may change between calls):
    the reference evaluators of one spec ask for the same table and matchings one
    after another on one trajectory (``reference_base.shared_inputs`` hands them the
    same tuples)."""

    __slots__ = ("matches", "maximum", "ordered", "predicted", "reference", "table")

    def __init__(
        self, reference: Sequence[ExpectedStep], predicted: Sequence[Step], matches: CallMatcher
    ) -> None:
        self.reference, self.predicted, self.matches = reference, predicted, matches
        judge: LooseMatcher = matches
        self.table: Table = [[bool(judge(item, step)) for step in predicted] for item in reference]
        self.maximum: Pairs | None = None
        self.ordered: Pairs | None = None


_last: _Memo | None = None


def _memo(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step], matches: CallMatcher
) -> _Memo:
    global _last  # noqa: PLW0603 - a one-entry memo, swapped atomically
    last = _last
    if (
        last is not None
        and last.reference is reference
        and last.predicted is predicted
        and last.matches is matches
    ):
        return last
    made = _Memo(reference, predicted, matches)
    if type(reference) is tuple and type(predicted) is tuple:  # immutable: safe to keep
        _last = made
    return made


def match_table(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step], matches: CallMatcher
) -> Table:
    """Every (item, step) pair judged once: the algorithms below read it many times
    (kept for the next caller with the same three objects: ``_Memo``; read-only)."""
    return _memo(reference, predicted, matches).table


def exact_sequence(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step], matches: CallMatcher
) -> bool:
    """Whether ``predicted`` is exactly ``reference``: same length, pairwise matching."""
    if len(reference) != len(predicted):
        return False
    judge: LooseMatcher = matches
    return all(judge(item, step) for item, step in zip(reference, predicted, strict=True))


def ordered_matching(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step], matches: CallMatcher
) -> Pairs:
    """A longest matching that keeps both orders (LCS under ``matches``). O(n·m).
    Kept with its table (``_Memo``): read-only."""
    memo = _memo(reference, predicted, matches)
    if memo.ordered is None:
        memo.ordered = _longest_ordered(memo.table, len(reference), len(predicted))
    return memo.ordered


def _longest_ordered(table: Table, n: int, m: int) -> Pairs:
    # best[i][j]: longest ordered matching of reference[i:] within predicted[j:].
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, here, below = table[i], best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            skip = max(below[j], here[j + 1])
            here[j] = max(skip, below[j + 1] + 1) if row[j] else skip
    return _trace_back(best, table, n, m)


def _trace_back(best: list[list[int]], table: Table, n: int, m: int) -> Pairs:
    """Recover the pairs from the LCS table, preferring the earliest steps."""
    pairs: Pairs = []
    i = j = 0
    while i < n and j < m:
        if table[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j + 1] == best[i][j]:
            j += 1
        else:
            i += 1
    return pairs


def maximum_matching(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step], matches: CallMatcher
) -> Pairs:
    """A maximum bipartite matching (Kuhn's augmenting paths); each step used once.
    Kept with its table (``_Memo``): read-only."""
    memo = _memo(reference, predicted, matches)
    if memo.maximum is None:
        candidates = [[j for j, hit in enumerate(row) if hit] for row in memo.table]
        owner: dict[int, int] = {}  # predicted index -> reference index
        for i in range(len(reference)):
            _augment(i, candidates, owner, set())
        memo.maximum = sorted((i, j) for j, i in owner.items())
    return memo.maximum


def _augment(i: int, candidates: list[list[int]], owner: dict[int, int], seen: set[int]) -> bool:
    """Find reference item ``i`` a step, moving earlier items along an augmenting path.

    A module function rather than a closure: a recursive closure references itself
    through its cell, a reference cycle per call that only the GC can free.
    """
    for j in candidates[i]:
        if j not in seen:
            seen.add(j)
            if j not in owner or _augment(owner[j], candidates, owner, seen):
                owner[j] = i
                return True
    return False


class MatchSummary(NamedTuple):
    """What a matching left over, as labels, for explanations and details."""

    missing: list[str]  # reference items not matched
    extra: list[str]  # predicted steps not matched


def kept_matching(pairs: object) -> bool:
    """Whether ``pairs`` is a matching the memo keeps (``ordered_matching`` or
    ``maximum_matching`` of the last table): read-only, so callers may key on it."""
    last = _last
    return last is not None and (pairs is last.maximum or pairs is last.ordered)


def labels(reference: Sequence[ExpectedStep]) -> list[str]:
    """``item.label()`` of every reference item (kept for the last reference tuple:
    the reference evaluators of a spec ask for the same one; read-only)."""
    global _last_labels  # noqa: PLW0603 - a one-entry memo, swapped atomically
    last = _last_labels
    if last is not None and last[0] is reference:
        return last[1]
    found = [item.label() for item in reference]
    if type(reference) is tuple:
        _last_labels = (reference, found)
    return found


_last_labels: tuple[object, list[str]] | None = None


def summarize(
    reference: Sequence[ExpectedStep], predicted: Sequence[Step], pairs: PairsLike
) -> MatchSummary:
    """The unmatched reference items and predicted steps of ``pairs``."""
    used_ref = {i for i, _ in pairs}
    used_pred = {j for _, j in pairs}
    names = labels(reference)
    return MatchSummary(
        missing=[label for i, label in enumerate(names) if i not in used_ref],
        extra=[step.name for j, step in enumerate(predicted) if j not in used_pred],
    )


def explain(summary: MatchSummary) -> str | None:
    """``"missing: refund; extra: lookup_artist"``, or None when nothing is left over."""
    parts = [
        f"{what}: {', '.join(labels)}"
        for what, labels in (("missing", summary.missing), ("extra", summary.extra))
        if labels
    ]
    return "; ".join(parts) or None
