"""Plugin- and server-qualified tool names: kept as recorded, referenced full or bare."""

from __future__ import annotations

import pytest

from evaluators.matching import bare_name, names_match
from evaluators.results import BooleanResult, NumericResult
from evaluators.runner import EvaluationRunner
from evaluators.spec import build_spec
from evaluators.testing import TrajectoryBuilder


@pytest.mark.parametrize(
    ("recorded", "bare"),
    [
        ("mcp__store__refund", "refund"),
        ("store__refund", "refund"),
        ("Store-refund", "refund"),
        ("store.refund", "refund"),
        ("refund", "refund"),
        ("__refund", "__refund"),  # a leading separator is part of the name
    ],
)
def test_bare_names(recorded: str, bare: str) -> None:
    assert bare_name(recorded) == bare


def test_a_reference_names_the_full_or_the_bare_name_only() -> None:
    assert names_match("refund", "mcp__store__refund")
    assert names_match("mcp__store__refund", "mcp__store__refund")
    assert not names_match("fund", "mcp__store__refund")  # a suffix is not the bare name
    assert not names_match("store", "mcp__store__refund")


def results(spec: dict[str, object], *tools: str) -> dict[str, object]:
    builder = TrajectoryBuilder("refund 9")
    for tool in tools:
        builder.tool(tool, {})
    trajectory = builder.build()
    with EvaluationRunner() as runner:
        return {o.evaluator: o.result for o in runner.run(trajectory, build_spec(spec).bound)}


def test_specs_match_namespaced_tools_by_their_bare_names() -> None:
    found = results(
        {
            "id": "s",
            "reference": {"trajectory": ["lookup", "refund"]},
            "evaluators": [
                "trajectory_exact_match",
                {"name": "forbidden_tools", "criteria": {"tools": ["delete"]}},
                {"name": "essential_tools_present", "criteria": {"tools": ["refund"]}},
                {"name": "tool_order", "criteria": {"constraints": ["lookup before refund"]}},
            ],
        },
        "store__lookup",
        "mcp__store__refund",
    )
    assert isinstance(found["trajectory_exact_match"], NumericResult)
    assert found["trajectory_exact_match"].score == 1.0
    assert found["essential_tools_present"].score == 1.0  # type: ignore[attr-defined]
    assert found["forbidden_tools"] == BooleanResult(value=True, details={"called": {}})
    assert found["tool_order"].value is True  # type: ignore[attr-defined]


def test_a_bare_name_shared_by_two_namespaces_is_reported() -> None:
    found = results(
        {"id": "s", "reference": {"trajectory": ["refund"]}, "evaluators": ["trajectory_recall"]},
        "billing__refund",
        "store__refund",
    )
    details = found["trajectory_recall"].details  # type: ignore[attr-defined]
    assert details["ambiguous"] == {"refund": ["billing__refund", "store__refund"]}
