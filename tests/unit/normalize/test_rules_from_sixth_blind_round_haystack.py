"""Rules from the sixth round of blind captures (Haystack's own tracer): minimal traces
of the shape a framework's own tracer records under its own namespace (here ``acme.``,
never a real library's): a tool span with ``<ns>.tool.name`` and the call's arguments
as a JSON object, a model span with ``<ns>.llm.input`` / ``<ns>.llm.output`` holding
messages whose content parts are keyed by their kind."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import run, span

from collector.core.records import Span
from collector.decode.common import AttributeSelector
from collector.normalize.attribute_keys import ATTRIBUTE_SELECTOR
from collector.normalize.messages import content_part_calls
from evaluators.trajectory import StepKind, Trajectory

USER = {"role": "user", "content": [{"text": "refund invoice 877"}]}
CALL = {"tool_call": {"tool_name": "lookup", "arguments": {"invoice": 877}, "id": "c1"}}
ASKED = {"role": "assistant", "content": [CALL]}
RESULT = {"tool_call_result": {"result": '{"total": 7}', "origin": CALL["tool_call"]}}
DONE = {"role": "assistant", "content": [{"text": "Invoice 877 totals 7."}]}


def model(n: int, sent: list[Any], reply: dict[str, Any], request: Any = None) -> Span:
    attributes = {
        "acme.step.llm.input": json.dumps({"messages": sent} if request is None else request),
        "acme.step.llm.output": json.dumps({"replies": [reply]}),
    }
    return span(n, "acme.step.llm", attributes, parent=1)


def tool(n: int, arguments: Any = None, **extra: Any) -> Span:
    attributes = {
        "acme.tool.name": "lookup",
        "acme.step.tool.input": json.dumps({"invoice": 877}) if arguments is None else arguments,
        "acme.step.tool.output": '{"total": 7}',
        **extra,
    }
    return span(n, "acme.step.tool", attributes, parent=1)


def turn(*spans: Span) -> Trajectory:
    root = span(1, "acme.agent.run", {}, start=0, end=10**7)
    return run(root, *spans)


def test_the_decoder_keeps_keys_by_their_last_segments_whatever_the_namespace() -> None:
    for key in ("acme.step.llm.input", "x.tool.name", "y.tool.error", "z.tool.output"):
        assert ATTRIBUTE_SELECTOR.wants(key)
    assert not ATTRIBUTE_SELECTOR.wants("acme.step.llm.inputs")
    copy = AttributeSelector(keys=(), prefixes=(), suffixes=(".tool.name",)).extended(keys=("k",))
    assert copy.wants("x.tool.name") and copy.wants("k")


def test_a_tool_span_by_name_and_object_arguments_joins_the_call_the_model_asked_for() -> None:
    trajectory = turn(
        model(2, [USER], ASKED),
        tool(3),
        model(4, [USER, ASKED, {"role": "tool", "content": [RESULT]}], DONE),
    )
    [step] = trajectory.tool_calls
    assert (step.name, step.args, step.result, step.call_id, step.error) == (
        "lookup",
        {"invoice": 877},
        {"total": 7},
        "c1",
        None,
    )
    assert [s.kind for s in trajectory.steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]


def test_input_and_answer_come_from_content_part_messages() -> None:
    trajectory = turn(model(2, [USER], ASKED), tool(3), model(4, [USER, ASKED], DONE))
    assert (trajectory.input, trajectory.output) == ("refund invoice 877", "Invoice 877 totals 7.")


def test_a_requested_call_no_tool_span_ran_is_kept_as_unexecuted() -> None:
    trajectory = turn(model(2, [USER], ASKED), model(4, [USER, ASKED], DONE))
    [step] = trajectory.tool_calls
    assert (step.name, step.call_id, step.executed) == ("lookup", "c1", False)


def test_a_true_tool_error_flag_fails_the_call_with_its_result_as_message() -> None:
    output = {"acme.step.tool.output": "RefundWindowExpired: invoice 877 is too old"}
    failed = tool(3, **output, **{"acme.tool.error": True})
    [step] = turn(model(2, [USER], ASKED), failed, model(4, [USER], DONE)).tool_calls
    assert step.error is not None and "RefundWindowExpired" in step.error


def test_without_the_evidence_the_spans_stay_unread() -> None:
    # The same keys, but arguments that are no object and a "request" that holds no
    # messages: neither span is a call, so the trace has no model or tool step.
    not_a_request = model(2, [], DONE, request={"query": "refund invoice 877"})
    trajectory = turn(not_a_request, tool(3, arguments="877"))
    assert [s.kind for s in trajectory.steps if s.kind in (StepKind.LLM, StepKind.TOOL)] == []
    read = turn(model(2, [USER], DONE), tool(3))  # with the evidence, both are read
    assert [s.kind for s in read.steps] == [StepKind.LLM, StepKind.TOOL]


def test_a_false_error_flag_is_no_error() -> None:
    output = {"acme.step.tool.output": "RefundWindowExpired: invoice 877 is too old"}
    unflagged = tool(3, **output, **{"acme.tool.error": False})
    [step] = turn(model(2, [USER], ASKED), unflagged).tool_calls
    assert step.error is None


def test_content_part_calls_read_both_part_shapes_of_assistant_messages_only() -> None:
    flat = {"type": "tool_call", "id": "c2", "name": "refund", "arguments": '{"line": 1}'}
    messages = [USER | {"content": [CALL]}, {"role": "assistant", "content": [CALL, flat]}]
    calls = content_part_calls({"replies": messages})
    assert [(c.call_id, c.name, c.args) for c in calls] == [
        ("c1", "lookup", {"invoice": 877}),
        ("c2", "refund", {"line": 1}),
    ]


def test_keys_outside_the_span_names_namespace_are_no_evidence() -> None:
    # The same keys on spans whose names are not in their namespace (``other.…``, or a
    # name without a dot): the keys name someone else's data, so nothing is read.
    stranger = model(2, [USER], ASKED)._replace(name="other.llm")
    plain = tool(3)._replace(name="lookup")
    trajectory = turn(stranger, plain)
    assert [s.kind for s in trajectory.steps if s.kind in (StepKind.LLM, StepKind.TOOL)] == []
    read = turn(model(2, [USER], ASKED), tool(3))  # named in their namespace: both are read
    assert [s.kind for s in read.steps] == [StepKind.LLM, StepKind.TOOL]
