"""The Vertex trajectory evaluators with the richer ``args`` mapping (shorthands unchanged)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from support.builtin_kit import golden_runs, score, step, trajectory

from evaluators.argmatch import ArgsMatch
from evaluators.builtin.trajectory_match import (
    TrajectoryAnyOrderMatch,
    TrajectoryExactMatch,
    TrajectoryInOrderMatch,
    TrajectoryPrecision,
    TrajectoryRecall,
)

ALL = (TrajectoryExactMatch, TrajectoryInOrderMatch, TrajectoryAnyOrderMatch,
       TrajectoryPrecision, TrajectoryRecall)  # fmt: skip

# The refund of the "tool_error" scenario, with the free-text reason left out.
REFUND_877 = [
    {"tool": "lookup_invoice", "args": {"customer_id": 17, "invoice_id": 877}},
    {"tool": "lookup_track", "args": {"track_name": "Money"}},
    {"tool": "refund", "args": {"invoice_id": 877, "track_id": 1204}},
]


def scores(traj: Any, reference: list[Any], **config: Any) -> tuple[float, ...]:
    return tuple(score(cls, traj, {"trajectory": reference}, **config) for cls in ALL)


def test_superset_args_accept_the_free_text_reason_of_every_framework() -> None:
    for golden in golden_runs():
        if golden.scenario == "tool_error":
            traj = golden.turns[0]
            assert scores(traj, REFUND_877) == (0, 0, 0, 2 / 3, 2 / 3)  # reason: extra key
            assert scores(traj, REFUND_877, args={"mode": "superset"}) == (1, 1, 1, 1, 1)
            ignored = {"ignore_keys": ["reason"]}
            assert scores(traj, REFUND_877, args={"tools": {"refund": ignored}}) == (1, 1, 1, 1, 1)


def test_key_rules_reach_the_vertex_evaluators() -> None:
    traj = trajectory(step("refund", {"invoice_id": 1042, "amount": 0.991, "reason": "dup."}))
    reference = [{"tool": "refund", "args": {"invoice_id": 1042, "amount": 0.99, "reason": "?"}}]
    args = {"keys": {"amount": {"tolerance": 0.01}, "reason": {"regex": "(?i)^dup"}}}
    assert scores(traj, reference) == (0, 0, 0, 0, 0)
    assert scores(traj, reference, args=args) == (1, 1, 1, 1, 1)


def test_shorthands_still_validate_to_strings() -> None:
    for shorthand in ("auto", "exact", "ignore"):
        assert TrajectoryRecall.build({"args": shorthand}).config.args == shorthand
    assert TrajectoryRecall.build().config.args == "auto"
    config = TrajectoryRecall.build({"args": {"mode": "subset"}}).config
    assert isinstance(config.args, ArgsMatch)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("subset", r"Input should be 'auto'.*for 'subset' write \{mode: subset\}"),
        ({"mode": "fuzzy"}, "args.*mode"),
        ({"tools": {"refund": 3}}, "args.*tools.refund"),
    ],
)
def test_bad_args_name_the_field(args: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        TrajectoryPrecision.build({"args": args})
