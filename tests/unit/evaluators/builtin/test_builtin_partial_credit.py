"""Partial credit: LangSmith's subsequence (seed 001), LCS score, F1, tool-argument credit.

Seed 001's ``trajectory_subsequence`` is copied verbatim below and used as the
oracle; seed 003's two example trajectories (Vertex AI) pin the argument-aware
scores.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from support.builtin_kit import agent, calls, golden_runs, run, score, step, trajectory

from evaluators.builtin.partial_credit import (
    TrajectoryF1,
    TrajectoryLcsScore,
    TrajectorySubsequence,
)
from evaluators.builtin.tool_args import ToolArgsMatch
from evaluators.builtin.trajectory_match import (
    TrajectoryAnyOrderMatch,
    TrajectoryExactMatch,
    TrajectoryInOrderMatch,
    TrajectoryPrecision,
    TrajectoryRecall,
)
from evaluators.results import NumericResult
from evaluators.trajectory import StepKind, Trajectory


def seed_001_trajectory_subsequence(outputs: dict, reference_outputs: dict) -> float:  # type: ignore[type-arg]
    """检查智能体执行了多少预期的步骤。 (verbatim from seed 001)"""
    if len(reference_outputs["trajectory"]) > len(outputs["trajectory"]):
        return False

    i = j = 0
    while i < len(reference_outputs["trajectory"]) and j < len(outputs["trajectory"]):
        if reference_outputs["trajectory"][i] == outputs["trajectory"][j]:
            i += 1
        j += 1

    return i / len(reference_outputs["trajectory"])


def subsequence(reference: list[str], predicted: list[str]) -> float:
    return score(TrajectorySubsequence, calls(*predicted), {"trajectory": reference})


def test_subsequence_reproduces_the_seed_function_on_random_trajectories() -> None:
    rng = random.Random(1)
    names = ["a", "b", "c", "d"]
    for _ in range(500):
        reference = rng.choices(names, k=rng.randint(1, 5))
        predicted = rng.choices(names, k=rng.randint(0, 7))
        expected = seed_001_trajectory_subsequence(
            {"trajectory": predicted}, {"trajectory": reference}
        )
        assert subsequence(reference, predicted) == expected, (reference, predicted)


# Seed 001's dataset: the expected node / tool names of each question, and what a
# run of its graph records (node names, and the ReAct agent's tool names).
SEED_001 = [
    (["question_answering_agent", "lookup_track"],
     ["intent_classifier", "question_answering_agent", "lookup_track", "compile_followup"], 1.0),
    (["question_answering_agent", "lookup_tracks"],  # the seed's second copy has this typo
     ["intent_classifier", "question_answering_agent", "lookup_track", "compile_followup"], 0.5),
    (["refund_agent"],
     ["intent_classifier", "refund_agent", "gather_info", "compile_followup"], 1.0),
    (["refund_agent", "lookup"],
     ["intent_classifier", "refund_agent", "gather_info", "lookup", "compile_followup"], 1.0),
    (["question_answering_agent", "lookup_album"],
     ["intent_classifier", "question_answering_agent", "lookup_artist", "compile_followup"], 0.5),
    (["refund_agent", "refund"],
     ["intent_classifier", "question_answering_agent", "lookup_track", "compile_followup"], 0.0),
]  # fmt: skip
NODES = {"intent_classifier", "question_answering_agent", "refund_agent", "gather_info",
         "lookup", "refund", "compile_followup"}  # fmt: skip


def graph_run(names: list[str]) -> Trajectory:
    """Graph nodes are agent steps, the ReAct agent's tools are tool steps."""
    return trajectory(*(agent(n) if n in NODES else step(n) for n in names))


@pytest.mark.parametrize(("reference", "names", "expected"), SEED_001)
def test_subsequence_on_the_seed_001_examples(
    reference: list[str], names: list[str], expected: float
) -> None:
    oracle = seed_001_trajectory_subsequence({"trajectory": names}, {"trajectory": reference})
    assert oracle == expected
    criteria = {"trajectory": [{"name": name} for name in reference]}  # any kind
    kinds = {"step_kinds": ["agent", "tool"]}
    assert score(TrajectorySubsequence, graph_run(names), criteria, **kinds) == expected


def test_subsequence_scores_a_shorter_prediction_zero_and_says_why() -> None:
    result = run(TrajectorySubsequence, calls("a"), {"trajectory": ["a", "b"]})
    assert isinstance(result, NumericResult) and result.score == 0.0
    assert result.explanation == "prediction shorter than the reference (1 < 2)"


def test_subsequence_is_a_prefix_credit_unlike_lcs() -> None:
    # "a" is never found, so nothing after it counts (LangSmith's definition) …
    assert subsequence(["a", "b", "c"], ["b", "c", "x"]) == 0.0
    # … while the LCS score sees "b c" in common.
    lcs = score(TrajectoryLcsScore, calls("b", "c", "x"), {"trajectory": ["a", "b", "c"]})
    assert lcs == pytest.approx(2 * 2 / 6)


def test_subsequence_compares_arguments_when_the_reference_gives_them() -> None:
    traj = trajectory(step("lookup", {"id": 2}), step("refund", {"id": 2}))
    criteria = {"trajectory": [{"tool": "lookup", "args": {"id": 1}}, "refund"]}
    assert score(TrajectorySubsequence, traj, criteria) == 0.0
    assert score(TrajectorySubsequence, traj, criteria, args="ignore") == 1.0


@pytest.mark.parametrize(
    ("reference", "predicted", "expected"),
    [
        (["a", "b", "c"], ["a", "b", "c"], 1.0),
        (["a", "b", "c"], ["a", "x", "b", "c"], 6 / 7),  # one extra call
        (["a", "b", "c"], ["b", "a", "c"], 4 / 6),  # one out of order
        (["a", "b"], [], 0.0),
        ([], [], 1.0),
    ],
)
def test_lcs_score(reference: list[str], predicted: list[str], expected: float) -> None:
    assert score(TrajectoryLcsScore, calls(*predicted), {"trajectory": reference}) == pytest.approx(
        expected
    )


def test_lcs_details_give_its_recall_and_precision() -> None:
    result = run(TrajectoryLcsScore, calls("a", "x", "b"), {"trajectory": ["a", "b", "c"]})
    assert result.details is not None
    assert result.details["lcs_recall"] == pytest.approx(2 / 3)
    assert result.details["lcs_precision"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("reference", "predicted", "expected"),
    [
        (["a", "b"], ["b", "a"], 1.0),  # order ignored
        (["a", "b", "c"], ["a", "b", "x", "y"], 2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3)),
        (["a"], [], 0.0),
        ([], ["a"], 0.0),
        ([], [], 1.0),
        (["a"], ["a", "a", "a"], 2 * (1 / 3) / (1 / 3 + 1)),  # repeats are a multiset
    ],
)
def test_f1(reference: list[str], predicted: list[str], expected: float) -> None:
    assert score(TrajectoryF1, calls(*predicted), {"trajectory": reference}) == pytest.approx(
        expected
    )


# Seed 003 (Vertex AI): two example pairs of reference / predicted trajectories.
SEED_003_REFERENCE = [
    [{"tool": "set_device_info", "args": {"device_id": "device_2", "updates": {"status": "OFF"}}}],
    [{"tool": "get_user_preferences", "args": {"user_id": "user_y"}},
     {"tool": "set_temperature", "args": {"location": "Living Room", "temperature": 23}}],
]  # fmt: skip
SEED_003_PREDICTED = [
    [("set_device_info", {"device_id": "device_3", "updates": {"status": "OFF"}})],
    [("get_user_preferences", {"user_id": "user_z"}),
     ("set_temperature", {"location": "Living Room", "temperature": 23})],
]  # fmt: skip


def seed_003(example: int) -> tuple[Trajectory, dict[str, Any]]:
    traj = trajectory(*(step(name, args) for name, args in SEED_003_PREDICTED[example]))
    return traj, {"trajectory": SEED_003_REFERENCE[example]}


@pytest.mark.parametrize(
    ("example", "expected"),
    [(0, (0, 0, 0, 0, 0, 0.5, 0)), (1, (0, 0, 0, 0.5, 0.5, 0.5, 0.5))],
)
def test_seed_003_examples(example: int, expected: tuple[float, ...]) -> None:
    traj, criteria = seed_003(example)
    evaluators = (TrajectoryExactMatch, TrajectoryInOrderMatch, TrajectoryAnyOrderMatch,
                  TrajectoryPrecision, TrajectoryRecall, ToolArgsMatch, TrajectoryF1)  # fmt: skip
    scores = tuple(score(cls, traj, criteria) for cls in evaluators)
    assert scores == pytest.approx(expected)
    names_only = tuple(score(cls, traj, criteria, args="ignore") for cls in evaluators[:5])
    assert names_only == (1, 1, 1, 1, 1)


def test_tool_args_match_gives_per_call_partial_credit_or_strict_credit() -> None:
    traj, criteria = seed_003(0)
    result = run(ToolArgsMatch, traj, criteria)
    assert isinstance(result, NumericResult) and result.score == 0.5  # device_id of 2 keys
    assert result.explanation == "wrong args: set_device_info(device_id)"
    assert score(ToolArgsMatch, traj, criteria, strict=True) == 0.0
    assert score(ToolArgsMatch, traj, criteria, ignore_keys=["device_id"], strict=True) == 1.0


def test_tool_args_match_pairs_calls_for_the_best_total_not_first_fit() -> None:
    # Reference: refund of track 1 then of track 2; the agent refunded 2 then 1.
    # First fit would pair the first reference refund with the first call (0.5)
    # and the second with the second (0.5); the best pairing scores 1 + 1.
    reference = [{"tool": "refund", "args": {"invoice": 7, "track": t}} for t in (1, 2)]
    traj = trajectory(*(step("refund", {"invoice": 7, "track": t}) for t in (2, 1)))
    result = run(ToolArgsMatch, traj, {"trajectory": reference})
    assert result.details is not None
    assert [c["call"] for c in result.details["calls"]] == [1, 0]
    assert isinstance(result, NumericResult) and result.score == 1.0


def test_tool_args_match_counts_an_uncalled_tool_as_zero() -> None:
    criteria = {
        "trajectory": [{"tool": "lookup", "args": {"id": 1}}, {"tool": "refund", "args": {}}]
    }
    result = run(ToolArgsMatch, calls("refund"), criteria)
    assert isinstance(result, NumericResult) and result.score == 0.5
    assert result.explanation == "not called: lookup"


def test_tool_args_match_skips_reference_calls_without_args_unless_told() -> None:
    criteria = {"trajectory": ["lookup", {"tool": "refund", "args": {"id": 1}}]}
    traj = trajectory(step("lookup", {"q": 1}), step("refund", {"id": 1}))
    assert score(ToolArgsMatch, traj, criteria) == 1.0
    assert score(ToolArgsMatch, traj, criteria, unspecified="empty") == 0.5
    assert score(ToolArgsMatch, calls("x"), {"trajectory": ["lookup"]}) == 1.0


def test_tool_args_match_config_is_an_args_mapping() -> None:
    traj = trajectory(step("refund", {"invoice_id": 1042, "track_id": 3158, "note": "x"}))
    criteria = {"trajectory": [{"tool": "refund", "args": {"invoice_id": 1042, "track_id": 3158}}]}
    assert score(ToolArgsMatch, traj, criteria) == pytest.approx(2 / 3)
    assert score(ToolArgsMatch, traj, criteria, mode="superset") == 1.0
    assert score(ToolArgsMatch, traj, criteria, tools={"refund": "superset"}) == 1.0


def test_tool_args_match_finds_exactly_the_labelled_wrong_arguments() -> None:
    for golden in golden_runs():
        if golden.scenario == "multi_turn":
            continue  # its expected trajectory spans three traces
        criteria = {"trajectory": golden.labels["expected_trajectory"]}
        result = run(ToolArgsMatch, golden.turns[0], criteria)
        assert result.details is not None
        found = [
            {"tool": call["expected"], "arg": key}
            for call in result.details["calls"]
            if call["call"] is not None
            for key in call["mismatched"]
        ]
        labelled = [
            {"tool": w["tool"], "arg": w["arg"]} for w in golden.labels["labels"]["wrong_args"]
        ]
        assert found == labelled, (golden.framework, golden.scenario)


def test_agent_steps_count_when_the_spec_says_so() -> None:
    traj = trajectory(agent("refund_agent"), step("refund"))
    criteria = {"trajectory": [{"agent": "refund_agent"}, "refund"]}
    assert score(TrajectoryLcsScore, traj, criteria) == pytest.approx(2 / 3)
    kinds = {"step_kinds": [StepKind.AGENT.value, StepKind.TOOL.value]}
    assert score(TrajectoryLcsScore, traj, criteria, **kinds) == 1.0
