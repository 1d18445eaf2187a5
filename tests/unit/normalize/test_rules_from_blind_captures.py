"""The general rules two blind captures called for (smolagents and LlamaIndex, each first
read by evald without any rule of its own): from the captures, and from minimal traces
that show each rule holds by structure and evidence, not by the framework's names."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.captures import captured
from support.span_kit import genai_agent, genai_chat, genai_tool, oi, run

from collector.normalize.arguments import parse_arguments
from collector.normalize.results import parse_result
from evaluators.trajectory import StepKind

REQUEST = {"customer_id": 17, "invoice_id": 1042}

# --- a recorded Python call, with the recorder's own flags beside it ------------------------


def test_smolagents_capture_arguments_come_out_of_the_call_and_the_answer_is_the_output() -> None:
    trajectory = captured("smolagents-openinference", "correct")
    first = trajectory.tool_calls[0]
    assert (first.name, first.args) == ("lookup_invoice", REQUEST)
    assert first.raw_args is not None and '"sanitize_inputs_outputs"' in first.raw_args
    (answer,) = trajectory.steps_of([StepKind.CONTROL])
    assert answer.name == "final_answer" and trajectory.output == answer.args["answer"]


@pytest.mark.parametrize(
    "recorded",
    [
        '{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"a": 1}}',
        '{"args": [], "kwargs": {"a": 1}, "trace": null, "mode": "fast", "retries": 2}',
    ],
)
def test_flags_beside_an_explicit_empty_args_list_are_no_arguments(recorded: str) -> None:
    assert parse_arguments(recorded).value == {"a": 1}


@pytest.mark.parametrize(
    "recorded",
    [
        '{"kwargs": {"a": 1}, "verbose": true}',  # no explicit ``args``: maybe a parameter
        '{"args": [], "kwargs": {"a": 1}, "options": {"x": 1}}',  # not a flag
        '{"args": [2], "kwargs": {"a": 1}, "flag": true}',  # positional arguments
    ],
)
def test_other_keys_beside_kwargs_keep_the_whole_object(recorded: str) -> None:
    assert parse_arguments(recorded).value == json.loads(recorded)


def test_the_model_request_picks_the_arguments_out_of_any_envelope() -> None:
    recorded = json.dumps({"kwargs": REQUEST, "context": {"run": 7}})
    request = [{"id": "c1", "name": "lookup_invoice", "arguments": REQUEST}]
    trajectory = run(
        genai_agent(),
        genai_chat(2, request),
        genai_tool(3, "lookup_invoice", recorded, call_id="c1"),
    )
    (step,) = trajectory.tool_calls
    assert step.args == REQUEST and step.raw_args == recorded


def test_without_the_request_an_unknown_envelope_is_kept_whole() -> None:
    recorded = json.dumps({"kwargs": REQUEST, "context": {"run": 7}})
    trajectory = run(genai_agent(), genai_tool(3, "lookup_invoice", recorded, call_id="c1"))
    assert trajectory.tool_calls[0].args == json.loads(recorded)


# --- a model call recorded twice side by side: a preparation span, then the call ------------

PREPARATION = {"llm.model_name": "m", "input.value": '{"tools": ["<FunctionTool>"]}'}
CALL = {"llm.model_name": "m", "llm.token_count.prompt": 70, "llm.token_count.completion": 9}


def test_llamaindex_capture_has_one_model_step_per_call_and_its_input() -> None:
    trajectory = captured("llamaindex-openinference", "correct")
    assert len(trajectory.steps_of([StepKind.LLM])) == 4  # the scenario's four model calls
    assert trajectory.input is not None and trajectory.input.startswith("Hi, I'm customer 17")
    assert "duplicate_instrumentation" in trajectory.gaps


def test_a_model_span_recording_nothing_of_a_call_is_the_next_calls_preparation() -> None:
    trajectory = run(
        oi(1, "agent", "AGENT"),
        oi(2, "step", "CHAIN", parent=1),
        oi(3, "prepare", "LLM", parent=2, **PREPARATION),
        oi(4, "chat", "LLM", parent=2, **CALL),
    )
    (llm,) = trajectory.steps_of([StepKind.LLM])
    assert llm.span_id == f"{4:016x}" and llm.input_tokens == 70  # the call's own step


@pytest.mark.parametrize(
    ("first", "parent"),
    [
        (CALL, 2),  # both record a call: two calls
        ({**PREPARATION, "llm.model_name": "other"}, 2),  # another model
        (PREPARATION, 1),  # not under the same parent
    ],
    ids=["both-calls", "other-model", "other-parent"],
)
def test_without_that_evidence_two_model_spans_are_two_calls(
    first: dict[str, Any], parent: int
) -> None:
    trajectory = run(
        oi(1, "agent", "AGENT"),
        oi(2, "step", "CHAIN", parent=1),
        oi(3, "prepare", "LLM", parent=parent, **first),
        oi(4, "chat", "LLM", parent=2, **CALL),
    )
    assert len(trajectory.steps_of([StepKind.LLM])) == 2


# --- a record of the whole call around what the tool returned -------------------------------


def test_llamaindex_capture_results_are_what_the_tools_returned() -> None:
    trajectory = captured("llamaindex-openinference", "correct")
    result = trajectory.tool_calls[0].result
    assert isinstance(result, dict) and result["invoice_id"] == 1042 and "blocks" not in result


def test_a_recorded_call_is_unwrapped_to_its_raw_output_and_reports_its_error() -> None:
    envelope = {"blocks": [{"text": "{'a': 1}"}], "tool_name": "t", "raw_input": {}}
    fine = parse_result(json.dumps({**envelope, "raw_output": {"a": 1}, "is_error": False}))
    assert (fine.value, fine.error) == ({"a": 1}, None)
    failed = parse_result(json.dumps({**envelope, "raw_output": "expired", "is_error": True}))
    assert (failed.value, failed.error) == ("expired", "expired")
    plain = {"raw_output": {"a": 1}, "note": "x"}  # no record of the call: a value
    assert parse_result(json.dumps(plain)).value == plain
