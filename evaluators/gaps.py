"""What an evaluator needs that the trace did not record (``Trajectory.gaps``).

A verdict on data that was never recorded is not a verdict on the agent: an
evaluator declares what it needs (``Evaluator.requires``, or ``needs(criteria)``
when it depends on the criteria), and the runner answers with an ``ErrorResult``
naming the gap, and the setting that records it, instead of running it.

Gap names: ``tool_args``, ``tool_results``, ``input``, ``output``, ``session_id``,
``content`` (model messages not captured), ``tool_calls`` (tools ran, their results
were sent to the model, but no tool span and no model request records the calls; or
the run records neither a model call nor a tool call), ``model_calls`` (the run
records no model call), ``tool_timings`` (a tool call rebuilt from the model's
messages that no span ran: its duration is unknown), ``model_timings`` (a model call
rebuilt from a transcript a span records: no span recorded the call, its duration is
unknown), ``duplicate_instrumentation``
(two layers recorded one call and were merged: informational, never needed).
"""

from __future__ import annotations

from collections.abc import Iterable

from evaluators.results import ErrorResult
from evaluators.trajectory import StepKind, Trajectory

TOOL_ARGS = "tool_args"
TOOL_RESULTS = "tool_results"
INPUT = "input"
OUTPUT = "output"
SESSION_ID = "session_id"
CONTENT = "content"
DUPLICATE_INSTRUMENTATION = "duplicate_instrumentation"
TOOL_CALLS = "tool_calls"
TOOL_TIMINGS = "tool_timings"
MODEL_TIMINGS = "model_timings"
MODEL_CALLS = "model_calls"

GAP_ERROR = "TrajectoryGap"
_WHAT = {
    TOOL_ARGS: "tool arguments",
    TOOL_RESULTS: "tool results",
    INPUT: "the user input",
    OUTPUT: "the final answer",
    SESSION_ID: "a session id",
    CONTENT: "model message content",
    TOOL_CALLS: "the tool calls that ran (their names, arguments and order)",
    TOOL_TIMINGS: "how long each tool call took",
    MODEL_TIMINGS: "how long each model call took",
    MODEL_CALLS: "the model calls",
}
_CONTENT_SETTING = (
    "enable message content capture (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, "
    "or SPAN_AND_EVENT / EVENT_ONLY for instrumentations on the latest GenAI conventions)"
)
# The GenAI conventions' client instrumentations (openai-v2 on the latest conventions,
# Elastic EDOT, google-genai) send message content as log records, not on the spans:
# with content capture on, a span file alone still lacks it, which a user reading only
# "enable content capture" would not guess.
_GENAI_CONTENT_SETTING = (
    _CONTENT_SETTING + "; if it is on, the content went out as OTLP log records: send them "
    "to evald as well (a LoggerProvider with an OTLP log exporter; for evald doctor or "
    "replay, give the log file beside the span file)"
)
# The setting that records content, per convention family (Trajectory.conventions).
SETTINGS = {
    "otel_genai": _GENAI_CONTENT_SETTING,
    "openinference": (
        "do not hide inputs and outputs (OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS "
        "/ OPENINFERENCE_HIDE_INPUT_MESSAGES unset or false)"
    ),
    "traceloop": "enable content tracing (TRACELOOP_TRACE_CONTENT=true)",
    "vercel_ai": "record inputs and outputs (experimental_telemetry: {recordInputs: true, "
    "recordOutputs: true})",
    "langsmith": "do not hide inputs and outputs (LANGSMITH_HIDE_INPUTS / LANGSMITH_HIDE_OUTPUTS "
    "unset)",
    "google_adk": "enable content capture (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="
    "SPAN_ONLY, or ADK's capture_content option)",
    "strands": _CONTENT_SETTING,
}
_SESSION_SETTING = (
    "record the conversation id on the spans (gen_ai.conversation.id, or session.id, "
    "e.g. OpenInference using_session())"
)
# With model content captured, a content setting does not bring back a missing input or
# answer: the instrumentation records it nowhere evald reads it. (Tool arguments and
# results stay with the content settings: most conventions gate them separately.)
_NOT_WHERE_READ = (
    "content capture is on, but no span records {what} where evald reads it (a run span's "
    "input.value / output.value or gen_ai.input.messages / gen_ai.output.messages, or the "
    "model calls' messages): record it there (docs/instrument-your-agent.md)"
)
# Without model-call spans, the model's requests and messages are missing too. Some
# instrumentations of the agent and its tools have no setting that records any text;
# a model-client instrumentation beside them gives it (evald joins its requested calls
# to the tool spans, and reads results from the next request's history).
_NO_MODEL_CALLS = (
    "; no model call was recorded either: if this instrumentation has no such setting "
    "(it traces the agent and its tools, not the model), instrument the model client as "
    "well, with message content capture (docs/instrument-your-agent.md)"
)
_WITHOUT_MODEL_CALLS = frozenset((TOOL_ARGS, TOOL_RESULTS, INPUT, OUTPUT, CONTENT))
_TOOL_CALLS = (
    "the model was sent tool results, but no span records the tool calls and the model's "
    "replies (its requests) are not recorded either: instrument the tools' execution (a "
    "tool span per call), or record the model's replies (docs/instrument-your-agent.md)"
)
_TOOL_TIMINGS = (
    "a tool call was rebuilt from the model's messages and no span ran it, so its duration "
    "is unknown: instrument the tools' execution (a tool span per call; "
    "docs/instrument-your-agent.md)"
)
_MODEL_TIMINGS = (
    "the model calls were rebuilt from a conversation transcript a span records, and no "
    "span recorded the calls themselves, so their durations are unknown: instrument the "
    "model client (a span per call; docs/instrument-your-agent.md)"
)
_NO_CALLS = (
    "the run records neither a model call nor a tool call, so which tools ran is unknown: "
    "instrument the model client and the tools' execution (a span per call; "
    "docs/instrument-your-agent.md)"
)
_MODEL_CALLS = (
    "no model call of the run was recorded (the framework's tracing misses its model "
    "client): instrument the model client, or use an instrumentation that records the "
    "framework's model calls (docs/instrument-your-agent.md)"
)
_DUPLICATE = (
    "informational: two instrumentation layers recorded the same calls, merged into one "
    "step each; instrument one layer only to avoid the double cost"
)


def tool_calls_of(kinds: Iterable[StepKind]) -> frozenset[str]:
    """What judging steps of ``kinds`` (an evaluator's ``step_kinds``) needs recorded:
    ``tool_calls`` when they count tool calls (where tools ran unrecorded, a verdict on
    the tool sequence is no verdict on the agent), ``model_calls`` when they count model
    calls."""
    kinds = frozenset(kinds)
    needed = _TOOL_CALLS_NEEDED if StepKind.TOOL in kinds else frozenset()
    return needed | _MODEL_CALLS_NEEDED if StepKind.LLM in kinds else needed


_TOOL_CALLS_NEEDED = frozenset({TOOL_CALLS})
_MODEL_CALLS_NEEDED = frozenset({MODEL_CALLS})


def missing(trajectory: Trajectory, needs: Iterable[str]) -> list[str]:
    """The gaps of ``trajectory`` among ``needs``, in the trajectory's order."""
    wanted = frozenset(needs)
    return [gap for gap in trajectory.gaps if gap in wanted]


def setting_for(
    conventions: Iterable[str], gap: str, content_recorded: bool = False, model_calls: bool = True
) -> str:
    """What closes ``gap`` for the instrumentations ``conventions`` names;
    ``content_recorded``: the traces did record message content (so a content-capture
    setting is not what a missing input or answer needs); ``model_calls``: they recorded
    model-call spans (without them, a content setting may not exist: the hint adds a
    model-client instrumentation)."""
    if gap == SESSION_ID:
        return _SESSION_SETTING
    if gap == DUPLICATE_INSTRUMENTATION:
        return _DUPLICATE
    if gap == TOOL_CALLS:
        return _TOOL_CALLS if model_calls else _NO_CALLS
    if gap == TOOL_TIMINGS:
        return _TOOL_TIMINGS
    if gap == MODEL_TIMINGS:
        return _MODEL_TIMINGS
    if gap == MODEL_CALLS:
        return _MODEL_CALLS
    if content_recorded and gap in (INPUT, OUTPUT):
        return _NOT_WHERE_READ.format(what=_WHAT[gap])
    found = _CONTENT_SETTING
    for convention in conventions:
        setting = SETTINGS.get(convention)
        if setting is not None:
            found = setting
            break
    return found if model_calls or gap not in _WITHOUT_MODEL_CALLS else found + _NO_MODEL_CALLS


def gap_error(trajectory: Trajectory, gaps: Iterable[str]) -> ErrorResult:
    """The result of an evaluator that needs ``gaps``: no verdict, and why."""
    names = list(gaps)
    what = ", ".join(_WHAT.get(gap, gap) for gap in names)
    model_calls = any(step.kind is StepKind.LLM for step in trajectory.steps)
    hint = setting_for(
        trajectory.conventions, names[0], CONTENT not in trajectory.gaps, model_calls
    )
    return ErrorResult(
        error=GAP_ERROR,
        explanation=f"{what} not recorded by this instrumentation: {hint}",
        details={"gaps": names, "conventions": list(trajectory.conventions)},
    )
