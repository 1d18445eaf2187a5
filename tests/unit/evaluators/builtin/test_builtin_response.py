"""Final-response checks (exact, contains, regex, JSON similarity) and single-step routing."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from support.builtin_kit import agent, golden_runs, run, score, step, trajectory, value

from evaluators.builtin.json_response import ResponseJsonSimilarity, leaves, parse_json_answer
from evaluators.builtin.response import ResponseContains, ResponseExactMatch, ResponseRegex
from evaluators.builtin.single_step import FirstStepMatch
from evaluators.results import NumericResult
from evaluators.trajectory import Trajectory

DONE = (
    "Done! I refunded one copy of 'Comfortably Numb' ($0.99) from invoice 1042. "
    "Refund id RF-1042-3158."
)


def answer(text: str | None) -> Trajectory:
    return trajectory(output=text)


def test_exact_match_and_its_normalisation() -> None:
    assert value(ResponseExactMatch, answer(DONE), {"response": DONE}) is True
    loose = "  done! i REFUNDED one copy of 'comfortably numb'  ($0.99) from invoice 1042. " + (
        "Refund id RF-1042-3158.\n"
    )
    assert value(ResponseExactMatch, answer(loose), {"response": DONE}) is False
    config = {"ignore_case": True, "normalize_whitespace": True}
    assert value(ResponseExactMatch, answer(loose), {"response": DONE}, **config) is True


def test_every_check_fails_without_a_final_response() -> None:
    silent = answer(None)
    assert run(ResponseExactMatch, silent, {"response": "x"}).explanation == "no final response"
    assert value(ResponseContains, silent, {"contains": ["x"]}) is False
    assert value(ResponseRegex, silent, {"pattern": "."}) is False
    assert score(ResponseJsonSimilarity, silent, {"response": "{}"}) == 0.0


def test_contains_all_or_any() -> None:
    criteria = {"contains": ["RF-1042-3158", "$0.99", "sorry"]}
    result = run(ResponseContains, answer(DONE), criteria)
    assert result.explanation == "missing: 'sorry'"
    assert value(ResponseContains, answer(DONE), criteria, require="any") is True
    assert value(ResponseContains, answer(DONE), {"contains": ["refund ID"]}) is False
    assert value(ResponseContains, answer(DONE), {"contains": ["refund ID"]}, ignore_case=True)


def test_regex_search_or_full_match() -> None:
    assert value(ResponseRegex, answer(DONE), {"pattern": r"RF-\d+-\d+"}) is True
    assert value(ResponseRegex, answer(DONE), {"pattern": r"RF-\d+-\d+"}, full_match=True) is False
    assert value(ResponseRegex, answer(DONE), {"pattern": r"(?s)Done!.*\.$"}, full_match=True)
    with pytest.raises(ValidationError, match="invalid regex"):
        ResponseRegex.criteria_model.model_validate({"pattern": "RF-("})


def test_final_responses_of_the_labelled_runs() -> None:
    # Every framework's tool_error run apologises and names the refund window.
    for golden in golden_runs():
        if golden.scenario == "tool_error":
            final = golden.turns[-1]
            assert final.output == golden.labels["final_responses"][-1]
            criteria = {"contains": ["outside our 30-day refund window"]}
            assert value(ResponseContains, final, criteria), golden.framework
            assert value(ResponseRegex, final, {"pattern": "(?i)^sorry"}), golden.framework


def test_json_leaves_and_fences() -> None:
    assert leaves({"a": {"b": 1}, "c": [1, {}]}) == {"$.a.b": 1, "$.c[0]": 1, "$.c[1]": {}}
    assert leaves(3) == {"$": 3}
    assert parse_json_answer('```json\n{"a": 1}\n```') == {"a": 1}
    with pytest.raises(ValueError):
        parse_json_answer("not json")


@pytest.mark.parametrize(
    ("expected", "output", "config", "similarity"),
    [
        ({"refund_id": "RF-1", "amount": 0.99}, '{"amount": 0.99, "refund_id": "RF-1"}', {}, 1.0),
        ({"refund_id": "RF-1", "amount": 0.99}, '{"refund_id": "RF-1", "amount": 1.99}', {}, 0.5),
        ({"refund_id": "RF-1", "amount": 0.99}, '{"refund_id": "RF-1", "amount": 0.991}',
         {"tolerance": 0.01}, 1.0),
        ({"refund_id": "RF-1"}, '{"refund_id": "RF-1", "status": "ok"}', {}, 0.5),
        ({"refund_id": "RF-1"}, '{"refund_id": "RF-1", "status": "ok"}', {"allow_extra": True},
         1.0),
        ({"tracks": [1, 2, 3]}, '{"tracks": [1, 3, 2]}', {}, 1 / 3),  # lists by position
        ({"a": 1}, "I refunded it.", {}, 0.0),
    ],
)  # fmt: skip
def test_json_similarity(
    expected: Any, output: str, config: dict[str, Any], similarity: float
) -> None:
    got = score(ResponseJsonSimilarity, answer(output), {"response": expected}, **config)
    assert got == pytest.approx(similarity)


def test_json_similarity_takes_the_reference_response_as_json_text() -> None:
    result = run(
        ResponseJsonSimilarity, answer('{"a": 1, "b": 2}'), {"response": '{"a": 1, "b": 3}'}
    )
    assert isinstance(result, NumericResult) and result.score == 0.5
    assert result.explanation == "differ: $.b"
    with pytest.raises(ValidationError, match="the expected response is not JSON"):
        ResponseJsonSimilarity.criteria_model.model_validate({"response": "You are refunded."})


# Seed 001's single-step dataset: the route the intent classifier should pick.
SEED_001_ROUTES = [
    ("I recently bought some tracks I really dislike", "refund_agent"),
    (
        "I'm about to buy some Rolling Stones tracks, any recommendations?",
        "question_answering_agent",
    ),
    ("Did Prince release any albums in 2000?", "question_answering_agent"),
    ("Who sang the cover of Yesterday I bought?", "question_answering_agent"),
]
NEXT_NODE = {
    "refund_agent": ["gather_info", "lookup"],
    "question_answering_agent": ["lookup_track"],
}


def routed(route: str) -> Trajectory:
    """A run of seed 001's graph: intent_classifier, the route's nodes, compile_followup."""
    inner = [step(n) if n.startswith("lookup_") else agent(n) for n in NEXT_NODE[route]]
    return trajectory(agent("intent_classifier"), agent(route), *inner, agent("compile_followup"))


ROUTE_CONFIG = {"step_kinds": ["agent", "tool"], "after": "intent_classifier"}


@pytest.mark.parametrize(("question", "route"), SEED_001_ROUTES)
def test_route_equals_expected_on_the_seed_001_examples(question: str, route: str) -> None:
    criteria = {"step": {"agent": route}}
    assert value(FirstStepMatch, routed(route), criteria, **ROUTE_CONFIG) is True, question
    other = next(r for r in NEXT_NODE if r != route)
    result = run(FirstStepMatch, routed(other), criteria, **ROUTE_CONFIG)
    assert result.explanation == f"first step {other!r}, expected agent:{route}"


def test_first_tool_is_the_default_single_step() -> None:
    traj = routed("refund_agent")
    assert value(FirstStepMatch, traj, {"step": "lookup"}) is False  # lookup is a node here
    assert value(FirstStepMatch, traj, {"step": {"name": "gather_info"}},
                 step_kinds=["agent"], skip=["intent_classifier", "refund_agent"])  # fmt: skip
    for golden in golden_runs():
        if golden.scenario in ("correct", "extra_call", "wrong_args", "tool_error"):
            assert value(FirstStepMatch, golden.turns[0], {"step": "lookup_invoice"}), golden[:2]
        if golden.scenario == "wrong_order":
            assert not value(FirstStepMatch, golden.turns[0], {"step": "lookup_invoice"})


def test_first_step_compares_arguments_and_reports_missing_steps() -> None:
    traj = trajectory(step("lookup_invoice", {"invoice_id": 877}))
    expected = {"step": {"tool": "lookup_invoice", "args": {"invoice_id": 1042}}}
    assert value(FirstStepMatch, traj, expected) is False
    assert value(FirstStepMatch, traj, expected, args="ignore") is True
    assert run(FirstStepMatch, traj, expected, after="router").explanation == "no step 'router'"
    empty = run(FirstStepMatch, trajectory(), {"step": "lookup"})
    assert empty.explanation == "no step to compare with lookup"
