"""The custom evaluator API: models from type parameters, type mismatches rejected at
load, evaluator ids unique across specs, the authors' helpers, the trajectory builder
and the contract check."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from evaluators import BooleanResult, Criteria, Evaluator, EvaluatorConfig, NumericResult
from evaluators.base import NoCriteria, declared_models
from evaluators.helpers import (
    extract_tool_call_args,
    extract_tool_call_names,
    extract_tool_call_outputs,
    extract_tool_calls,
    first_tool_call,
    trajectory_to_text,
)
from evaluators.registry import EvaluatorLoadError, validate_evaluator_class
from evaluators.results import ErrorResult
from evaluators.runner import EvaluationRunner
from evaluators.spec import SpecError, load_specs
from evaluators.testing import EvaluatorContractError, TrajectoryBuilder, check_evaluator
from evaluators.trajectory import StepKind, Trajectory


class LimitCriteria(Criteria):
    limit: int


class StrictConfig(EvaluatorConfig):
    strict: bool = False


class OtherCriteria(Criteria):
    other: str = ""


class MaxToolCalls(Evaluator[LimitCriteria, StrictConfig]):
    """Models come from the type parameters."""

    id = "api_max_tool_calls"

    def evaluate(self, trajectory: Trajectory, criteria: LimitCriteria) -> BooleanResult:
        return BooleanResult(value=len(trajectory.tool_calls) <= criteria.limit)


class AsyncShare(Evaluator[NoCriteria, EvaluatorConfig]):
    id = "api_async_share"

    async def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        await asyncio.sleep(0)
        failed = sum(1 for step in trajectory.tool_calls if step.error)
        return NumericResult(score=failed / max(len(trajectory.tool_calls), 1))


def refund_run() -> Trajectory:
    return (
        TrajectoryBuilder("Refund invoice 1042", service="shop", agent="support")
        .agent("refund_agent")
        .llm("gpt-test", input_tokens=10, output_tokens=5)
        .tool("lookup_invoice", {"invoice_id": 1042}, result={"total": 0.99}, call_id="c1")
        .tool("lookup_invoice", "1043", result="not found")
        .requested("refund", {"invoice_id": 1042})
        .tool("refund", {"invoice_id": 1042}, error="RefundWindowExpired")
        .output("Sorry.")
        .failed("gave up")
        .attribute("eval.case.id", "r-1")
        .resource("service.version", "1.2")
        .session("s-1")
        .build()
    )


def test_models_come_from_the_type_parameters() -> None:
    assert MaxToolCalls.criteria_model is LimitCriteria
    assert MaxToolCalls.config_model is StrictConfig
    assert declared_models(MaxToolCalls) == (LimitCriteria, StrictConfig)
    evaluator = MaxToolCalls.build({"strict": True})
    assert isinstance(evaluator.config, StrictConfig) and evaluator.config.strict


def test_mismatched_models_are_rejected_at_load() -> None:
    class WrongCriteria(Evaluator[LimitCriteria, EvaluatorConfig]):
        id = "wrong_criteria"
        criteria_model = OtherCriteria

        def evaluate(self, trajectory: Trajectory, criteria: LimitCriteria) -> BooleanResult:
            return BooleanResult(value=True)

    class WrongConfig(Evaluator[NoCriteria, StrictConfig]):
        id = "wrong_config"
        config_model = EvaluatorConfig

        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> BooleanResult:
            return BooleanResult(value=True)

    class WrongAnnotation(Evaluator[LimitCriteria, EvaluatorConfig]):
        id = "wrong_annotation"

        def evaluate(self, trajectory: Trajectory, criteria: OtherCriteria) -> BooleanResult:  # type: ignore[override]
            return BooleanResult(value=True)

    cases = {
        WrongCriteria: "criteria_model is OtherCriteria but the class is declared over "
        "LimitCriteria",
        WrongConfig: "config_model is EvaluatorConfig but the class is declared over StrictConfig",
        WrongAnnotation: "evaluate() takes criteria of type OtherCriteria but criteria_model "
        "is LimitCriteria",
    }
    for cls, message in cases.items():
        with pytest.raises(EvaluatorLoadError) as info:
            validate_evaluator_class(cls, cls.__name__)
        assert f"type inconsistency in {cls.__name__}: {message}" in str(info.value)


def test_subclass_models_and_generic_bases_are_consistent() -> None:
    class Refined(LimitCriteria):
        pass

    class Narrower(MaxToolCalls):
        id = "narrower"
        criteria_model = Refined

    assert validate_evaluator_class(Narrower, "n") is Narrower
    assert Narrower.config_model is StrictConfig  # inherited, not re-derived


def test_a_default_id_must_name_one_class_across_specs(tmp_path: Path) -> None:
    (tmp_path / "recall.py").write_text(
        textwrap.dedent(
            """
            from evaluators import Evaluator, NoCriteria, EvaluatorConfig, NumericResult

            class FakeRecall(Evaluator[NoCriteria, EvaluatorConfig]):
                id = "trajectory_recall"

                def evaluate(self, trajectory, criteria):
                    return NumericResult(score=1.0)
            """
        )
    )
    (tmp_path / "a.yaml").write_text(
        "id: a\nreference: {trajectory: [x]}\nevaluators: [trajectory_recall]\n"
    )
    (tmp_path / "b.yaml").write_text('id: b\nevaluators: ["file://recall.py:FakeRecall"]\n')
    with pytest.raises(SpecError) as info:
        load_specs([tmp_path])
    [problem] = info.value.problems
    assert str(problem).startswith(f"{tmp_path / 'b.yaml'}:2: evaluators[0].name: evaluator id ")
    assert "'trajectory_recall' already names TrajectoryRecall in" in str(problem)
    assert "give this entry an `id`" in str(problem)
    (tmp_path / "b.yaml").write_text(
        'id: b\nevaluators: [{name: "file://recall.py:FakeRecall", id: fake_recall}]\n'
    )
    assert load_specs([tmp_path]).ids == ("a", "b")


def test_helpers_extract_tool_calls() -> None:
    trajectory = refund_run()
    calls = extract_tool_calls(trajectory)
    assert [(c.name, c.args, c.output, c.failed) for c in calls] == [
        ("lookup_invoice", {"invoice_id": 1042}, {"total": 0.99}, False),
        ("lookup_invoice", {"input": "1043"}, "not found", False),
        ("refund", {"invoice_id": 1042}, None, True),
    ]
    assert calls[0].call_id == "c1" and calls[2].error == "RefundWindowExpired"
    assert extract_tool_call_names(trajectory) == ["lookup_invoice", "lookup_invoice", "refund"]
    requested = extract_tool_call_names(trajectory, include_requested=True)
    assert requested == ["lookup_invoice", "lookup_invoice", "refund", "refund"]
    assert extract_tool_call_args(trajectory, "refund") == [{"invoice_id": 1042}]
    assert extract_tool_call_outputs(trajectory, "lookup_invoice") == [{"total": 0.99}, "not found"]
    assert first_tool_call(trajectory, "refund") == calls[2]
    assert first_tool_call(TrajectoryBuilder().build()) is None


def test_trajectory_as_text() -> None:
    assert trajectory_to_text(refund_run(), max_value_chars=14) == "\n".join(
        [
            "input: Refund invoic…",  # 14 characters, the ellipsis included
            "1. agent refund_agent",
            "2. llm gpt-test",
            '3. tool lookup_invoice({"invoice_id"…) -> {"total": 0.9…',
            "4. tool lookup_invoice(1043) -> not found",
            '5. tool refund({"invoice_id"…) (requested, never ran)',
            '6. tool refund({"invoice_id"…) !! error: RefundWindowE…',
            "output: Sorry.",
            "run failed: gave up",
        ]
    )
    only_tools = trajectory_to_text(
        TrajectoryBuilder(None).tool("a").build(), kinds=[StepKind.TOOL]
    )
    assert only_tools == "input: (none)\n1. tool a() -> \noutput: (none)"


def test_the_builder_makes_a_complete_deterministic_trajectory() -> None:
    trajectory = refund_run()
    assert trajectory == refund_run()  # same trace id, times and span ids every time
    assert [s.kind for s in trajectory.steps] == [
        StepKind.AGENT, StepKind.LLM, StepKind.TOOL, StepKind.TOOL, StepKind.TOOL, StepKind.TOOL
    ]  # fmt: skip
    assert [s.start_unix_nano for s in trajectory.steps] == sorted(
        s.start_unix_nano for s in trajectory.steps
    )
    assert len({s.span_id for s in trajectory.steps if s.executed}) == 5
    assert trajectory.agents == ("refund_agent",)
    assert (trajectory.input_tokens, trajectory.output_tokens) == (10, 5)
    assert trajectory.failed and trajectory.error == "gave up" and trajectory.session_id == "s-1"
    assert trajectory.attributes == {"eval.case.id": "r-1"}
    assert trajectory.resource_attributes == {"service.name": "shop", "service.version": "1.2"}
    assert trajectory.latency_s == pytest.approx(0.13)
    assert (
        len(trajectory.trace_id) == 32
        and trajectory.trace_id != TrajectoryBuilder().build().trace_id
    )
    with EvaluationRunner() as runner:
        [outcome] = runner.run(trajectory, [_bound(MaxToolCalls, LimitCriteria(limit=2))])
    assert outcome.passed is False  # three executed tool calls


def test_check_evaluator_accepts_a_good_class_sync_or_async() -> None:
    report = check_evaluator(MaxToolCalls, criteria={"limit": 5})
    assert report.ok and report.id == "api_max_tool_calls" and not report.warnings
    assert report.results == {
        "sample": BooleanResult(value=True),
        "sample_lazy": BooleanResult(value=True),  # arguments and results parsed lazily
        "empty": BooleanResult(value=True),
    }
    assert report.criteria_schema is not None and report.criteria_schema["required"] == ["limit"]
    assert report.config_schema is not None and "strict" in report.config_schema["properties"]
    sampled = check_evaluator(MaxToolCalls)  # criteria synthesised from the field types
    assert sampled.results["sample"] == BooleanResult(value=False)  # limit 1, two calls
    async_report = check_evaluator(AsyncShare)
    assert async_report.results["sample"] == NumericResult(score=0.5)


def test_check_evaluator_reports_what_is_wrong() -> None:
    class Raises(Evaluator[NoCriteria, EvaluatorConfig]):
        id = "raises on empty"

        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> BooleanResult:
            return BooleanResult(value=trajectory.steps[0].name == "x")

    class Garbage(Evaluator[NoCriteria, EvaluatorConfig]):
        id = "api_garbage"

        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> BooleanResult:
            return {"score": 1}  # type: ignore[return-value]

    class Hangs(Evaluator[NoCriteria, EvaluatorConfig]):
        id = "api_hangs"

        async def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> ErrorResult:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    class Latency(Evaluator[NoCriteria, EvaluatorConfig]):
        id = "latency"  # a built-in's registered name

        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
            return NumericResult(score=float("inf"))

    raises = check_evaluator(Raises, raise_on_problems=False)
    assert raises.problems == [
        "id 'raises on empty' must not contain blanks (it is a metric label)"
    ]
    assert raises.warnings == [
        "evaluate() raised on the empty trajectory: IndexError: tuple index out of range"
    ]
    with pytest.raises(EvaluatorContractError, match="returned dict, expected NumericResult"):
        check_evaluator(Garbage)
    hangs = check_evaluator(Hangs, timeout_s=0.05, raise_on_problems=False)
    assert hangs.problems[0] == "evaluate() raised on the sample trajectory: TimeoutError: "
    latency = check_evaluator(Latency, raise_on_problems=False)
    assert latency.problems == [
        "id 'latency' is the registered name of another evaluator",
        "evaluate() on the sample trajectory returned a non-finite score inf",
        "evaluate() on the empty trajectory returned a non-finite score inf",
    ]
    assert check_evaluator(object, raise_on_problems=False).problems == [
        "<class 'object'> is not a subclass of evaluators.Evaluator"
    ]
    bad_config = check_evaluator(MaxToolCalls, config={"strict": "maybe"}, raise_on_problems=False)
    assert bad_config.problems == [
        "the config given is invalid: strict: Input should be a valid boolean, unable to "
        "interpret input"
    ]


def _bound(cls: type[Evaluator[LimitCriteria, StrictConfig]], criteria: Criteria):  # type: ignore[no-untyped-def]
    from evaluators.spec_model import BoundEvaluator

    return BoundEvaluator("spec", cls.id, cls.build(), criteria, None)
