"""Calls rebuilt from messages, timed by the span that ran them (ADR 0017, rule 47).

A call rebuilt from a later model call's history (``rebuilt``: no tool span ran it)
has no span of its own: it sits at its requesting call's end, with no duration, so a
per-tool latency limit could never fail. A framework that traces with spans of its own
(a state machine's span per action, a generic ``tracer("<name>")`` around each call)
often still wraps the execution in a span named after the tool, or labelled by its
kind and naming the tool in a ``name`` attribute (a "Function: {name}" template), with
nothing any convention reads (or naming the function it ran in the OpenTelemetry code
attributes, ``code.function``). Such a span is the call's when it can be no other's: no
convention recognised it, no model or tool call runs below it, its name (or ``name``)
is the call's name, and it runs between the requesting model call's end and the next
model call's start. The step keeps everything the messages gave it and takes the span's
id, start and duration, and its failure when it records one (rule 65: the span's own
record of the failure, as a tool span's, before the text the model was shown; not when a
span of the name is left over in the window, which may be a retried attempt the model did not see
the outcome of, nor a bare failure over a message). Spans are taken one to one, in
start order (parallel calls of one name).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import Final

from collector.core.records import Span
from collector.normalize import kinds
from collector.normalize.errors import GENERIC, span_error
from collector.normalize.rebuilt import SOURCE as FROM_MESSAGES
from collector.normalize.roles import Role
from collector.normalize.step_records import (
    DURATION,
    ERROR,
    EXECUTED,
    SOURCE,
    SPAN_ID,
    START,
    duration_s,
    with_fields,
)
from collector.normalize.tree import SpanTree
from collector.normalize.values import quoted_text
from evaluators.trajectory import Step

# The attribute a span names what it ran by when its own name is a label (Logfire's
# "Function: {name}" template; MLflow's tool spans record it too).
_NAME: Final = "name"
# The function a span ran, by the OpenTelemetry code attributes (the current key first;
# Logfire's ``@logfire.instrument`` writes the older one, "Calling __main__.<tool>").
_CODE_FUNCTION: Final = ("code.function.name", "code.function")
KEYS: Final[tuple[str, ...]] = (_NAME, *_CODE_FUNCTION)
# How many same-named spans in a call's window are looked at: parallel calls of one
# tool are a handful; the bound keeps hostile traces (thousands alike) linear.
_MAX_LOOKED: Final = 64


def timed_by_spans(
    steps: tuple[Step, ...],
    tree: SpanTree,
    roles: Sequence[Role],
    families: Sequence[str],
    work: Callable[[int, int], int],
) -> tuple[Step, ...]:
    """``steps``, each call rebuilt from messages given the span that ran it, if one
    did (module docstring); ``work(i, 0)`` is the leaf work below span ``i``."""
    names = {step.name for step in steps if _untimed(step)}
    if not names:
        return steps
    spans = tree.spans
    candidates: dict[str, list[int]] = {}
    for i, span in enumerate(spans):
        if roles[i] is Role.OTHER and not families[i]:
            name = _call_name(span, names)
            if name is not None:
                candidates.setdefault(name, []).append(i)
    if not candidates:
        return steps
    starts: dict[str, list[int]] = {}
    for name, found in candidates.items():
        found.sort(key=lambda i: spans[i].start_unix_nano)
        starts[name] = [spans[i].start_unix_nano for i in found]
    model_starts = sorted(step.start_unix_nano for step in steps if step.kind is kinds.LLM)
    taken: set[int] = set()
    timed = list(steps)
    bound: list[tuple[int, int, list[int]]] = []  # (step, its span, the others of its window)
    for k, step in enumerate(steps):
        if not _untimed(step) or step.name not in candidates:
            continue
        low = step.start_unix_nano  # the requesting model call's end
        later = bisect_right(model_starts, low)
        high = model_starts[later] if later < len(model_starts) else None
        first = bisect_left(starts[step.name], low)
        window = _window(spans, candidates[step.name][first : first + _MAX_LOOKED], high, work)
        for i in window:
            if i not in taken:
                taken.add(i)
                span = spans[i]
                changes = {SPAN_ID: span.span_id.hex(), START: span.start_unix_nano}
                changes[DURATION] = duration_s(span)
                timed[k] = with_fields(step, changes)
                bound.append((k, i, window))
                break
    for k, i, window in bound:
        if all(j in taken for j in window):  # (a span left over may be a retried attempt)
            timed[k] = _with_failure(timed[k], spans[i])
    return tuple(timed)


def _call_name(span: Span, names: set[str]) -> str | None:
    """The call ``span`` names: its own name, or, when its own name is a label of the
    span's kind (a template, "Function: {name}", "Calling module.function"), its ``name``
    attribute or the function the OpenTelemetry code attributes say it ran (the last
    dotted part of ``code.function.name`` / ``code.function``)."""
    if span.name in names:
        return span.name
    attributes = span.attributes
    named = quoted_text(attributes.get(_NAME))
    if named in names:
        return named
    for key in _CODE_FUNCTION:
        function = attributes.get(key)
        if isinstance(function, str) and function:
            bare = function.rsplit(".", 1)[-1]
            return bare if bare in names else None
    return None


def _window(
    spans: Sequence[Span], found: list[int], high: int | None, work: Callable[[int, int], int]
) -> list[int]:
    """The spans of ``found`` (in start order) that ran before ``high`` (the next model
    call's start; None: the run's end) with no model or tool call below them."""
    window: list[int] = []
    for i in found:
        span = spans[i]
        if high is not None and span.start_unix_nano > high:
            break  # (in start order: the rest start later still)
        if (high is None or span.end_unix_nano <= high) and work(i, 0) == 0:
            window.append(i)
    return window


def _with_failure(step: Step, span: Span) -> Step:
    """``step`` with the failure ``span`` records, unless it records none, or only a bare
    failure where the messages gave the step a message."""
    failure = span_error(span)
    if failure is None or (failure == GENERIC and step[ERROR] is not None):
        return step
    return with_fields(step, {ERROR: failure})


def _untimed(step: Step) -> bool:
    # (by position: the named fields are properties, a call each from compiled code)
    return not step[SPAN_ID] and step[SOURCE] == FROM_MESSAGES and bool(step[EXECUTED])
