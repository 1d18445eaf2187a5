"""``Step`` and ``Trajectory`` records built by position, steps changed by position; a
span's duration; lazily parsed values built without their ``__init__``.

A ``NamedTuple``'s constructor and ``_replace`` are Python functions (argument and
keyword handling, defaults); the compiled normalizer builds a step per span and
changes several, and those calls into the interpreter were ~8 % of its time
(``perf``, synthetic traces). These build the same tuples with ``tuple.__new__``.
``LazyValue.__init__`` is one too (two per tool call). The field orders and slots
are checked at import, so a field added to ``StepRecord``, ``Trajectory`` or
``LazyValue`` fails loudly here instead of shifting or missing values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from collector.core.records import Span
from evaluators.lazy import UNREAD, LazyValue
from evaluators.trajectory import Step, StepKind, Trajectory

STEP_FIELDS: Final = (
    "kind", "name", "span_id", "parent_span_id", "start_unix_nano", "duration_s", "args",
    "result", "error", "call_id", "raw_args", "agent", "executed", "model", "input_tokens",
    "output_tokens", "source", "attempts",
)  # fmt: skip
if Step._fields != STEP_FIELDS:
    raise RuntimeError(
        f"collector.normalize.step_records builds Step as {STEP_FIELDS} but it is "
        f"{Step._fields}: update step_records.py"
    )

TRAJECTORY_FIELDS: Final = (
    "trace_id", "service", "agent", "session_id", "input", "output", "failed", "latency_s",
    "start_unix_nano", "steps", "error", "agents", "root_span_id", "attributes",
    "resource_attributes", "conventions", "incomplete", "gaps", "skip_reason",
)  # fmt: skip
if Trajectory._fields != TRAJECTORY_FIELDS:
    raise RuntimeError(
        f"collector.normalize.step_records builds Trajectory as {TRAJECTORY_FIELDS} but it "
        f"is {Trajectory._fields}: update step_records.py"
    )

if LazyValue.__slots__ != ("_load", "_maybe_none", "_source", "_value"):
    raise RuntimeError(
        f"collector.normalize.step_records sets LazyValue's _load, _source, _value and "
        f"_maybe_none but its slots are {LazyValue.__slots__}: update new_lazy"
    )

KIND: Final = STEP_FIELDS.index("kind")
NAME: Final = STEP_FIELDS.index("name")
SPAN_ID: Final = STEP_FIELDS.index("span_id")
START: Final = STEP_FIELDS.index("start_unix_nano")
DURATION: Final = STEP_FIELDS.index("duration_s")
RESULT: Final = STEP_FIELDS.index("result")
ERROR: Final = STEP_FIELDS.index("error")
CALL_ID: Final = STEP_FIELDS.index("call_id")
AGENT: Final = STEP_FIELDS.index("agent")
EXECUTED: Final = STEP_FIELDS.index("executed")
MODEL: Final = STEP_FIELDS.index("model")
INPUT_TOKENS: Final = STEP_FIELDS.index("input_tokens")
OUTPUT_TOKENS: Final = STEP_FIELDS.index("output_tokens")
SOURCE: Final = STEP_FIELDS.index("source")
ATTEMPTS: Final = STEP_FIELDS.index("attempts")

_tuple_new: Any = tuple.__new__
_object_new: Any = object.__new__


def new_step(  # noqa: PLR0917 - the record's fields, by position as Step(...) takes them
    kind: StepKind,
    name: str,
    span_id: str,
    parent_span_id: str | None,
    start_unix_nano: int,
    duration_s: float,
    args: Any,
    result: Any,
    error: str | None,
    call_id: str | None,
    raw_args: str | None,
    agent: str | None,
    executed: bool,
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    source: str | None = None,
    attempts: int = 1,
) -> Step:
    """``Step(...)`` with every field given by position (the last two defaulted)."""
    step: Step = _tuple_new(
        Step,
        (kind, name, span_id, parent_span_id, start_unix_nano, duration_s, args, result,
         error, call_id, raw_args, agent, executed, model, input_tokens, output_tokens,
         source, attempts),
    )  # fmt: skip
    return step


def new_trajectory(
    *,
    trace_id: str,
    service: str,
    agent: str | None,
    session_id: str | None,
    input: str | None,
    output: str | None,
    failed: bool,
    latency_s: float,
    start_unix_nano: int,
    steps: tuple[Step, ...],
    error: str | None,
    agents: tuple[str, ...],
    root_span_id: str | None,
    attributes: Mapping[str, Any],
    resource_attributes: Mapping[str, Any],
    conventions: tuple[str, ...],
    incomplete: bool,
    gaps: tuple[str, ...],
    skip_reason: str | None,
) -> Trajectory:
    """``Trajectory(...)`` with every field given (by keyword here, by position inside)."""
    trajectory: Trajectory = _tuple_new(
        Trajectory,
        (trace_id, service, agent, session_id, input, output, failed, latency_s,
         start_unix_nano, steps, error, agents, root_span_id, attributes, resource_attributes,
         conventions, incomplete, gaps, skip_reason),
    )  # fmt: skip
    return trajectory


def no_run(trace_id: str, reason: str) -> Trajectory:
    """The trajectory of a trace with no span at all: no agent run, for ``reason``."""
    return Trajectory(
        trace_id, "unknown_service", None, None, None, None, False, 0.0, 0, (),
        incomplete=True, skip_reason=reason,
    )  # fmt: skip


def duration_s(span: Span) -> float:
    """``span.duration_s``, which is a Python property: called per span from compiled
    code it ran in the interpreter (~4 % of the normalizer's time, ``perf``)."""
    return max(0, span.end_unix_nano - span.start_unix_nano) / 1e9


def with_fields(step: Step, changes: dict[int, Any]) -> Step:
    """``step._replace`` of the fields at the keys of ``changes``; every other field as
    stored (a lazily parsed value stays unparsed)."""
    fields = list(step)
    for index, value in changes.items():
        fields[index] = value
    changed: Step = _tuple_new(Step, tuple(fields))
    return changed


def new_lazy(
    load: Callable[[Any], Any], source: Any, maybe_none: bool | Callable[[Any], bool]
) -> LazyValue:
    """``LazyValue(load, source, maybe_none)``, its slots set here (attribute stores
    compiled to C calls) instead of by its ``__init__`` run in the interpreter."""
    value: LazyValue = _object_new(LazyValue)
    value._load = load
    value._source = source
    value._value = UNREAD
    value._maybe_none = maybe_none
    return value
