"""What an evaluator returns: a numeric score, a boolean verdict, or an error.

An evaluator never raises into the pipeline: the runner turns an exception into an
``ErrorResult``. Pass/fail is decided by the runner from the threshold, not by the
evaluator (see ``evaluators.runner``).
"""

from __future__ import annotations

from typing import Any, Literal

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


def score_of(result: EvaluationResult) -> float | None:
    """The numeric value of a result: the score, 1.0/0.0 for booleans, None for errors."""
    # ``kind`` tells the three apart, as ``isinstance`` would: each class fixes its own
    # (a Literal a subclass cannot change), and an attribute read is several times
    # cheaper than ``isinstance`` on a pydantic class that is not the object's (the
    # exact class of the most common result, first, is cheaper still).
    if type(result) is NumericResult or result.kind == "numeric":
        return result.score
    if result.kind == "boolean":
        return 1.0 if result.value else 0.0
    return None
