"""What of a trajectory a judge gets to see, as JSON-able data within size limits.

The step view follows seed 000 (``i: Action=[tool] returned observation=[…]``)
with the arguments and errors added: ``{"step": i, "kind", "name", "arguments",
"result", "error"}``. Which kinds are shown is the evaluator's ``step_kinds``
(injected from the spec, tools by default).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evaluators.judges.prompt import clip
from evaluators.trajectory import Step, StepKind, Trajectory

NO_ANSWER = "(the agent produced no final answer)"


def step_view(index: int, step: Step, field_chars: int) -> dict[str, Any]:
    view: dict[str, Any] = {"step": index, "kind": step.kind.value, "name": step.name}
    if step.kind is not StepKind.LLM:
        view["arguments"] = clip(step.args, field_chars)
        view["result"] = clip(step.result, field_chars)
    if step.error is not None:
        view["error"] = clip(step.error, field_chars)
    if not step.executed:
        view["executed"] = False
    return view


def steps_view(
    trajectory: Trajectory, kinds: Iterable[StepKind], field_chars: int, max_steps: int
) -> list[dict[str, Any]]:
    """The steps of ``kinds`` in order; beyond ``max_steps`` the middle ones are
    replaced by one ``{"omitted_steps": n}`` item (the start and end matter most)."""
    steps = trajectory.steps_of(kinds)
    views = [step_view(i, step, field_chars) for i, step in enumerate(steps, 1)]
    if len(views) <= max_steps:
        return views
    head = max_steps // 2
    tail = max_steps - head
    return [*views[:head], {"omitted_steps": len(views) - max_steps}, *views[-tail:]]


def text_view(text: str | None, field_chars: int, missing: str = NO_ANSWER) -> str:
    return missing if text is None else str(clip(text, field_chars))
