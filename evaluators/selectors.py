"""Which traces a spec applies to: the ``match`` block of a spec.

Regexes are compiled once, when the spec is loaded; an invalid one is a load
error naming its field. Regexes are *searched* (``re.search``): anchor them with
``^…$`` to match a whole value.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evaluators.matching import bare_name
from evaluators.trajectory import StepKind, Trajectory

Scalar = str | int | float | bool

_MISSING = object()


def compile_regex(pattern: Any) -> Any:
    """Compile a regex, or raise ``ValueError`` that quotes it and says what is wrong."""
    if not isinstance(pattern, str):
        return pattern  # let pydantic report the type error
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None


class ValueMatcher(BaseModel):
    """A value condition: an exact value (``prod``) or ``{regex: "..."}``.

    Exact values compare equal as values or as text (``3`` matches ``"3"``), since
    attribute types vary between SDKs. A missing value never matches.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    exact: Scalar | None = None
    regex: re.Pattern[str] | None = None

    _compile = field_validator("regex", mode="before")(compile_regex)

    @model_validator(mode="before")
    @classmethod
    def _accept_scalar(cls, data: Any) -> Any:
        return {"exact": data} if isinstance(data, Scalar) else data

    @model_validator(mode="after")
    def _exactly_one(self) -> ValueMatcher:
        if (self.exact is None) == (self.regex is None):
            raise ValueError("give a value or {regex: ...}")
        return self

    def matches(self, value: Any) -> bool:
        """Whether ``value`` satisfies this condition."""
        if value is None or value is _MISSING:
            return False
        if self.regex is not None:
            return self.regex.search(str(value)) is not None
        return bool(value == self.exact) or str(value) == str(self.exact)


class MatchRule(BaseModel):
    """All given conditions must hold; an omitted condition holds for every trace.

    - ``service``: the trajectory's service name;
    - ``agent``: the trajectory's agent or any of its agents;
    - ``input_regex``: searched in the user input (no input: no match);
    - ``attributes``: root-span attributes, then resource attributes;
    - ``tool_called``: some executed tool step has a matching name, full or bare
      (``MusicStore-refund`` is matched by ``refund``, as in references:
      ``matching.bare_name``);
    - ``sample_rate``: the share of traces kept, decided by the trace id (see
      ``sampled``), so a replay makes the same choice as the live run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    service: ValueMatcher | None = None
    agent: ValueMatcher | None = None
    input_regex: re.Pattern[str] | None = None
    attributes: dict[str, ValueMatcher] = Field(default_factory=dict)
    tool_called: ValueMatcher | None = None
    sample_rate: float = Field(default=1.0, ge=0.0, le=1.0)

    _compile = field_validator("input_regex", mode="before")(compile_regex)

    def matches(self, trajectory: Trajectory) -> bool:
        """Whether ``trajectory`` satisfies every condition. Never raises."""
        return (
            (self.service is None or self.service.matches(trajectory.service))
            and self._agent_matches(trajectory)
            and self._input_matches(trajectory.input)
            and all(
                matcher.matches(attribute(trajectory, key))
                for key, matcher in self.attributes.items()
            )
            and self._tool_matches(trajectory)
            and sampled(trajectory.trace_id, self.sample_rate)
        )

    def may_match_session_of(self, turn: Trajectory) -> bool:
        """Whether a session with ``turn`` among its turns can match this rule.

        Only ``service`` is decided per turn: it is part of the session key, the same
        on every turn. Everything else (which turn is first, so the input and the
        attributes; the union of agents; tools; ``evald.session.*``) is known on the
        merge only, whatever order the turns arrive in.
        """
        return self.service_holds(turn.service)

    def service_holds(self, service: str) -> bool:
        """Whether the ``service`` condition holds for ``service`` (the others may not)."""
        return self.service is None or self.service.matches(service)

    def _agent_matches(self, trajectory: Trajectory) -> bool:
        if self.agent is None:
            return True
        names = (trajectory.agent, *trajectory.agents)
        return any(self.agent.matches(name) for name in names)

    def _input_matches(self, text: str | None) -> bool:
        if self.input_regex is None:
            return True
        return text is not None and self.input_regex.search(text) is not None

    def _tool_matches(self, trajectory: Trajectory) -> bool:
        if self.tool_called is None:
            return True
        matcher = self.tool_called
        for step in trajectory.steps_of((StepKind.TOOL,)):
            name = step.name
            if step.executed and (matcher.matches(name) or matcher.matches(bare_name(name))):
                return True
        return False


def attribute(trajectory: Trajectory, key: str) -> Any:
    """A root-span attribute, else a resource attribute, else a sentinel that never matches."""
    sources: tuple[Mapping[str, Any], ...] = (
        trajectory.attributes,
        trajectory.resource_attributes,
    )
    for source in sources:
        if key in source:
            return source[key]
    return _MISSING


def sampled(trace_id: str, rate: float) -> bool:
    """Whether a trace falls in the ``rate`` share, deterministically by its id.

    The id is hashed (some SDKs and tests make non-random ids) to a fraction in
    [0, 1); the trace is kept when the fraction is below ``rate``. The choice does
    not depend on the spec, so sampling is consistent across specs like OTel's
    ``TraceIdRatioBased``: a trace kept at 0.1 is kept at every higher rate.
    """
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.blake2b(trace_id.lower().encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < rate
