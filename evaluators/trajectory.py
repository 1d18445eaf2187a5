"""The ``Trajectory``: what an agent run did, independent of instrumentation convention.

This is the contract between the collector (which builds trajectories from spans)
and every evaluator (which reads them). Records are immutable ``NamedTuple``s so
that one trajectory can be handed to many evaluators safely and cheaply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Final, NamedTuple

from evaluators.lazy import LazyValue


class StepKind(StrEnum):
    """What a step is. Which kinds form "the trajectory" for matching is a spec option."""

    AGENT = "agent"  # an agent / sub-agent / graph-node hop
    LLM = "llm"  # one model inference
    TOOL = "tool"  # one tool execution (or a requested call that never ran)
    # A tool the framework uses to steer its own loop (a final-answer tool): recorded,
    # not one of the agent's tool calls; specs that want it ask for this kind.
    CONTROL = "control"
    OTHER = "other"  # a recognised operation that is none of the above (retriever …)


class StepRecord(NamedTuple):
    """The fields of a ``Step``, as stored: ``args`` and ``result`` may hold a
    ``LazyValue`` here. Read steps through ``Step``, whose properties give plain values."""

    kind: StepKind
    name: str
    span_id: str  # hex; "" for requested-but-not-executed calls
    parent_span_id: str | None
    start_unix_nano: int
    duration_s: float
    args: Any = None
    result: Any = None
    error: str | None = None
    call_id: str | None = None
    raw_args: str | None = None
    agent: str | None = None  # the agent the step ran under
    executed: bool = True
    model: str | None = None  # LLM steps
    input_tokens: int | None = None
    output_tokens: int | None = None
    source: str | None = None  # "messages" when rebuilt from model messages, not a span
    attempts: int = 1


_ARGS: Final = 6  # positions of the lazily parsed fields in the record
_RESULT: Final = 7


class Step(StepRecord):
    """One step of a trajectory (a ``NamedTuple``: construct, ``_replace`` and compare
    it as before).

    ``args`` and ``result`` are parsed from JSON where possible (else the raw
    string); ``raw_args`` keeps the text the instrumentation recorded. The
    normalizer parses them on first read (``evaluators.lazy``): reading the
    attributes always gives the plain value; unpacking or indexing the tuple may
    give a ``LazyValue`` that behaves as it (``plain()`` turns it into the value).
    ``executed`` is False for a tool call the model requested but no tool span
    ran (the run crashed or was cut short). ``source`` is ``"messages"`` for a call
    rebuilt from the model's messages (no span recorded it; ``span_id`` is then "").
    ``attempts`` counts the executions of one logical call that the framework
    retried (the step holds the last attempt's result and error).
    """

    __slots__ = ()

    @property
    def args(self) -> Any:  # the field, read as its plain value
        value = self[_ARGS]
        return value.value if type(value) is LazyValue else value

    @property
    def result(self) -> Any:  # the field, read as its plain value
        value = self[_RESULT]
        return value.value if type(value) is LazyValue else value

    def _asdict(self) -> dict[str, Any]:
        """The fields by name, with plain ``args`` and ``result``."""
        out = dict(zip(self._fields, self, strict=True))
        out["args"], out["result"] = self.args, self.result
        return out

    def to_json(self) -> dict[str, Any]:
        """The JSON form of the ``--trajectories-out`` contract (plus optional fields)."""
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "name": self.name,
            "args": self.args,
            "result": self.result,
            "error": self.error,
            "span_id": self.span_id,
            "start_unix_nano": self.start_unix_nano,
            "duration_s": self.duration_s,
        }
        for key in (
            "call_id", "raw_args", "agent", "model", "input_tokens", "output_tokens", "source"
        ):  # fmt: skip
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if not self.executed:
            out["executed"] = False
        if self.attempts != 1:
            out["attempts"] = self.attempts
        return out


DEFAULT_MATCH_KINDS: frozenset[StepKind] = frozenset({StepKind.TOOL})


class Trajectory(NamedTuple):
    """One agent run (one trace), normalised.

    ``steps`` are ordered by start time, ties broken by span-tree order.
    ``attributes`` are the root span's attributes and ``resource_attributes`` the
    root's resource attributes, kept for spec matching.
    """

    trace_id: str  # hex
    service: str
    agent: str | None
    session_id: str | None
    input: str | None
    output: str | None
    failed: bool
    latency_s: float
    start_unix_nano: int
    steps: tuple[Step, ...]
    error: str | None = None
    agents: tuple[str, ...] = ()
    root_span_id: str | None = None
    attributes: Mapping[str, Any] = {}
    resource_attributes: Mapping[str, Any] = {}
    conventions: tuple[str, ...] = ()  # which instrumentation conventions were recognised
    incomplete: bool = False  # released before its root ended (max age, eviction, shutdown)
    # What the instrumentation did not record that evaluators may need (``evaluators.gaps``).
    gaps: tuple[str, ...] = ()
    # Why this trace is no agent run and is not evaluated (None: it is one).
    skip_reason: str | None = None

    def steps_of(self, kinds: Iterable[StepKind] = DEFAULT_MATCH_KINDS) -> tuple[Step, ...]:
        """The steps of the given kinds, in trajectory order."""
        wanted = frozenset(kinds)
        return tuple(step for step in self.steps if step.kind in wanted)

    @property
    def tool_calls(self) -> tuple[Step, ...]:
        """Tool steps, including requested-but-not-executed ones."""
        return self.steps_of(DEFAULT_MATCH_KINDS)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(step.name for step in self.tool_calls)

    @property
    def tool_errors(self) -> int:
        return sum(1 for step in self.tool_calls if step.error is not None)

    @property
    def input_tokens(self) -> int:
        return sum(step.input_tokens or 0 for step in self.steps if step.kind is StepKind.LLM)

    @property
    def output_tokens(self) -> int:
        return sum(step.output_tokens or 0 for step in self.steps if step.kind is StepKind.LLM)

    def to_json(self) -> dict[str, Any]:
        """The JSON form of the ``--trajectories-out`` contract (plus optional fields)."""
        return {
            "trace_id": self.trace_id,
            "service": self.service,
            "agent": self.agent,
            "session_id": self.session_id,
            "input": self.input,
            "output": self.output,
            "failed": self.failed,
            "error": self.error,
            "latency_s": self.latency_s,
            "incomplete": self.incomplete,
            "conventions": list(self.conventions),
            "gaps": list(self.gaps),
            **({"skip_reason": self.skip_reason} if self.skip_reason is not None else {}),
            "steps": [step.to_json() for step in self.steps],
        }
