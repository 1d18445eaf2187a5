"""What an evaluator returns: a numeric score, a boolean verdict, or an error.

An evaluator never raises into the pipeline: the runner turns an exception into an
``ErrorResult``. Pass/fail is decided by the runner from the threshold, not by the
evaluator (see ``evaluators.runner``).
"""

from __future__ import annotations

from typing import Any, Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    explanation: str | None = None
    details: dict[str, Any] | None = Field(default=None, description="JSON-able extra data")


class NumericResult(_Result):
    """A score, usually in [0, 1] (latency is in seconds)."""

    kind: Literal["numeric"] = "numeric"
    score: float


class BooleanResult(_Result):
    """A yes/no verdict; reported as score 1.0 / 0.0."""

    kind: Literal["boolean"] = "boolean"
    value: bool


class ErrorResult(_Result):
    """The evaluator could not judge this trajectory (bad input, exception, timeout)."""

    kind: Literal["error"] = "error"
    error: str


EvaluationResult = NumericResult | BooleanResult | ErrorResult


# Readers tell results apart by their exact class first: ``isinstance`` on a pydantic
# class that is not the object's costs ~150 ns (ABCMeta), a type comparison ~20. A
# plug-in's subclass of a result class takes the ``isinstance`` path (its ``kind`` may
# even say something else: pydantic lets a subclass redefine the field).


def score_of(result: EvaluationResult) -> float | None:
    """The numeric value of a result: the score, 1.0/0.0 for booleans, None for errors."""
    if type(result) is NumericResult:
        return result.score
    if type(result) is BooleanResult:
        return 1.0 if result.value else 0.0
    if type(result) is ErrorResult:
        return None
    if isinstance(result, NumericResult):
        return result.score
    if isinstance(result, BooleanResult):
        return 1.0 if result.value else 0.0
    return None


def is_error(result: EvaluationResult) -> TypeGuard[ErrorResult]:
    """``isinstance(result, ErrorResult)``, cheaper for evald's own result classes."""
    cls = type(result)
    if cls is NumericResult or cls is BooleanResult:
        return False
    return cls is ErrorResult or isinstance(result, ErrorResult)
