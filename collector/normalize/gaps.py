"""What a trajectory's instrumentation did not record (``Trajectory.gaps``).

A verdict on data that was never recorded is not a verdict on the agent: evaluators
that need a missing field answer with an error naming the gap (``evaluators.gaps``),
and ``evald doctor`` says which setting records it.
"""

from __future__ import annotations

from typing import Final

from collector.normalize import kinds
from evaluators.lazy import LazyValue
from evaluators.trajectory import Step

# The stored fields, read without parsing them (``Step.args`` / ``Step.result`` would).
_ARGS: Final = 6
_RESULT: Final = 7

TOOL_ARGS: Final = "tool_args"
TOOL_RESULTS: Final = "tool_results"
INPUT: Final = "input"
OUTPUT: Final = "output"
SESSION_ID: Final = "session_id"
CONTENT: Final = "content"
DUPLICATE_INSTRUMENTATION: Final = "duplicate_instrumentation"
# Tools ran (a model call was sent their results) that no step and no model request
# records: which, with what arguments and in what order is unknown.
TOOL_CALLS: Final = "tool_calls"
# A tool call was rebuilt from the model's messages and no span ran it: when it started
# and how long it took is unknown (its step's duration is 0).
TOOL_TIMINGS: Final = "tool_timings"
# A model call was rebuilt from a transcript a span's output records (no span recorded
# the call): when it started and how long it took is unknown (its duration is 0).
MODEL_TIMINGS: Final = "model_timings"
# No model call recorded in the run (every agent's answer comes from one): how many it
# made is unknown, and, with no tool step either, which tools ran (``tool_calls`` too).
MODEL_CALLS: Final = "model_calls"


def gaps_of(
    steps: tuple[Step, ...],
    *,
    input_text: str | None,
    output_text: str | None,
    session_id: str | None,
    content_recorded: bool,
    layers_merged: bool,
    tools_unrecorded: bool = False,
    is_run: bool = True,
) -> tuple[str, ...]:
    """The gaps, in a fixed order. ``content_recorded``: some model call carried its
    messages; ``layers_merged``: two instrumentation layers recorded one call;
    ``tools_unrecorded``: tools ran that no step records (``rebuilt.answered_unrecorded``).
    ``tool_timings`` is a gap when an executed tool step has no span (rebuilt from the
    model's messages: its duration is unknown, not 0), ``model_timings`` when a model
    step has none (rebuilt from a transcript, ``transcript_run``). ``model_calls`` when no model
    call is recorded in an agent run (``is_run``; a trace that is none has no calls to
    miss), and then ``tool_calls`` too unless a tool step is.

    ``tool_results`` needs a call that succeeded (a failed call's error is no evidence
    that results are recorded, a result recorded on any call is); ``content`` is a gap
    when model calls recorded no messages, and in a run without model-call spans when
    nothing recorded any text (no input, answer, arguments or results)."""
    tools = succeeded = llms = untimed = untimed_llms = False
    args = results = False  # some executed tool step recorded arguments / a result
    for step in steps:
        if step.kind is kinds.TOOL and step.executed:
            tools = True
            args = args or _recorded(step[_ARGS])
            results = results or _recorded(step[_RESULT])
            succeeded = succeeded or step.error is None
            untimed = untimed or not step.span_id
        elif step.kind is kinds.LLM:
            llms = True
            untimed_llms = untimed_llms or not step.span_id
    found = _calls_missing(llms=llms, tools=tools, tools_unrecorded=tools_unrecorded,
                           is_run=is_run)  # fmt: skip
    if tools and not args:
        found.append(TOOL_ARGS)
    if succeeded and not results:
        found.append(TOOL_RESULTS)
    if input_text is None:
        found.append(INPUT)
    if output_text is None:
        found.append(OUTPUT)
    if session_id is None:
        found.append(SESSION_ID)
    if not content_recorded and (llms or (tools and not (args or results))):
        found.append(CONTENT)
    if untimed:
        found.append(TOOL_TIMINGS)
    if untimed_llms:
        found.append(MODEL_TIMINGS)
    if layers_merged:
        found.append(DUPLICATE_INSTRUMENTATION)
    return tuple(found)


def _calls_missing(*, llms: bool, tools: bool, tools_unrecorded: bool, is_run: bool) -> list[str]:
    """``tool_calls`` when tools ran unrecorded, or when a run records neither a model nor
    a tool call; ``model_calls`` when a run records no model call."""
    if llms or not is_run:
        return [TOOL_CALLS] if tools_unrecorded else []
    return [MODEL_CALLS] if tools and not tools_unrecorded else [TOOL_CALLS, MODEL_CALLS]


def _recorded(value: object) -> bool:
    """Whether a step field holds a value; a lazy one is parsed only if it may be None."""
    if type(value) is LazyValue:
        return not value.maybe_none or value.value is not None
    return value is not None
