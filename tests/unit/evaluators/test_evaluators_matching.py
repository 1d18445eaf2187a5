"""The matching helpers: any per-call predicate plugs into the same algorithms."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from evaluators.match_details import match_details
from evaluators.matching import (
    call_matcher,
    exact_sequence,
    explain,
    maximum_matching,
    ordered_matching,
    summarize,
)
from evaluators.reference import ExpectedStep
from evaluators.trajectory import Step, StepKind


def step(name: str, args: Any = None) -> Step:
    return Step(StepKind.TOOL, name, "ab", None, 0, 0.0, args=args)


def ref(name: str, args: dict[str, Any] | None = None) -> ExpectedStep:
    return ExpectedStep(name=name, kind=StepKind.TOOL, args=args)


def names_match(expected: ExpectedStep, actual: Step) -> bool:
    return expected.name == actual.name


def test_maximum_matching_beats_first_fit() -> None:
    # The open reference item could take either refund; first-fit gives it the
    # first one and leaves the {x: 1} item unmatched. A maximum matching does not.
    reference = [ref("refund"), ref("refund", {"x": 1})]
    predicted = [step("refund", {"x": 1}), step("refund", {"x": 2})]
    pairs = maximum_matching(reference, predicted, call_matcher("auto"))
    assert sorted(pairs) == [(0, 1), (1, 0)]


def test_maximum_matching_accepts_any_predicate() -> None:
    def case_insensitive(expected: ExpectedStep, actual: Step) -> bool:
        return expected.name.lower() == actual.name.lower()

    pairs = maximum_matching([ref("Refund")], [step("refund")], case_insensitive)
    assert pairs == [(0, 0)]
    assert maximum_matching([ref("Refund")], [step("refund")], names_match) == []


def test_ordered_matching_is_a_longest_common_subsequence() -> None:
    reference = [ref("a"), ref("b"), ref("c")]
    predicted = [step("b"), step("x"), step("a"), step("c")]
    pairs = ordered_matching(reference, predicted, names_match)
    assert len(pairs) == 2
    assert all(i1 < i2 and j1 < j2 for (i1, j1), (i2, j2) in itertools.pairwise(pairs))


def test_ordered_matching_prefers_the_earliest_steps() -> None:
    pairs = ordered_matching([ref("a")], [step("a"), step("a")], names_match)
    assert pairs == [(0, 0)]


def test_ordered_matching_finds_a_full_subsequence_with_extras() -> None:
    reference = [ref("a"), ref("b")]
    predicted = [step("a"), step("a"), step("x"), step("b")]
    assert ordered_matching(reference, predicted, names_match) == [(0, 0), (1, 3)]


def test_exact_sequence_needs_same_length_and_order() -> None:
    assert exact_sequence([ref("a"), ref("b")], [step("a"), step("b")], names_match)
    assert not exact_sequence([ref("a"), ref("b")], [step("b"), step("a")], names_match)
    assert not exact_sequence([ref("a")], [step("a"), step("a")], names_match)


@pytest.mark.parametrize(
    ("mode", "reference_args", "step_args", "expected"),
    [
        ("auto", None, {"x": 1}, True),
        ("auto", {"x": 1}, {"x": 1}, True),
        ("auto", {"x": 1}, {"x": 1, "y": 2}, False),
        ("exact", None, {"x": 1}, False),
        ("exact", None, None, True),
        ("ignore", {"x": 1}, {"x": 2}, True),
    ],
)
def test_call_matcher_args_modes(
    mode: Any, reference_args: dict[str, Any] | None, step_args: Any, expected: bool
) -> None:
    assert call_matcher(mode)(ref("t", reference_args), step("t", step_args)) is expected


def test_call_matcher_never_matches_another_name() -> None:
    assert not call_matcher("ignore")(ref("a"), step("b"))


def test_call_matcher_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="unknown args mode 'subset'"):
        call_matcher("subset")  # type: ignore[arg-type]


def test_summary_and_explanation() -> None:
    reference = [ref("a"), ref("b")]
    predicted = [step("a"), step("c")]
    summary = summarize(reference, predicted, [(0, 0)])
    assert summary.missing == ["b"] and summary.extra == ["c"]
    assert explain(summary) == "missing: b; extra: c"
    assert explain(summarize(reference[:1], predicted[:1], [(0, 0)])) is None


def test_matchings_are_kept_for_the_same_tuples_and_never_for_lists() -> None:
    reference = (ref("a"), ref("b"))
    predicted = (step("b"), step("a"), step("b"))
    matcher = call_matcher("ignore")
    first = maximum_matching(reference, predicted, matcher)
    assert maximum_matching(reference, predicted, matcher) is first  # kept: same tuples
    assert ordered_matching(reference, predicted, matcher) == [(0, 1), (1, 2)]
    assert maximum_matching(reference, tuple([*predicted]), matcher) == first  # equal, new
    steps = [step("b")]
    assert maximum_matching(list(reference), steps, matcher) == [(1, 0)]
    steps.insert(0, step("a"))  # a list may change between calls: never kept
    assert maximum_matching(list(reference), steps, matcher) == [(0, 0), (1, 1)]


def test_a_matcher_may_return_any_truthy_value() -> None:
    # A plug-in's matcher (or an overridden ReferenceEvaluator.matches) returning a
    # re.Match or an int: the compiled build must answer as the interpreted one.
    reference = (ref("a"), ref("b"))
    predicted = (step("a"), step("x"), step("b"))

    def loose(expected: ExpectedStep, step: Step) -> bool:
        return re.fullmatch(expected.name, step.name)  # type: ignore[return-value]

    assert ordered_matching(reference, predicted, loose) == [(0, 0), (1, 2)]
    assert maximum_matching(reference, predicted, lambda e, s: int(e.name == s.name)) == [
        (0, 0),
        (1, 2),
    ]
    assert exact_sequence(reference, predicted[::2], loose)


def test_pairs_read_back_as_tuples_or_lists_are_accepted() -> None:
    reference = (ref("a"), ref("b"))
    predicted = (step("a"), step("c"))
    expected = summarize(reference, predicted, [(0, 0)])
    assert summarize(reference, predicted, ((0, 0),)) == expected
    assert summarize(reference, predicted, [[0, 0]]) == expected
    assert match_details(reference, predicted, ([0, 0],))["matched"] == [[0, 0]]
