"""Framework retries: consecutive executions of one call are one logical call.

A framework that retries a tool (after an error, or counting attempts in an
attribute) records one span per attempt. Matching evaluators must count the call
once; a policy can still bound retries through ``Step.attempts``. Two tool steps are
attempts of one call when they are consecutive among the steps of their parent, have
the same tool and arguments, and the earlier one failed or the later one's span
counts an attempt above one.
"""

from __future__ import annotations

from typing import Final

from collector.core.records import Span
from collector.normalize import kinds
from collector.normalize.step_records import ATTEMPTS, DURATION, START, with_fields
from collector.normalize.values import integer
from evaluators.trajectory import Step

ATTEMPT_KEYS: Final = ("tool.run_attempts", "gen_ai.tool.call.attempt", "retry.attempt")
KEYS: Final[tuple[str, ...]] = ATTEMPT_KEYS


def attempt_number(span: Span | None) -> int:
    """The attempt a tool span records itself to be (1 when it does not say)."""
    if span is None:
        return 1
    attributes = span.attributes
    for key in ATTEMPT_KEYS:
        value = attributes.get(key)
        if value is not None:  # (the common case skips the conversion)
            found = integer(value)
            if found is not None:
                return found
    return 1


def fold(steps: list[tuple[Step, int]]) -> list[Step]:
    """``(step, attempt number)`` in trajectory order → steps with retries folded."""
    if not any(attempt > 1 or step.error is not None for step, attempt in steps):
        return [step for step, _ in steps]  # nothing failed, nothing retried: the usual case
    out: list[Step] = []
    last_tool: dict[str | None, int] = {}  # parent → index in ``out`` of its last step
    for step, attempt in steps:
        at = last_tool.get(step.parent_span_id)
        if at is not None and _retry_of(out[at], step, attempt):
            first = out[at]
            end = step.start_unix_nano + round(step.duration_s * 1e9)
            out[at] = with_fields(
                step,
                {
                    START: first.start_unix_nano,
                    DURATION: max(0.0, (end - first.start_unix_nano) / 1e9),
                    ATTEMPTS: first.attempts + 1,
                },
            )
            continue
        last_tool[step.parent_span_id] = len(out)
        out.append(step)
    return out


def _retry_of(earlier: Step, later: Step, attempt: int) -> bool:
    if later.kind is not kinds.TOOL or earlier.kind is not kinds.TOOL:
        return False
    if not (earlier.executed and later.executed) or earlier.name != later.name:
        return False
    if earlier.error is None and attempt <= 1:
        return False
    # Last: reading the arguments parses them (they are parsed lazily, ADR 0019).
    return bool(earlier.args == later.args)
