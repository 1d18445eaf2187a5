"""Final-response checks without a judge: exact, contains, regex.

The response is the trajectory's ``output`` (the agent's final answer). A run
without one fails every check, with the explanation "no final response".
JSON similarity is ``evaluators.builtin.json_response``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from evaluators.base import Criteria, Evaluator, EvaluatorConfig
from evaluators.gaps import OUTPUT
from evaluators.results import BooleanResult
from evaluators.selectors import compile_regex
from evaluators.trajectory import Trajectory

NO_RESPONSE = "no final response"


class TextConfig(EvaluatorConfig):
    """``ignore_case``; ``normalize_whitespace``: strip, and runs of blanks count as one."""

    ignore_case: bool = False
    normalize_whitespace: bool = False

    def normalize(self, text: str) -> str:
        if self.normalize_whitespace:
            text = " ".join(text.split())
        return text.casefold() if self.ignore_case else text


class ResponseCriteria(Criteria):
    """``response``: the expected answer (usually the spec's ``reference.response``)."""

    response: str


class ResponseExactMatch(Evaluator[ResponseCriteria, TextConfig]):
    """True if the final response equals ``response`` (after the config's normalisation)."""

    id = "response_exact_match"
    requires = frozenset({OUTPUT})
    criteria_model = ResponseCriteria
    config_model = TextConfig
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: ResponseCriteria) -> BooleanResult:
        if trajectory.output is None:
            return BooleanResult(value=False, explanation=NO_RESPONSE)
        same = self.config.normalize(trajectory.output) == self.config.normalize(criteria.response)
        return BooleanResult(value=same, explanation=None if same else "differs from the reference")


class ContainsCriteria(Criteria):
    """``contains``: texts the final response must contain."""

    contains: tuple[str, ...] = Field(min_length=1)


class ContainsConfig(TextConfig):
    """``require``: ``all`` of the texts (default) or ``any`` one of them."""

    require: Literal["all", "any"] = "all"


class ResponseContains(Evaluator[ContainsCriteria, ContainsConfig]):
    """True if the final response contains all (or, with ``require: any``, one) of the texts."""

    id = "response_contains"
    requires = frozenset({OUTPUT})
    criteria_model = ContainsCriteria
    config_model = ContainsConfig
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: ContainsCriteria) -> BooleanResult:
        if trajectory.output is None:
            return BooleanResult(value=False, explanation=NO_RESPONSE)
        text = self.config.normalize(trajectory.output)
        missing = [part for part in criteria.contains if self.config.normalize(part) not in text]
        found = len(missing) < len(criteria.contains)
        value = found if self.config.require == "any" else not missing
        return BooleanResult(
            value=value,
            explanation=None if value else f"missing: {', '.join(map(repr, missing))}",
            details={"missing": missing},
        )


class RegexCriteria(Criteria):
    """``pattern``: a Python regular expression (``(?i)`` for case-insensitive)."""

    pattern: re.Pattern[str]

    _compile = field_validator("pattern", mode="before")(compile_regex)


class RegexConfig(EvaluatorConfig):
    """``full_match``: the whole response must match (default: a match anywhere)."""

    full_match: bool = False


class ResponseRegex(Evaluator[RegexCriteria, RegexConfig]):
    """True if the final response matches ``pattern`` (anywhere, or whole with ``full_match``)."""

    id = "response_regex"
    requires = frozenset({OUTPUT})
    criteria_model = RegexCriteria
    config_model = RegexConfig
    description = __doc__ or ""

    def evaluate(self, trajectory: Trajectory, criteria: RegexCriteria) -> BooleanResult:
        if trajectory.output is None:
            return BooleanResult(value=False, explanation=NO_RESPONSE)
        pattern = criteria.pattern
        found = (pattern.fullmatch if self.config.full_match else pattern.search)(trajectory.output)
        return BooleanResult(
            value=found is not None,
            explanation=f"matched {found[0]!r}" if found else f"no match for {pattern.pattern!r}",
        )
