"""The example specs of config/specs on the labelled music-store scenarios, end to end.

Trajectories are rebuilt from the labels of the real pydantic-ai runs
(tests/fixtures/evaluators/music_store_scenarios.json): spec matching, binding
and the runner together must give the verdicts the labels call for.
"""

from __future__ import annotations

import json

import pytest
from support.paths import FIXTURES, ROOT

from evaluators.runner import EvaluationRunner, bind_always
from evaluators.spec import SpecSet, load_specs
from evaluators.trajectory import Step, StepKind, Trajectory

REPO = ROOT
SCENARIOS = json.loads((FIXTURES / "evaluators/music_store_scenarios.json").read_text())[
    "scenarios"
]


@pytest.fixture(scope="module")
def specs() -> SpecSet:
    return load_specs([REPO / "config" / "specs"])


def scenario(name: str) -> Trajectory:
    data = SCENARIOS[name]
    steps = tuple(
        Step(
            StepKind.TOOL,
            call["tool"],
            f"{i:016x}",
            None,
            i,
            0.1,
            args=call["args"],
            error=call["error"],
        )
        for i, call in enumerate(data["actual_trajectory"])
    )
    return Trajectory(
        trace_id=name.encode().hex().ljust(32, "0")[:32],
        service="music-store-support-pydantic-ai",
        agent="music_store_support",
        session_id=None,
        input=data["user_input"],
        output=None,
        failed=bool(data["run_errors"]),
        latency_s=1.0,
        start_unix_nano=0,
        steps=steps,
        error=data["run_errors"][0] if data["run_errors"] else None,
    )


def verdicts(specs: SpecSet, name: str) -> dict[tuple[str | None, str], bool | None]:
    trajectory = scenario(name)
    with EvaluationRunner() as runner:
        outcomes = runner.run(trajectory, [*bind_always(), *specs.bound_for(trajectory)])
    return {(o.spec_id, o.evaluator): o.passed for o in outcomes}


EXPECTED_SPECS = {
    "correct": ["refund-policy", "refund-duplicate-purchase"],
    "extra_call": ["refund-policy", "refund-duplicate-purchase"],
    "wrong_order": ["refund-policy", "refund-duplicate-purchase"],
    "wrong_args": ["refund-policy", "refund-duplicate-purchase"],
    "parallel_calls": ["refund-policy", "refund-duplicate-purchase"],
    "tool_error": ["refund-outside-window", "refund-policy"],
    "tool_exception": ["refund-outside-window", "refund-policy"],
}


# The eval-set spec (config/specs/dataset-music-store.yaml) matches every run of the
# agent; its dataset items then pick the reference.
EVAL_SET = "music-store-eval-set"


@pytest.mark.parametrize("name", sorted(EXPECTED_SPECS))
def test_which_examples_apply(specs: SpecSet, name: str) -> None:
    expected = sorted([*EXPECTED_SPECS[name], EVAL_SET])
    assert sorted(s.id for s in specs.matching(scenario(name))) == expected


def test_correct_run_passes_everything(specs: SpecSet) -> None:
    results = verdicts(specs, "correct")
    assert all(passed is not False for passed in results.values()), results
    assert results[("refund-duplicate-purchase", "trajectory_exact_match")] is True


def test_extra_call_fails_exact_but_passes_tolerant_checks(specs: SpecSet) -> None:
    results = verdicts(specs, "extra_call")
    spec = "refund-duplicate-purchase"
    assert results[(spec, "trajectory_exact_match")] is False
    assert results[(spec, "trajectory_in_order_match")] is True
    assert results[(spec, "trajectory_precision")] is True  # 0.75 meets 0.75
    assert results[(spec, "trajectory_recall")] is True


def test_wrong_order_breaks_the_refund_policy(specs: SpecSet) -> None:
    results = verdicts(specs, "wrong_order")
    assert results[("refund-policy", "invoice_checked_before_refund")] is False
    assert results[("refund-duplicate-purchase", "trajectory_any_order_match")] is True


def test_tool_exception_is_a_failed_run_missing_a_call(specs: SpecSet) -> None:
    results = verdicts(specs, "tool_exception")
    assert results[(None, "failure")] is False
    assert results[("refund-outside-window", "trajectory_recall")] is False
    assert results[("refund-outside-window", "trajectory_in_order_match")] is False


def test_tool_error_keeps_a_correct_trajectory(specs: SpecSet) -> None:
    results = verdicts(specs, "tool_error")
    assert results[(None, "failure")] is True  # the agent handled the error
    assert all(passed for key, passed in results.items() if key[0] == "refund-outside-window")
