"""Evaluators that need what the trace did not record report the gap, never a failure."""

from __future__ import annotations

from evaluators.gaps import GAP_ERROR, gap_error, setting_for
from evaluators.results import ErrorResult, NumericResult
from evaluators.runner import EvaluationRunner
from evaluators.spec import build_spec
from evaluators.testing import TrajectoryBuilder

SPEC = build_spec(
    {
        "id": "refund",
        "reference": {"trajectory": [{"tool": "refund", "args": {"invoice_id": 9}}]},
        "evaluators": [
            "tool_args_match",
            "trajectory_recall",
            {"name": "trajectory_precision", "config": {"args": "ignore"}},
            {"name": "response_contains", "criteria": {"contains": ["done"]}},
        ],
    }
)


def outcomes(builder: TrajectoryBuilder) -> dict[str, object]:
    trajectory = builder.build()
    with EvaluationRunner() as runner:
        return {o.evaluator: o for o in runner.run(trajectory, SPEC.bound)}


def test_without_recorded_arguments_argument_checks_report_the_gap() -> None:
    builder = TrajectoryBuilder("refund 9").tool("refund", None).output("done")
    found = outcomes(builder.gaps("tool_args", conventions=("openinference",)))
    for evaluator in ("tool_args_match", "trajectory_recall"):  # both compare arguments
        outcome = found[evaluator]
        assert isinstance(outcome.result, ErrorResult) and outcome.passed is None  # type: ignore[attr-defined]
        assert outcome.result.error == GAP_ERROR  # type: ignore[attr-defined]
        assert outcome.result.explanation.startswith(  # type: ignore[attr-defined]
            "tool arguments not recorded by this instrumentation: do not hide inputs"
        )
    # Names only, and the answer: nothing missing, real verdicts.
    assert isinstance(found["trajectory_precision"].result, NumericResult)  # type: ignore[attr-defined]
    assert found["response_contains"].passed is True  # type: ignore[attr-defined]


def test_the_same_checks_run_when_arguments_were_recorded() -> None:
    found = outcomes(TrajectoryBuilder("refund 9").tool("refund", {"invoice_id": 9}).output("x"))
    assert found["tool_args_match"].result.score == 1.0  # type: ignore[attr-defined]
    assert found["response_contains"].passed is False  # type: ignore[attr-defined]


def test_a_missing_answer_is_no_failed_answer() -> None:
    found = outcomes(TrajectoryBuilder("refund 9").tool("refund", {"invoice_id": 9}).gaps("output"))
    assert found["response_contains"].passed is None  # type: ignore[attr-defined]
    assert found["tool_args_match"].result.score == 1.0  # type: ignore[attr-defined]


def test_each_gap_names_the_setting_of_the_instrumentation_in_use() -> None:
    assert "TRACELOOP_TRACE_CONTENT" in setting_for(("traceloop",), "tool_args")
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in setting_for((), "content")
    assert "conversation id" in setting_for(("otel_genai",), "session_id")
    trajectory = TrajectoryBuilder("q").gaps("input", "output").build()
    assert gap_error(trajectory, ["input", "output"]).details == {
        "gaps": ["input", "output"],
        "conventions": [],
    }


def test_the_genai_content_setting_names_the_log_records_content_goes_to() -> None:
    # Elastic EDOT and openai-v2 on the latest conventions capture content as log
    # records: a span file alone lacks it with the setting on.
    assert "OTLP log records" in setting_for(("otel_genai",), "content")
    assert "OTLP log records" not in setting_for(("strands",), "content")  # span events
    assert "OTLP log records" not in setting_for(("traceloop",), "content")


def test_a_missing_input_with_content_captured_is_not_a_content_setting() -> None:
    recorded = setting_for(("openinference",), "input", content_recorded=True)
    assert recorded.startswith("content capture is on") and "HIDE" not in recorded
    assert "HIDE" in setting_for(("openinference",), "input")  # content not recorded
    assert "HIDE" in setting_for(("openinference",), "tool_args", content_recorded=True)
    assert setting_for(("otel_genai",), "duplicate_instrumentation").startswith("informational")


def test_without_model_calls_the_hint_adds_a_model_client_instrumentation() -> None:
    # An instrumentation of the agent and its tools only (AutoGen's) may have no setting
    # that records text: the hint says what does, beside the convention's own setting.
    hint = setting_for(("otel_genai",), "tool_args", model_calls=False)
    assert hint.startswith("enable message content capture")
    assert "instrument the model client as well" in hint
    assert "instrument the model client" not in setting_for(("otel_genai",), "tool_args")
    assert "instrument the model client" not in setting_for(
        ("otel_genai",), "session_id", model_calls=False
    )
    tools_only = TrajectoryBuilder(None).tool("refund", None).gaps("tool_args", "content").build()
    explanation = gap_error(tools_only, ["tool_args"]).explanation
    assert "instrument the model client as well" in explanation
    with_model = TrajectoryBuilder(None).llm().tool("refund", None).gaps("tool_args").build()
    assert "instrument the model client" not in gap_error(with_model, ["tool_args"]).explanation


TOOL_JUDGES = build_spec(
    {
        "id": "tools",
        "reference": {"trajectory": [{"tool": "refund"}]},
        "evaluators": [
            "trajectory_exact_match",
            "trajectory_recall",
            "tool_args_match",
            "tool_error_rate",
            "repeated_calls",
            {"name": "max_calls_per_tool", "criteria": {"limit": 1}},
            {"name": "forbidden_tools", "criteria": {"tools": ["delete_account"]}},
            {"name": "essential_tools_present", "criteria": {"tools": ["refund"]}},
            {"name": "tool_order", "criteria": {"constraints": ["lookup before refund"]}},
            {"name": "trajectory_single_tool_use", "criteria": {"tool": "refund"}},
            {"name": "max_steps", "criteria": {"limit": 3}},
            {"name": "max_steps", "id": "model_calls", "config": {"step_kinds": ["llm"]},
             "criteria": {"limit": 3}},
            {"name": "max_latency", "id": "run_only", "criteria": {"run": 30}},
            {"name": "max_latency", "id": "per_step", "criteria": {"per_step": 5}},
            {"name": "response_contains", "criteria": {"contains": ["done"]}},
        ],
    }
)  # fmt: skip


def test_tools_that_ran_unrecorded_leave_every_tool_check_without_a_verdict() -> None:
    trajectory = TrajectoryBuilder("refund 9").llm().output("done").gaps("tool_calls").build()
    with EvaluationRunner() as runner:
        found = {o.item or o.evaluator: o for o in runner.run(trajectory, TOOL_JUDGES.bound)}
    judged = {"model_calls", "run_only", "response_contains"}
    for name, outcome in found.items():
        if name in judged:
            assert outcome.passed is True, name
            continue
        assert outcome.passed is None and outcome.result.error == GAP_ERROR, name  # type: ignore[attr-defined]
        assert outcome.result.details["gaps"][0] == "tool_calls", name  # type: ignore[attr-defined]
    assert len(found) == 15
    hint = found["trajectory_recall"].result.explanation  # type: ignore[attr-defined]
    assert hint.startswith("the tool calls that ran (their names, arguments and order) not")
    assert "instrument the tools' execution" in hint


def test_tool_calls_are_needed_only_where_the_step_kinds_count_tools() -> None:
    spec = build_spec(
        {
            "id": "hand-overs",
            "reference": {
                "trajectory": [{"name": "handoff", "kind": "control", "args": {"to": "x"}}]
            },
            "evaluators": [
                {"name": "tool_args_match", "config": {"step_kinds": ["control"]}},
                {"name": "trajectory_recall", "config": {"step_kinds": ["control"]}},
                {"name": "tool_order", "config": {"step_kinds": ["control"]},
                 "criteria": {"constraints": ["handoff before handoff"]}},
            ],
        }
    )  # fmt: skip
    for bound in spec.bound:
        assert "tool_calls" not in bound.evaluator.needs(bound.criteria), bound.id
    tools = build_spec({"id": "t", "reference": {"trajectory": [{"tool": "refund"}]},
                        "evaluators": ["tool_args_match"]})  # fmt: skip
    assert "tool_calls" in tools.bound[0].evaluator.needs(tools.bound[0].criteria)


def test_an_untimed_tool_call_leaves_step_limits_without_a_verdict() -> None:
    """A call rebuilt from the model's messages has no duration (its 0 s is no evidence):
    step limits answer the gap; the run's own limit, and every other check, still judge."""
    trajectory = (
        TrajectoryBuilder("refund 9").llm().tool("refund", {"invoice_id": 9}, duration_s=0.0)
        .llm().output("done").gaps("tool_timings").build()
    )  # fmt: skip
    with EvaluationRunner() as runner:
        found = {o.item or o.evaluator: o for o in runner.run(trajectory, TOOL_JUDGES.bound)}
    assert found["per_step"].passed is None
    assert found["per_step"].result.details["gaps"] == ["tool_timings"]  # type: ignore[attr-defined]
    assert "instrument the tools' execution" in found["per_step"].result.explanation  # type: ignore[attr-defined]
    others = [o for name, o in found.items() if name != "per_step"]
    assert len(others) == 14 and all(getattr(o.result, "error", None) is None for o in others)


def test_model_call_counts_need_the_model_calls_recorded() -> None:
    trajectory = TrajectoryBuilder("refund 9").tool("refund", {"invoice_id": 9}).output("done")
    trajectory = trajectory.gaps("model_calls").build()
    with EvaluationRunner() as runner:
        found = {o.item or o.evaluator: o for o in runner.run(trajectory, TOOL_JUDGES.bound)}
    assert found["model_calls"].result.details["gaps"] == ["model_calls"]  # type: ignore[attr-defined]
    assert "instrument the model client" in found["model_calls"].result.explanation  # type: ignore[attr-defined]
    judged = [o for name, o in found.items() if name != "model_calls"]
    assert all(getattr(o.result, "error", None) is None for o in judged)


def test_untimed_tool_calls_leave_limits_on_model_calls_judged() -> None:
    """(A review's finding: a per-step limit on model calls needs no tool timings.)"""
    limit = {"name": "max_latency", "config": {"step_kinds": ["llm"]}, "criteria": {"per_step": 5}}
    spec = build_spec({"id": "m", "evaluators": [limit]})
    trajectory = TrajectoryBuilder("x").llm().tool("refund", {}).llm().output("done")
    with EvaluationRunner() as runner:
        (outcome,) = runner.run(trajectory.gaps("tool_timings").build(), spec.bound)
    assert outcome.passed is True


def test_untimed_model_calls_leave_limits_on_model_calls_without_a_verdict() -> None:
    """Model calls rebuilt from a transcript (rule 80) have no duration: a per-step limit
    over model steps answers the gap; limits on named tools do not need it."""
    limit = {"name": "max_latency", "config": {"step_kinds": ["llm"]}, "criteria": {"per_step": 5}}
    tools = {"name": "max_latency", "id": "tools", "criteria": {"tools": {"refund": 5}}}
    spec = build_spec({"id": "m", "evaluators": [limit, tools]})
    trajectory = TrajectoryBuilder("x").llm().tool("refund", {}).llm().output("done")
    with EvaluationRunner() as runner:
        found = runner.run(trajectory.gaps("model_timings").build(), spec.bound)
    by_id = {o.item or o.evaluator: o for o in found}
    assert by_id["max_latency"].passed is None
    assert by_id["max_latency"].result.details["gaps"] == ["model_timings"]  # type: ignore[attr-defined]
    assert "instrument the model client" in by_id["max_latency"].result.explanation  # type: ignore[attr-defined]
    assert by_id["tools"].passed is True


def test_without_any_call_recorded_the_tool_calls_hint_says_so() -> None:
    assert "neither a model call nor a tool call" in setting_for(
        ("mlflow",), "tool_calls", model_calls=False
    )
    assert setting_for(("mlflow",), "tool_calls").startswith("the model was sent tool results")
