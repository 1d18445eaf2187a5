"""The benchmark spec (benchmarks/specs) matches the synthetic traces and evaluates cleanly.

``benchmarks/replay_throughput.py`` reports replay "+ spec" as 14 deterministic
evaluations per synthetic trace: that holds only while this spec loads, matches
the services of ``shared/bench/make_traces.py`` and none of its evaluators errors.
"""

from __future__ import annotations

import pytest
from support.paths import ROOT

from evaluators.results import ErrorResult
from evaluators.runner import EvaluationRunner
from evaluators.spec import SpecSet, load_specs
from evaluators.trajectory import Step, StepKind, Trajectory

REPO = ROOT
# make_traces.py's services and tools.
SERVICES = ("support-agent", "research-agent", "coding-agent", "travel-agent")
TOOLS = ("search_web", "run_sql", "lookup_order", "send_email", "search_web")


@pytest.fixture(scope="module")
def specs() -> SpecSet:
    return load_specs([REPO / "benchmarks" / "specs"])


def synthetic(service: str) -> Trajectory:
    steps = tuple(
        Step(StepKind.TOOL, name, f"{i:016x}", None, i * 10**9, 0.4,
             args={"kind": "args", "id": i, "items": [{"name": "alpha", "value": 1.5}]},
             result={"kind": "result", "ok": i != 2}, error="TimeoutError" if i == 2 else None)
        for i, name in enumerate(TOOLS)
    )  # fmt: skip
    return Trajectory(f"{7:032x}", service, service.replace("-", "_"), None,
                      "alpha beta", "done", False, 6.0, 0, steps)  # fmt: skip


@pytest.mark.parametrize("service", SERVICES)
def test_every_synthetic_service_gets_twelve_clean_evaluations(
    specs: SpecSet, service: str
) -> None:
    trajectory = synthetic(service)
    bound = specs.bound_for(trajectory)
    assert len(bound) == 12
    with EvaluationRunner() as runner:
        outcomes = runner.run(trajectory, bound)
    errors = [(o.evaluator, o.result) for o in outcomes if isinstance(o.result, ErrorResult)]
    assert errors == []
    verdicts = {o.evaluator: o.passed for o in outcomes}
    assert verdicts["trajectory_in_order_match"] is False  # lookup_order comes before run_sql
    assert verdicts["trajectory_any_order_match"] is True
    assert verdicts["at_most_two_each"] is True and verdicts["no_email"] is False


def test_the_music_store_runs_are_not_matched(specs: SpecSet) -> None:
    assert specs.bound_for(synthetic("music-store-support-pydantic-ai")) == []
