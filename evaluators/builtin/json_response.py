"""``response_json_similarity``: how much of an expected JSON answer the agent gave.

Both documents are flattened to their leaves by path (``$.order.items[0].id``);
the score is the share of leaf paths, over the union of both, whose values are
equal (numbers within ``tolerance``). Lists compare by position. With
``allow_extra`` the denominator is the expected paths only, so extra fields in
the answer cost nothing. A response in a Markdown code fence is unwrapped; a
response that is not JSON scores 0.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import Field, field_validator

from evaluators.argmatch import values_equal
from evaluators.base import Criteria, Evaluator, EvaluatorConfig
from evaluators.gaps import OUTPUT
from evaluators.results import NumericResult
from evaluators.trajectory import Trajectory

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n?\s*```\s*$", re.DOTALL)


def leaves(value: Any, path: str = "$") -> dict[str, Any]:
    """The leaves of a JSON value by path; empty objects and arrays are leaves."""
    if isinstance(value, dict) and value:
        return {
            p: v for key, item in value.items() for p, v in leaves(item, f"{path}.{key}").items()
        }
    if isinstance(value, list) and value:
        return {
            p: v for i, item in enumerate(value) for p, v in leaves(item, f"{path}[{i}]").items()
        }
    return {path: value}


def parse_json_answer(text: str) -> Any:
    """The JSON value of ``text``, unwrapping one Markdown code fence; raises ``ValueError``."""
    fenced = _FENCE.match(text)
    return json.loads(fenced[1] if fenced else text)


class JsonCriteria(Criteria):
    """``response``: the expected JSON, as JSON text (e.g. ``reference.response``) or a value."""

    response: Any

    @field_validator("response", mode="before")
    @classmethod
    def _parse_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return parse_json_answer(value)
        except ValueError as exc:
            raise ValueError(f"the expected response is not JSON: {exc}") from None


class JsonConfig(EvaluatorConfig):
    """``tolerance``: absolute, for numbers; ``allow_extra``: extra answer fields are free."""

    tolerance: float = Field(default=0.0, ge=0)
    allow_extra: bool = False


class ResponseJsonSimilarity(Evaluator[JsonCriteria, JsonConfig]):
    """Share of JSON leaf paths whose values agree between the response and ``response``."""

    id = "response_json_similarity"
    requires = frozenset({OUTPUT})
    criteria_model = JsonCriteria
    config_model = JsonConfig
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: JsonCriteria) -> NumericResult:
        if trajectory.output is None:
            return NumericResult(score=0.0, explanation="no final response")
        try:
            answer = parse_json_answer(trajectory.output)
        except ValueError as exc:
            return NumericResult(score=0.0, explanation=f"the final response is not JSON: {exc}")
        return self.compare(leaves(criteria.response), leaves(answer))

    def compare(self, expected: dict[str, Any], actual: dict[str, Any]) -> NumericResult:
        """Score the answer's leaves ``actual`` against the ``expected`` leaves."""
        paths = (
            list(expected)
            if self.config.allow_extra
            else [*expected, *(p for p in actual if p not in expected)]
        )
        tolerance = self.config.tolerance
        differing = [
            p
            for p in paths
            if not (
                p in expected and p in actual and values_equal(expected[p], actual[p], tolerance)
            )
        ]
        score = 1.0 - len(differing) / len(paths) if paths else 1.0
        return NumericResult(
            score=score,
            explanation=f"differ: {', '.join(differing)}" if differing else None,
            details={"paths": len(paths), "differing": differing},
        )
