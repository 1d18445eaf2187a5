"""Tool-argument matching: modes, key rules, overrides, partial credit, and the assignment."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from evaluators.argmatch import (
    NOT_A_MAPPING,
    ArgComparator,
    ArgScore,
    ArgsMatch,
    ArgsSetting,
    comparator_for,
    compare_args,
    matcher_for,
    values_equal,
)
from evaluators.assignment import best_assignment
from evaluators.matching import call_matcher
from evaluators.reference import ExpectedStep
from evaluators.trajectory import Step, StepKind

REFUND = {"invoice_id": 1042, "track_id": 3158, "reason": "duplicate purchase"}


def tool(name: str, args: Any = None) -> Step:
    return Step(StepKind.TOOL, name, "ab", None, 0, 0.0, args=args)


def ref(name: str, args: dict[str, Any] | None = None) -> ExpectedStep:
    return ExpectedStep(name=name, kind=StepKind.TOOL, args=args)


def compare(expected: dict[str, Any], actual: Any, **rules: Any) -> ArgScore:
    config = ArgsMatch.model_validate(rules)
    return compare_args(expected, actual, config.rules_for("refund"))


@pytest.mark.parametrize(
    ("mode", "actual", "matched", "compared"),
    [
        ("exact", REFUND, 3, 3),
        ("exact", {**REFUND, "note": "x"}, 3, 4),  # an extra key is a mismatch
        ("exact", {"invoice_id": 1042}, 1, 3),  # missing keys too
        ("superset", {**REFUND, "note": "x"}, 3, 3),  # extras allowed
        ("superset", {"invoice_id": 1042}, 1, 3),  # but every reference key needed
        ("subset", {"invoice_id": 1042}, 1, 1),  # leaving keys out is allowed
        ("subset", {"invoice_id": 1042, "note": "x"}, 1, 2),  # unknown keys are not
        ("ignore", {"anything": True}, 0, 0),
    ],
)
def test_modes_decide_which_keys_are_compared(
    mode: str, actual: dict[str, Any], matched: int, compared: int
) -> None:
    result = compare(REFUND, actual, mode=mode)
    assert (result.matched, result.compared) == (matched, compared)
    assert result.ok is (matched == compared)


def test_partial_credit_is_the_share_of_matching_keys() -> None:
    result = compare(REFUND, {**REFUND, "track_id": 3160})  # the labelled wrong_args refund
    assert result.score == pytest.approx(2 / 3)
    assert result.mismatched == ("track_id",)
    assert not result.ok
    assert ArgScore(0, 0).score == 1.0 and ArgScore(0, 0).ok


def test_ignore_keys_and_only_keys() -> None:
    actual = {**REFUND, "reason": "customer request"}
    assert compare(REFUND, actual, ignore_keys=["reason"]).ok
    assert compare(REFUND, actual, only_keys=["invoice_id", "track_id"]).ok
    assert not compare(REFUND, actual).ok


def test_regex_rule_judges_the_call_value() -> None:
    rules = {"keys": {"reason": {"regex": "(?i)^duplicate"}}}
    assert compare(REFUND, {**REFUND, "reason": "Duplicate charge"}, **rules).ok
    assert not compare(REFUND, {**REFUND, "reason": "not a duplicate"}, **rules).ok
    numbers = {"keys": {"track_id": {"regex": "^31\\d\\d$"}}}  # non-strings: their JSON text
    assert compare(REFUND, {**REFUND, "track_id": 3160}, **numbers).ok


def test_numeric_tolerance_per_key_and_everywhere() -> None:
    expected = {"amount": 0.99, "lines": [{"price": 1.0}]}
    actual = {"amount": 0.991, "lines": [{"price": 1.004}]}
    assert not compare(expected, actual).ok
    assert compare(expected, actual, tolerance=0.01).ok
    per_key = compare(expected, actual, keys={"amount": {"tolerance": 0.01}})
    assert per_key.mismatched == ("lines",)
    assert compare({"n": 100}, {"n": 104}, rel_tolerance=0.05).ok


def test_values_equal_is_deep_and_keeps_booleans_apart() -> None:
    assert values_equal({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2}]})
    assert not values_equal({"a": [1]}, {"a": [1, 2]})
    assert not values_equal(True, 1)
    assert not values_equal({"flag": 1}, {"flag": True}, tolerance=1)


def test_per_tool_overrides_replace_only_the_fields_they_set() -> None:
    config = ArgsMatch.model_validate(
        {
            "mode": "exact",
            "ignore_keys": ["request_id"],
            "tools": {"refund": {"mode": "superset"}, "lookup_track": "ignore",
                      "lookup_invoice": ["invoice_id"]},
        }
    )  # fmt: skip
    refund = config.rules_for("refund")
    assert refund.mode == "superset" and refund.ignore_keys == {"request_id"}
    assert config.rules_for("lookup_track").mode == "ignore"
    assert config.rules_for("lookup_invoice").only_keys == {"invoice_id"}
    assert config.rules_for("other").mode == "exact"


def test_comparator_is_a_call_matcher() -> None:
    matches = ArgComparator(ArgsMatch(mode="superset")).matches
    assert matches(ref("refund", {"invoice_id": 1042}), tool("refund", REFUND))
    assert not matches(ref("refund", {"invoice_id": 1042}), tool("lookup", REFUND))
    assert not matches(ref("refund", {"invoice_id": 1}), tool("refund", REFUND))


def test_unspecified_reference_args_match_anything_or_only_nothing() -> None:
    anything = ArgComparator(ArgsMatch())
    empty = ArgComparator(ArgsMatch(unspecified="empty"))
    assert anything.matches(ref("refund"), tool("refund", REFUND))
    assert not empty.matches(ref("refund"), tool("refund", REFUND))
    assert empty.matches(ref("refund"), tool("refund", None))
    assert empty.matches(ref("refund"), tool("refund", {}))


def test_arguments_that_are_not_a_mapping_never_match_a_mapping() -> None:
    result = compare({"track_name": "Money"}, "Money")
    assert result.mismatched == (NOT_A_MAPPING,) and result.compared == 1


SETTING: TypeAdapter[Any] = TypeAdapter(ArgsSetting)


@pytest.mark.parametrize("shorthand", ["auto", "exact", "ignore"])
def test_shorthands_keep_their_matcher_and_agree_with_their_mapping(shorthand: str) -> None:
    setting = SETTING.validate_python(shorthand)
    assert setting == shorthand
    legacy, general = call_matcher(setting), comparator_for(setting).matches
    cases = [
        (ref("t"), tool("t", {"x": 1})),
        (ref("t"), tool("t", None)),
        (ref("t", {"x": 1}), tool("t", {"x": 1})),
        (ref("t", {"x": 1}), tool("t", {"x": 1, "y": 2})),
        (ref("t", {"x": 1}), tool("t", {"x": 2})),
        (ref("t", {"x": 1}), tool("u", {"x": 1})),
    ]
    for expected, actual in cases:
        assert legacy(expected, actual) is general(expected, actual), (expected, actual)
        assert matcher_for(setting)(expected, actual) is legacy(expected, actual)


def test_mapping_setting_and_unknown_shorthand() -> None:
    setting = SETTING.validate_python({"mode": "subset"})
    assert isinstance(setting, ArgsMatch) and setting.mode == "subset"
    shorthands = r"Input should be 'auto', 'exact' or 'ignore' \(a shorthand\), or a mapping"
    with pytest.raises(
        ValidationError, match=shorthands + r": for 'subset' write \{mode: subset\}"
    ):
        SETTING.validate_python("subset")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"mode": "partial"}, "Input should be 'exact', 'ignore', 'subset' or 'superset'"),
        ({"keys": {"reason": {"regex": "("}}}, "invalid regex '\\('"),
        ({"tolerance": -1}, "greater than or equal to 0"),
        ({"tools": {"refund": {"mode": "nope"}}}, "tools.refund.mode"),
        ({"typo": 1}, "Extra inputs are not permitted"),
    ],
)
def test_bad_args_config_is_rejected_clearly(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ArgsMatch.model_validate(data)


def brute_force_best(weights: list[list[float | None]]) -> float:
    rows, cols = len(weights), len(weights[0]) if weights else 0
    best = 0.0
    for size in range(min(rows, cols) + 1):
        for chosen in itertools.combinations(range(rows), size):
            for columns in itertools.permutations(range(cols), size):
                values = [weights[i][j] for i, j in zip(chosen, columns, strict=True)]
                if all(v is not None for v in values):
                    best = max(best, sum(v for v in values if v is not None))
    return best


def test_best_assignment_is_optimal_on_random_tables() -> None:
    rng = random.Random(4)
    for _ in range(400):
        rows, cols = rng.randint(0, 4), rng.randint(1, 4)
        weights: list[list[float | None]] = [
            [None if rng.random() < 0.3 else rng.choice([0.0, 0.25, 1 / 3, 0.5, 1.0])
             for _ in range(cols)]
            for _ in range(rows)
        ]  # fmt: skip
        pairs = best_assignment(weights)
        assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
        total = sum(weights[i][j] or 0.0 for i, j in pairs)
        assert total == pytest.approx(brute_force_best(weights)), weights


def test_best_assignment_beats_best_pair_first() -> None:
    # Best-pair-first takes (0, 0) at 1.0 and leaves row 1 nothing: total 1.0.
    # Giving row 0 column 1 and row 1 column 0 totals 1.8.
    weights: list[list[float | None]] = [[1.0, 0.9], [0.9, None]]
    assert best_assignment(weights) == [(0, 1), (1, 0)]
    assert best_assignment([]) == []
    assert best_assignment([[None]]) == []
