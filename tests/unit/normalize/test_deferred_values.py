"""Deferred tool arguments and results (ADR 0019): deferring never changes a trajectory.

``results.can_defer`` and ``arguments.can_defer`` decide, without parsing, that text can
only give a value (no error, call id, envelope); the step then holds a ``LazyValue``.
Checked here against the eager parsers on hand-picked and generated texts, and on
whole traces: a lazily built trajectory reads exactly as the eager one.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from support.span_kit import TRACE_ID, genai_agent, genai_chat, genai_tool, run

from collector.core.records import CompletionReason, Span, Trace
from collector.normalize import normalize
from collector.normalize.arguments import can_defer as can_defer_arguments
from collector.normalize.arguments import parse_arguments
from collector.normalize.results import can_defer, load_value, may_be_none, parse_result
from evaluators.lazy import LazyValue
from evaluators.trajectory import Step, Trajectory

HAND_PICKED = [
    "",
    "   ",
    "null",
    "NaN",
    '{"a": [1, 2,]}',
    '{"a": "trunc',
    '"a\\u0000b"',
    "Comfortably Numb",
    '{"total": 1.98, "currency": "EUR"}',
    '{"note": "the error was fixed", "retry": true}',
    '{"note": "alpha error"}',  # "error" closing a value: may be a status, parsed
    '{"status": "error", "error_message": "boom"}',
    '{"error": "not found"}',
    '{"is_error": true, "content": "boom"}',
    '{"isError": true, "content": [{"type": "text", "text": "boom"}]}',
    '[{"text": "{\\"status\\": \\"error\\"}"}]',
    '[{"text": "\\n  StoreError: no such invoice"}]',
    '[{"type": "text", "text": "Error executing tool refund: expired"}]',
    '{"output": "Error: boom"}',
    '{"output": {"type": "tool", "tool_call_id": "c1", "content": "ok"}}',
    '{"lc": 1, "type": "constructor", "id": ["ToolMessage"], "kwargs": {"status": "error"}}',
    "Error: refund window expired",
    "  ValueError - bad input",
    "RuntimeException: boom",
    "ERROR: disk full",
    "No error here",
    "{'status': 'error', 'error_message': 'x'}",
    "ToolResult(status='error', content='x')",
    "ToolResult(is_error=True, content='x')",
    '"\\u0045rror: hidden by an escape"',
    '{"\\u0065rror": "x"}',
    '{"output": null}',
    '[{"json": null}]',
    '{"a": "x\\\\"}',
    '{"kwargs": {"tool_call_id": "c9", "a": 1}}',
    '{"input": {"q": "x"}, "config": {}}',
    '{"input_str": "{\'q\': 1}", "inputs": {"q": 1}}',
    '{"q": "Comfortably',  # truncated
    "{'track_name': 'Money'}",
]

_WORDS = [
    "error", "Error", "ERROR", "Exception", "StoreError", "is_error", "isError", "status",
    "tool_call_id", "output", "kwargs", "input", "inputs", "text", "type", "content", "lc",
    "json", "result", "message", "ok", "note", "alpha", "null", "None", "Error:", "ERROR -",
    "\n", " ", "\t", ":", "-", "'", '"', "\\", "é", "ToolMessage", "tool",
]  # fmt: skip


def _random_value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return "".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 4)))
    if roll < 0.45:
        return rng.choice([None, True, False, 0, 1.5, 42])
    if roll < 0.6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if roll < 0.7:
        return json.dumps(_random_value(rng, depth + 1))  # JSON inside a string
    keys = [rng.choice(_WORDS) for _ in range(rng.randint(0, 4))]
    return {key: _random_value(rng, depth + 1) for key in keys}


def _generated(count: int) -> list[str]:
    rng = random.Random(16)
    texts: list[str] = []
    for _ in range(count):
        value = _random_value(rng, 0)
        text = json.dumps(value, ensure_ascii=rng.random() < 0.2)
        form = rng.random()
        if form < 0.15:
            text = repr(value)  # a Python repr
        elif form < 0.25:
            text = text[: rng.randint(0, len(text))]  # truncated
        elif form < 0.3 and isinstance(value, str):
            text = value  # plain text
        texts.append(text)
    return texts


CORPUS = HAND_PICKED + _generated(4000)


def test_a_deferred_result_reports_no_error_or_call_id_and_keeps_its_value() -> None:
    deferred = 0
    for text in CORPUS:
        if not can_defer(text, call_id_known=False):
            continue
        deferred += 1
        eager = parse_result(text)
        assert eager.error is None and eager.call_id is None, text
        assert can_defer(text, call_id_known=True)
        assert repr(load_value(text)) == repr(eager.value), text
        if not may_be_none(text):
            assert eager.value is not None, text
    assert deferred > len(CORPUS) // 4  # the check is not vacuous


@pytest.mark.parametrize(
    "text",
    [
        '{"note": "alpha error"}',
        '{"status": "error"}',
        '[{"text": "\\n  StoreError: no such invoice"}]',
        "Error: x",
        '"\\u0045rror: x"',
        '{"output": {"tool_call_id": "c1"}}',
    ],
)
def test_results_that_may_report_an_error_or_id_are_parsed_at_once(text: str) -> None:
    assert not can_defer(text, call_id_known=False)


def test_deferred_arguments_give_an_object_or_a_bare_value_only() -> None:
    deferred = 0
    for text in CORPUS:
        if not can_defer_arguments(text):
            continue
        deferred += 1
        eager = parse_arguments(text)
        assert eager.value is not None, text  # so raw_args stays the text
        assert isinstance(eager.value, dict) or (eager.bare and eager.value == text), text
    assert deferred > 50


def _tool_step(arguments: str, result: str, **extra: Any) -> Step:
    calls = [{"id": "c1", "name": "lookup", "arguments": {"q": 1, "r": 2}}]
    trajectory = run(
        genai_agent(),
        genai_chat(2, calls),
        genai_tool(
            3, "lookup", arguments, call_id="c1", **{"gen_ai.tool.call.result": result}, **extra
        ),
    )
    [step] = trajectory.tool_calls
    found: Step = step
    return found


def test_steps_hold_lazy_values_that_read_as_the_eager_ones() -> None:
    step = _tool_step('{"invoice_id": 1042}', '{"total": 1.98, "items": [1, 2]}')
    assert isinstance(step[6], LazyValue) and isinstance(step[7], LazyValue)
    assert step.args == {"invoice_id": 1042} and step.result == {"total": 1.98, "items": [1, 2]}
    assert step.raw_args == '{"invoice_id": 1042}'


def _unread(*spans: Span) -> Trajectory:
    """The trajectory of ``spans``, nothing read (``run`` serializes it)."""
    return normalize(Trace(TRACE_ID, spans, CompletionReason.END_OF_INPUT, 0, 0))


def test_gaps_are_found_without_parsing() -> None:
    trajectory = _unread(
        genai_agent(),
        genai_chat(2, [{"id": "c1", "name": "lookup", "arguments": {"q": 1}}]),
        genai_tool(3, "lookup", '{"q": 1}', call_id="c1", **{"gen_ai.tool.call.result": "[1]"}),
    )
    [step] = trajectory.tool_calls
    assert "tool_args" not in trajectory.gaps and "tool_results" not in trajectory.gaps
    assert isinstance(step[7], LazyValue) and not step[6].loaded and not step[7].loaded
    nothing = _unread(
        genai_agent(),
        genai_chat(2, [{"id": "c1", "name": "lookup", "arguments": {"q": 1}}]),
        genai_tool(3, "lookup", '{"q": 1}', call_id="c1", **{"gen_ai.tool.call.result": "null"}),
    )
    assert "tool_results" in nothing.gaps  # a lazy null is parsed to tell


def test_a_truncated_deferred_argument_is_bound_to_the_single_parameter() -> None:
    schema = json.dumps({"type": "object", "properties": {"query": {"type": "string"}}})
    trajectory = run(
        genai_agent(),
        genai_tool(3, "lookup", '{"q": "Comfortably', call_id="c1", **{"tool.parameters": schema}),
    )
    [step] = trajectory.tool_calls
    assert isinstance(step[6], LazyValue)
    assert step.args == {"query": '{"q": "Comfortably'}


@pytest.mark.parametrize(
    ("requested", "expected"),
    [({"q": 1}, {"q": 1}), ({"kwargs": {"q": 1}}, {"kwargs": {"q": 1}})],
    ids=["envelope", "a-parameter-named-kwargs"],
)
def test_a_deferred_envelope_is_unwrapped_unless_the_model_asked_for_it(
    requested: dict[str, Any], expected: dict[str, Any]
) -> None:
    trajectory = _unread(
        genai_agent(),
        genai_chat(2, [{"id": "c1", "name": "lookup", "arguments": requested}]),
        genai_tool(3, "lookup", '{"kwargs": {"q": 1}}', call_id="c1"),
    )
    [step] = trajectory.tool_calls
    assert isinstance(step[6], LazyValue) and step.args == expected
    assert step.raw_args == '{"kwargs": {"q": 1}}'


def test_without_its_own_call_id_a_tool_span_is_parsed_at_once() -> None:
    trajectory = _unread(
        genai_agent(),
        genai_tool(3, "lookup", '{"kwargs": {"q": 1}, "tool_call_id": "c7"}', call_id=None),
    )
    [step] = trajectory.tool_calls
    assert not isinstance(step[6], LazyValue) and step.call_id == "c7"
