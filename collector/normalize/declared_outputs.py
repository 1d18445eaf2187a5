"""A tool's declared outputs, where the trace records them (ADR 0017, rule 101).

Open Agent Spec declares each tool's outputs by title, and its runtimes hand back a
tool's outputs as an object keyed by those titles: WayFlow returns ``{"result": {...}}``
for a tool whose one output is ``result``, whatever the function returned. OpenInference's
Agent Spec processor records that object as the tool span's ``output.value``, and the
declaration on the span's own events (Agent Spec Tracing's ``ToolExecutionRequest`` /
``ToolExecutionResponse``: ``tool.outputs.0.title``). A tool that declares exactly one
output returned that output's value: the object around it is the runtime's, and the
model was shown the value alone. Two declared outputs, or events that disagree: the
object is what the tool returned. Event attributes are decoded whole: no selector key.
"""

from __future__ import annotations

from typing import Final

from collector.core.records import Span
from collector.normalize.error_text import raised_repr
from collector.normalize.results import ToolResult, result_of

FIRST_TITLE: Final = "tool.outputs.0.title"
SECOND_TITLE: Final = "tool.outputs.1.title"


def single_output(span: Span) -> str | None:
    """The title of the one output the span's events declare for its tool, else None."""
    title: str | None = None
    for event in span.events:
        attributes = event.attributes
        found = attributes.get(FIRST_TITLE)
        if not isinstance(found, str) or not found:
            continue
        if SECOND_TITLE in attributes or (title is not None and found != title):
            return None
        title = found
    return title


def unwrapped(result: ToolResult, title: str) -> ToolResult:
    """``result`` without the runtime's object around the one declared output, read as
    any result is (an error inside it is the call's), when the value is exactly that
    object; the call's failure when it is that object's repr holding an exception
    (``{'result': StoreError(...)}``, rule 100); else ``result`` as it is."""
    value = result.value
    if result.error is None and isinstance(value, str):  # (the dict's repr, printed)
        raised = raised_repr(value, title)
        return result if raised is None else result._replace(error=raised)
    if result.error is not None or not isinstance(value, dict) or value.keys() != {title}:
        return result
    inner = result_of(value[title])
    return inner if inner.call_id is not None else inner._replace(call_id=result.call_id)
