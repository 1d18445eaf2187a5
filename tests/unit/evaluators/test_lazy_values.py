"""Lazily parsed arguments and results read as the plain values (ADR 0019)."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from collector.sinks.jsonl import _default as jsonl_default
from evaluators.call_identity import call_identities
from evaluators.contract import check_evaluator, sample_trajectories
from evaluators.helpers import extract_tool_calls, trajectory_to_text
from evaluators.lazy import LazyValue, plain
from evaluators.results import BooleanResult
from evaluators.testing import TrajectoryBuilder, lazily_parsed
from evaluators.trajectory import Step, StepKind, Trajectory

OBJECT = '{"invoice_id": 1042, "lines": [{"track": "Money", "price": 0.99}]}'


def lazy(text: str) -> LazyValue:
    return LazyValue.of_json(text)


def test_a_lazy_value_is_parsed_once_on_first_read() -> None:
    calls: list[str] = []

    def load(text: str) -> Any:
        calls.append(text)
        return json.loads(text)

    value = LazyValue(load, OBJECT)
    assert not value.loaded and calls == []
    assert value["invoice_id"] == 1042 and value.get("lines")[0]["track"] == "Money"
    assert value.loaded and calls == [OBJECT]
    assert len(value) == 2 and "lines" in value and list(value) == ["invoice_id", "lines"]
    assert calls == [OBJECT]


def test_whether_it_may_be_none_is_checked_once_when_asked_and_never_parses() -> None:
    checks: list[str] = []

    def check(text: str) -> bool:
        checks.append(text)
        return "null" in text

    value = LazyValue(json.loads, OBJECT, check)
    assert checks == []  # not asked yet
    assert value.maybe_none is False and value.maybe_none is False
    assert checks == [OBJECT] and not value.loaded
    assert LazyValue(json.loads, "null", check).maybe_none is True
    assert LazyValue(json.loads, OBJECT, False).maybe_none is False
    assert LazyValue(json.loads, OBJECT).maybe_none is True
    assert LazyValue(json.loads, OBJECT, 0).maybe_none is False  # a bool's stand-in, read as one
    value.maybe_none = True  # settable, as it was before it could be a check
    assert value.maybe_none is True


@pytest.mark.parametrize(
    "text", [OBJECT, "[1, 2, 3]", '"Comfortably Numb"', "3.5", "true", "null", "{}"]
)
def test_a_lazy_value_behaves_as_its_value_for_every_read(text: str) -> None:
    value, expected = lazy(text), json.loads(text)
    assert value == expected and expected == value
    assert (value != expected) is False  # __ne__ of its own
    assert value == lazy(text)
    assert repr(value) == repr(expected) and str(value) == str(expected)
    assert bool(value) is bool(expected)
    assert plain(value) == expected and type(plain(value)) is type(expected)
    assert json.dumps(value, default=jsonl_default) == json.dumps(expected)
    assert pickle.loads(pickle.dumps(value)) == expected
    assert type(pickle.loads(pickle.dumps(value))) is type(expected)
    assert copy.deepcopy(value) == expected and type(copy.copy(value)) is type(expected)
    if isinstance(expected, dict | list | str):
        assert list(value) == list(expected) and len(value) == len(expected)
        assert list(reversed(value)) == list(reversed(expected))
    if isinstance(expected, dict):
        assert dict(value) == expected and dict(value.items()) == expected
    if isinstance(expected, dict | list):
        with pytest.raises(TypeError):
            hash(value)  # unhashable, as the value is
    else:
        assert hash(value) == hash(expected)


def test_text_and_number_reads_and_ordering() -> None:
    text, number = lazy('"Error: refund window expired"'), lazy("2")
    assert text.startswith("Error:") and "refund" in text and text[0] == "E"
    assert text + "!" == "Error: refund window expired!" and "x" + lazy('"y"') == "xy"
    assert f"{number:>3}" == "  2" and number < 3 and number >= 2 and min(3, number) == 2
    with pytest.raises(AttributeError):
        text.__not_a_method__  # noqa: B018 - protocol names are not delegated


def test_step_attributes_give_plain_values_and_the_tuple_compares_equal() -> None:
    eager = Step(StepKind.TOOL, "refund", "01", None, 0, 0.1, json.loads(OBJECT), "ok")
    step = eager._replace(args=lazy(OBJECT), result=lazy('"ok"'))
    assert type(step) is Step and isinstance(step.args, dict) and step.result == "ok"
    assert step == eager and eager == step and repr(step) == repr(eager)
    assert step._asdict() == eager._asdict() and type(step._asdict()["args"]) is dict
    assert step.to_json() == eager.to_json()
    assert json.dumps(step.to_json()) == json.dumps(eager.to_json())
    unpacked = tuple(step)
    assert isinstance(unpacked[6], LazyValue) and unpacked[6] == eager.args  # what plain() is for
    again = pickle.loads(pickle.dumps(step))
    assert type(again[6]) is dict and again == eager


def _trajectory() -> Trajectory:
    return (
        TrajectoryBuilder("Refund invoice 1042")
        .llm()
        .tool("lookup_invoice", {"invoice_id": 1042}, result={"total": 1.98})
        .tool("refund", {"invoice_id": 1042}, error="RefundWindowExpired")
        .tool("refund", {"invoice_id": 1042}, result="done")
        .output("Done.")
        .build()
    )


def test_builder_builds_both_forms_with_equal_reads() -> None:
    eager = _trajectory()
    built_lazy = (
        TrajectoryBuilder("Refund invoice 1042", lazy=True)
        .llm()
        .tool("lookup_invoice", {"invoice_id": 1042}, result={"total": 1.98})
        .tool("refund", {"invoice_id": 1042}, error="RefundWindowExpired")
        .tool("refund", {"invoice_id": 1042}, result="done")
        .output("Done.")
        .build()
    )
    for other in (built_lazy, lazily_parsed(eager)):
        tools = other.tool_calls
        assert all(isinstance(step[6], LazyValue) for step in tools)
        assert all(not step[6].loaded for step in tools)  # nothing read yet
        assert other.to_json() == eager.to_json() and other == eager
        assert extract_tool_calls(other) == extract_tool_calls(eager)
        assert trajectory_to_text(other) == trajectory_to_text(eager)
        assert call_identities(other.tool_calls) == call_identities(eager.tool_calls)


def test_check_evaluator_runs_the_sample_in_both_forms() -> None:
    samples = sample_trajectories()
    assert samples["sample_lazy"] == samples["sample"]
    assert all(isinstance(step[6], LazyValue) for step in samples["sample_lazy"].tool_calls)

    from evaluators.base import Evaluator, EvaluatorConfig, NoCriteria

    class ReadsTheTuple(Evaluator[NoCriteria, EvaluatorConfig]):
        """Takes steps apart and asks isinstance of the raw field: wrong on lazy steps."""

        id = "reads_the_tuple"

        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> BooleanResult:
            fields = [tuple(step) for step in trajectory.tool_calls]
            return BooleanResult(value=all(isinstance(f[6], dict) for f in fields))

    report = check_evaluator(ReadsTheTuple, raise_on_problems=False)
    assert any("lazily parsed sample" in problem for problem in report.problems)

    class ReadsTheAttribute(ReadsTheTuple):
        id = "reads_the_attribute"

        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> BooleanResult:
            return BooleanResult(value=all(isinstance(s.args, dict) for s in trajectory.tool_calls))

    good = check_evaluator(ReadsTheAttribute)
    assert good.results["sample"] == good.results["sample_lazy"] == BooleanResult(value=True)
