"""Which specs apply to a trajectory: each selector, their conjunction, sampling."""

from __future__ import annotations

from typing import Any

import pytest

from evaluators.selectors import MatchRule, sampled
from evaluators.spec import SpecSet, build_spec
from evaluators.trajectory import Step, StepKind, Trajectory


def tool(name: str, *, executed: bool = True) -> Step:
    return Step(StepKind.TOOL, name, "ab", None, 0, 0.1, executed=executed)


BASE = Trajectory(
    trace_id="afb88225dd75c892422c0f02ce3d1934",
    service="music-store-support-pydantic-ai",
    agent="music_store_support",
    session_id=None,
    input="Hi, I'm customer 17. I was charged twice for 'Comfortably Numb' on invoice 1042.",
    output="Done!",
    failed=False,
    latency_s=1.0,
    start_unix_nano=0,
    steps=(tool("lookup_invoice"), tool("refund"), tool("lookup_artist", executed=False)),
    agents=("music_store_support", "refund_agent"),
    attributes={"deployment.environment": "prod", "retries": 3},
    resource_attributes={"deployment.environment": "staging", "service.version": "1.4.2"},
)


def matches(match: dict[str, Any], trajectory: Trajectory = BASE) -> bool:
    return MatchRule.model_validate(match).matches(trajectory)


def test_omitted_conditions_match_everything() -> None:
    assert matches({})
    assert matches({}, BASE._replace(input=None, agent=None, agents=(), steps=()))


@pytest.mark.parametrize(
    ("service", "expected"),
    [
        ("music-store-support-pydantic-ai", True),
        ("music-store-support", False),  # exact means whole value
        ({"regex": "^music-store-support"}, True),
        ({"regex": "langgraph$"}, False),
    ],
)
def test_service(service: Any, expected: bool) -> None:
    assert matches({"service": service}) is expected


def test_agent_matches_the_main_agent_or_any_agent() -> None:
    assert matches({"agent": "music_store_support"})
    assert matches({"agent": "refund_agent"})
    assert matches({"agent": {"regex": "^refund"}})
    assert not matches({"agent": "billing_agent"})
    assert not matches({"agent": "refund_agent"}, BASE._replace(agent=None, agents=()))


def test_input_regex_is_searched_and_needs_an_input() -> None:
    assert matches({"input_regex": "(?i)CHARGED TWICE.*invoice 1042"})
    assert not matches({"input_regex": "^refund"})
    assert not matches({"input_regex": ".*"}, BASE._replace(input=None))


def test_attributes_root_first_then_resource() -> None:
    assert matches({"attributes": {"deployment.environment": "prod"}})  # root wins
    assert not matches({"attributes": {"deployment.environment": "staging"}})
    assert matches({"attributes": {"service.version": {"regex": r"^1\.4\."}}})  # resource
    assert not matches({"attributes": {"missing.key": {"regex": ".*"}}})


def test_attribute_values_compare_as_values_or_text() -> None:
    assert matches({"attributes": {"retries": 3}})
    assert matches({"attributes": {"retries": "3"}})
    assert not matches({"attributes": {"retries": 4}})


def test_all_attributes_must_hold() -> None:
    both = {"deployment.environment": "prod", "service.version": "1.4.2"}
    assert matches({"attributes": both})
    assert not matches({"attributes": {**both, "service.version": "2.0"}})


def test_tool_called_counts_executed_tools_only() -> None:
    assert matches({"tool_called": "refund"})
    assert matches({"tool_called": {"regex": "^lookup_"}})
    assert not matches({"tool_called": "lookup_artist"})  # requested, never ran
    agent_step = Step(StepKind.AGENT, "refund", "cd", None, 0, 0.1)
    assert not matches({"tool_called": "refund"}, BASE._replace(steps=(agent_step,)))


def test_tool_called_accepts_the_bare_name_of_a_qualified_tool() -> None:
    # Semantic Kernel records a plugin's function as ``MusicStore-refund``.
    qualified = BASE._replace(steps=(tool("MusicStore-refund"),))
    assert matches({"tool_called": "refund"}, qualified)
    assert matches({"tool_called": "MusicStore-refund"}, qualified)
    assert matches({"tool_called": {"regex": "^ref"}}, qualified)
    assert not matches({"tool_called": "fund"}, qualified)


def test_every_given_condition_must_hold() -> None:
    good = {"service": {"regex": "^music"}, "agent": "refund_agent", "tool_called": "refund"}
    assert matches(good)
    for key, wrong in (("service", "x"), ("agent", "x"), ("tool_called", "x")):
        assert not matches({**good, key: wrong})


def test_sample_rate_bounds() -> None:
    assert matches({"sample_rate": 1.0})
    assert not matches({"sample_rate": 0.0})
    with pytest.raises(ValueError, match="sample_rate"):
        MatchRule.model_validate({"sample_rate": 1.5})


def test_sampling_is_deterministic_by_trace_id() -> None:
    ids = [f"{n:032x}" for n in range(2000)]
    first = [sampled(trace_id, 0.3) for trace_id in ids]
    assert first == [sampled(trace_id, 0.3) for trace_id in ids]  # a replay decides the same
    assert [sampled(t.upper(), 0.3) for t in ids] == first  # hex case does not matter
    assert 0.25 < sum(first) / len(ids) < 0.35


def test_sampling_is_nested_across_rates() -> None:
    ids = [f"{n:032x}" for n in range(500)]
    low = {t for t in ids if sampled(t, 0.1)}
    high = {t for t in ids if sampled(t, 0.5)}
    assert low and low < high


def test_sampling_decides_per_trace() -> None:
    ids = [f"{n:032x}" for n in range(50)]
    decisions = {matches({"sample_rate": 0.5}, BASE._replace(trace_id=t)) for t in ids}
    assert decisions == {True, False}


def test_spec_set_returns_every_matching_spec_in_order() -> None:
    specs = SpecSet(
        [
            build_spec({"id": "any", "evaluators": ["latency"]}),
            build_spec({"id": "other", "match": {"service": "x"}, "evaluators": ["latency"]}),
            build_spec(
                {"id": "refunds", "match": {"tool_called": "refund"}, "evaluators": ["failure"]}
            ),
        ]
    )
    assert [spec.id for spec in specs.matching(BASE)] == ["any", "refunds"]
    assert [(b.spec_id, b.id) for b in specs.bound_for(BASE)] == [
        ("any", "latency"),
        ("refunds", "failure"),
    ]
    assert specs.get("other") is not None and specs.get("nope") is None


def test_specs_ruled_out_by_service_are_remembered_per_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = build_spec(
        {"id": "store", "match": {"service": {"regex": "^music-store"}}, "evaluators": ["latency"]}
    )
    anywhere = build_spec({"id": "any", "match": {"agent": "x"}, "evaluators": ["latency"]})
    specs = SpecSet([store, anywhere])
    checked: list[str] = []
    original = MatchRule.service_holds

    def counting(rule: MatchRule, service: str) -> bool:
        checked.append(service)
        return original(rule, service)

    monkeypatch.setattr(MatchRule, "service_holds", counting)
    other = BASE._replace(service="travel-agent", agent="x")
    for _ in range(3):
        assert [spec.id for spec in specs.matching(BASE)] == ["store"]
        assert [spec.id for spec in specs.matching(other)] == ["any"]
    assert checked.count("travel-agent") == 2  # once per spec, on the first trace only
    monkeypatch.setattr("evaluators.spec._MAX_SERVICES", 1)
    assert [spec.id for spec in specs.matching(other)] == ["any"]  # a full cache starts over
