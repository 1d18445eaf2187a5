"""Helpers for the built-in evaluator tests: tiny trajectories and the labelled golden runs.

``golden_runs()`` pairs every labelled scenario of ``tests/golden/traces`` with
its normalised trajectories (``tests/golden/trajectories``, one per turn), so
evaluators are checked against the labels of real framework captures.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from evaluators.base import Evaluator
from evaluators.results import BooleanResult, EvaluationResult, NumericResult
from evaluators.trajectory import Step, StepKind, Trajectory
from support.captures import NO_CONTENT_RECORDED, not_read
from support.paths import GOLDEN


def step(
    name: str,
    args: Any = None,
    *,
    kind: StepKind = StepKind.TOOL,
    executed: bool = True,
    error: str | None = None,
    duration: float = 0.1,
) -> Step:
    span = "ab" if executed else ""
    return Step(kind, name, span, None, 0, duration, args=args, error=error, executed=executed)


def agent(name: str) -> Step:
    return step(name, kind=StepKind.AGENT)


def trajectory(
    *steps: Step, output: str | None = None, latency: float = 1.0, failed: bool = False
) -> Trajectory:
    return Trajectory("t1", "svc", None, None, None, output, failed, latency, 0, steps)


def calls(*names: str) -> Trajectory:
    """A trajectory of argument-less tool calls."""
    return trajectory(*(step(name) for name in names))


def run(
    cls: type[Evaluator[Any, Any]], traj: Trajectory, criteria: dict[str, Any], **config: Any
) -> EvaluationResult:
    """Build ``cls`` with ``config`` and evaluate ``traj`` against ``criteria``."""
    result = cls.build(config).evaluate(traj, cls.criteria_model.model_validate(criteria))
    assert isinstance(result, NumericResult | BooleanResult), result
    return result


def score(
    cls: type[Evaluator[Any, Any]], traj: Trajectory, criteria: dict[str, Any], **config: Any
) -> float:
    result = run(cls, traj, criteria, **config)
    if isinstance(result, BooleanResult):
        return 1.0 if result.value else 0.0
    assert isinstance(result, NumericResult)
    return result.score


def value(
    cls: type[Evaluator[Any, Any]], traj: Trajectory, criteria: dict[str, Any], **config: Any
) -> bool:
    result = run(cls, traj, criteria, **config)
    assert isinstance(result, BooleanResult), result
    return result.value


def from_json(data: dict[str, Any]) -> Trajectory:
    """A ``Trajectory`` from its ``to_json()`` form (the golden trajectory files)."""
    steps = tuple(
        Step(
            StepKind(s["kind"]), s["name"], s["span_id"], None, s["start_unix_nano"],
            s["duration_s"], args=s["args"], result=s["result"], error=s["error"],
            executed=s.get("executed", True),
        )
        for s in data["steps"]
    )  # fmt: skip
    return Trajectory(
        data["trace_id"], data["service"], data["agent"], data["session_id"], data["input"],
        data["output"], data["failed"], data["latency_s"], 0, steps, error=data["error"],
    )  # fmt: skip


class GoldenRun(NamedTuple):
    framework: str
    scenario: str
    labels: dict[str, Any]  # the whole *.expected.json
    turns: list[Trajectory]  # one per user turn, in order


def golden_runs(*, text_needed: bool = True) -> list[GoldenRun]:
    """Every labelled scenario of every captured framework, with its trajectories; with
    ``text_needed``, only those whose instrumentation records arguments, results and
    answers (not ``NO_CONTENT_RECORDED``). Captures evald does not read right yet
    (``NOT_READ``) are left out: their labels are not what evald reports."""
    runs = []
    for expected in sorted((GOLDEN / "traces").glob("*/*.expected.json")):
        framework = expected.parent.name
        scenario = expected.name.removesuffix(".expected.json")
        if not_read(framework, scenario) or (text_needed and framework in NO_CONTENT_RECORDED):
            continue
        path = GOLDEN / "trajectories" / framework / f"{scenario}.json"
        traces = [from_json(item) for item in json.loads(path.read_text())]
        # One trajectory per user turn; a capture may hold a stray empty trace.
        turns = [traj for traj in traces if traj.input is not None or traj.steps]
        runs.append(GoldenRun(framework, scenario, json.loads(expected.read_text()), turns))
    return runs
