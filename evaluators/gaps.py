"""What an evaluator needs that the trace did not record (``Trajectory.gaps``).

A verdict on data that was never recorded is not a verdict on the agent: an
evaluator declares what it needs (``Evaluator.requires``, or ``needs(criteria)``
when it depends on the criteria), and the runner answers with an ``ErrorResult``
naming the gap, and the setting that records it, instead of running it.

Gap names: ``tool_args``, ``tool_results``, ``input``, ``output``, ``session_id``,
``content`` (model messages not captured), ``duplicate_instrumentation`` (two
layers recorded one call and were merged: informational, never needed).
"""

from __future__ import annotations

from collections.abc import Iterable

from evaluators.results import ErrorResult
from evaluators.trajectory import Trajectory

TOOL_ARGS = "tool_args"
TOOL_RESULTS = "tool_results"
INPUT = "input"
OUTPUT = "output"
SESSION_ID = "session_id"
CONTENT = "content"
DUPLICATE_INSTRUMENTATION = "duplicate_instrumentation"

GAP_ERROR = "TrajectoryGap"
_WHAT = {
    TOOL_ARGS: "tool arguments",
    TOOL_RESULTS: "tool results",
    INPUT: "the user input",
    OUTPUT: "the final answer",
    SESSION_ID: "a session id",
    CONTENT: "model message content",
}
_CONTENT_SETTING = (
    "enable message content capture (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, "
    "or SPAN_AND_EVENT / EVENT_ONLY for instrumentations on the latest GenAI conventions)"
)
# The setting that records content, per convention family (Trajectory.conventions).
SETTINGS = {
    "otel_genai": _CONTENT_SETTING,
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
_DUPLICATE = (
    "informational: two instrumentation layers recorded the same calls, merged into one "
    "step each; instrument one layer only to avoid the double cost"
)


def missing(trajectory: Trajectory, needs: Iterable[str]) -> list[str]:
    """The gaps of ``trajectory`` among ``needs``, in the trajectory's order."""
    wanted = frozenset(needs)
    return [gap for gap in trajectory.gaps if gap in wanted]


def setting_for(conventions: Iterable[str], gap: str, content_recorded: bool = False) -> str:
    """What closes ``gap`` for the instrumentations ``conventions`` names;
    ``content_recorded``: the traces did record message content (so a content-capture
    setting is not what a missing input or answer needs)."""
    if gap == SESSION_ID:
        return _SESSION_SETTING
    if gap == DUPLICATE_INSTRUMENTATION:
        return _DUPLICATE
    if content_recorded and gap in (INPUT, OUTPUT):
        return _NOT_WHERE_READ.format(what=_WHAT[gap])
    for convention in conventions:
        found = SETTINGS.get(convention)
        if found is not None:
            return found
    return _CONTENT_SETTING


def gap_error(trajectory: Trajectory, gaps: Iterable[str]) -> ErrorResult:
    """The result of an evaluator that needs ``gaps``: no verdict, and why."""
    names = list(gaps)
    what = ", ".join(_WHAT.get(gap, gap) for gap in names)
    hint = setting_for(trajectory.conventions, names[0], CONTENT not in trajectory.gaps)
    return ErrorResult(
        error=GAP_ERROR,
        explanation=f"{what} not recorded by this instrumentation: {hint}",
        details={"gaps": names, "conventions": list(trajectory.conventions)},
    )
