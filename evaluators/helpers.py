"""Helpers for evaluator authors: tool calls out of a trajectory, and a trajectory as text.

The evald counterparts of UiPath's ``extract_tool_calls`` / ``_names`` /
``_outputs`` / ``trace_to_str`` (seed 004)::

    from evaluators.helpers import extract_tool_calls

    for call in extract_tool_calls(trajectory, name="refund"):
        amount = call.args.get("amount")

Requested-but-not-executed calls (the run crashed before the tool ran) are left
out unless ``include_requested=True``, as the built-in evaluators do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

from evaluators.trajectory import Step, StepKind, Trajectory

_ALL_KINDS = tuple(StepKind)


class ToolCall(NamedTuple):
    """One tool call: ``args`` is always a dict (a non-object argument is ``{"input": …}``)."""

    name: str
    args: dict[str, Any]
    output: Any
    error: str | None
    call_id: str | None
    executed: bool
    step: Step

    @property
    def failed(self) -> bool:
        return self.error is not None


def extract_tool_calls(
    trajectory: Trajectory, *, name: str | None = None, include_requested: bool = False
) -> list[ToolCall]:
    """The tool calls, in order; only those of tool ``name`` when given."""
    return [
        _tool_call(step)
        for step in trajectory.tool_calls
        if (step.executed or include_requested) and (name is None or step.name == name)
    ]


def extract_tool_call_names(
    trajectory: Trajectory, *, include_requested: bool = False
) -> list[str]:
    """The names of the tool calls, in order, repeats kept."""
    calls = extract_tool_calls(trajectory, include_requested=include_requested)
    return [call.name for call in calls]


def extract_tool_call_args(trajectory: Trajectory, name: str | None = None) -> list[dict[str, Any]]:
    """The arguments of the executed tool calls (of tool ``name`` when given)."""
    return [call.args for call in extract_tool_calls(trajectory, name=name)]


def extract_tool_call_outputs(trajectory: Trajectory, name: str | None = None) -> list[Any]:
    """The results of the executed tool calls (None for a call that failed)."""
    return [call.output for call in extract_tool_calls(trajectory, name=name)]


def first_tool_call(trajectory: Trajectory, name: str | None = None) -> ToolCall | None:
    """The first executed tool call (of tool ``name``), or None."""
    calls = extract_tool_calls(trajectory, name=name)
    return calls[0] if calls else None


def trajectory_to_text(
    trajectory: Trajectory,
    *,
    kinds: Iterable[StepKind] = _ALL_KINDS,
    max_value_chars: int = 500,
) -> str:
    """A readable rendering for prompts, logs and explanations; values clipped.

    Example::

        input: Please refund invoice 1042
        1. tool lookup_invoice({"invoice_id": 1042}) -> {"total": 2.97}
        2. tool refund({"invoice_id": 1042}) !! error: RefundWindowExpired
        output: Sorry, I can't refund it.
    """
    lines = [f"input: {_clip(trajectory.input, max_value_chars)}"]
    for number, step in enumerate(trajectory.steps_of(kinds), start=1):
        lines.append(f"{number}. {_step_text(step, max_value_chars)}")
    lines.append(f"output: {_clip(trajectory.output, max_value_chars)}")
    if trajectory.failed:
        lines.append(f"run failed: {_clip(trajectory.error, max_value_chars)}")
    return "\n".join(lines)


def _tool_call(step: Step) -> ToolCall:
    args = (
        step.args
        if isinstance(step.args, dict)
        else ({} if step.args is None else {"input": step.args})
    )
    output = None if step.error is not None else step.result
    return ToolCall(step.name, args, output, step.error, step.call_id, step.executed, step)


def _step_text(step: Step, limit: int) -> str:
    if step.kind is StepKind.LLM:
        return f"llm {step.model or step.name}"
    if step.kind is not StepKind.TOOL:
        return f"{step.kind.value} {step.name}"
    text = f"tool {step.name}({_clip(_json(step.args), limit)})"
    if not step.executed:
        return text + " (requested, never ran)"
    if step.error is not None:
        return f"{text} !! error: {_clip(step.error, limit)}"
    return f"{text} -> {_clip(_json(step.result), limit)}"


def _json(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def _clip(text: str | None, limit: int) -> str:
    if text is None:
        return "(none)"
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"
