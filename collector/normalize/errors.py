"""Errors a span records about itself (CONVENTIONS §6.5).

Any of: status ERROR; an ``exception`` event; ``error.type``; Strands'
``gen_ai.tool.status == "error"``. Errors hidden in tool *results* are found by
``results.parse_result``. Messages may be redacted (the OpenAI Agents SDK does by
default): the message is whatever the span says, never invented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from collector.core.records import Span, StatusCode
from collector.normalize import kinds
from collector.normalize.values import text
from evaluators.trajectory import Step

ERROR_TYPE: Final = "error.type"
# The error's message beside its type (the OpenTelemetry attribute registry's
# ``error.message``; AgentOps writes both on a failed tool span, status OK).
ERROR_MESSAGE: Final = "error.message"
TOOL_STATUS: Final = "gen_ai.tool.status"  # Strands
# Langfuse's own error record (``level`` ERROR with ``status_message``): its JS SDK v4
# sets only these on a failed observation, not the span status (its Python SDK sets both).
LEVEL: Final = "langfuse.observation.level"
LEVEL_MESSAGE: Final = "langfuse.observation.status_message"
KEYS: Final[tuple[str, ...]] = (ERROR_TYPE, ERROR_MESSAGE, TOOL_STATUS, LEVEL, LEVEL_MESSAGE)
EXCEPTION_EVENT: Final = "exception"
GENERIC: Final = "error"  # the error of a failure recorded without a message
# Plain ints: enum member lookups cost ~0.1 µs in 3.11.
_STATUS_ERROR: Final = int(StatusCode.ERROR)
_STATUS_OK: Final = int(StatusCode.OK)


def exception_message(span: Span) -> str | None:
    """Message (else type) of the span's last ``exception`` event."""
    for event in reversed(span.events):
        if event.name == EXCEPTION_EVENT:
            attributes = event.attributes
            return text(attributes.get("exception.message")) or text(
                attributes.get("exception.type")
            )
    return None


def status_error(span: Span) -> str | None:
    """The error of a span whose status is ERROR (the run-failure signal), else ``None``."""
    if span.status_code != _STATUS_ERROR:
        return None
    message = text(span.status_message)
    if message is not None:
        return _more_specific(message, text(span.attributes.get(ERROR_TYPE)))
    return exception_message(span) or text(span.attributes.get(ERROR_TYPE)) or GENERIC


def _more_specific(message: str, error_type: str | None) -> str:
    """The status description, unless ``error.type`` holds an exception's text that says
    more: ``<Class>: <message>`` (a dotted identifier, then the message), longer than the
    description. ``error.type`` is meant for a class (``StoreError``, ``timeout``); OpenLIT's
    Agno tool spans put the exception's text there beside the fixed description ``Tool
    execution failed``. A class name, a class's repr (``<class '…'>``: Semantic Kernel) or
    text no longer than the description leaves the description the error."""
    if error_type is None or len(error_type) <= len(message):
        return message
    head, separator, rest = error_type.partition(": ")
    if separator and rest.strip() and _identifier(head):
        return error_type
    return message


def _identifier(value: str) -> bool:
    """A dotted identifier (a class's name, maybe qualified)."""
    return bool(value) and all(part.isidentifier() for part in value.split("."))


def span_error(span: Span) -> str | None:
    """Any error the span records about itself, most specific message first."""
    if span.status_code == _STATUS_ERROR:
        return status_error(span)
    if span.events and span.status_code != _STATUS_OK:
        # An explicit OK is the instrumentation's verdict on an exception it recorded: a
        # control-flow exception (LangGraph's ParentCommand carrying a handoff's Command,
        # GraphInterrupt), not a failure of the span.
        found = exception_message(span)
        if found is not None:
            return found
    # Runs for every step: the common no-error case is kept free of calls.
    attributes = span.attributes
    error_type = attributes.get(ERROR_TYPE)
    if isinstance(error_type, str) and error_type:
        message = text(attributes.get(ERROR_MESSAGE))
        if message is None or message.startswith(error_type):
            return message or error_type
        return f"{error_type}: {message}"  # (the class kept: users match on it)
    level = attributes.get(LEVEL)  # (``is None`` first: comparing None to text is slower)
    if level is not None and level == "ERROR":
        return text(attributes.get(LEVEL_MESSAGE)) or GENERIC
    status = attributes.get(TOOL_STATUS)
    return GENERIC if status is not None and status == "error" else None


def recovered_error(error: str | None, steps: Sequence[Step], answered: bool) -> str | None:
    """``error``, unless it is a failed tool call's own error that the run went on from.

    Some instrumentations set the run span's status from the first failure below it (the
    OpenInference Vercel processor copies it onto the root): the run then fails with the
    message of a tool call whose failure the loop handed back to the model, which
    answered. By evidence, not by name: the run's error is, word for word, the error of
    a failed tool step (a message, not the placeholder a status without one gets); a
    model call that did not fail follows that step; and the run has an answer. A run
    error with any other text, or a tool failure that nothing came after, stays a failure.
    """
    if error is None or error == GENERIC or not answered:  # (the placeholder proves nothing)
        return error
    failed_at = -1
    for index, step in enumerate(steps):
        if step.kind is kinds.TOOL and step.error == error:
            failed_at = index
    if failed_at < 0:
        return error
    later = steps[failed_at + 1 :]
    recovered = any(step.kind is kinds.LLM and step.error is None for step in later)
    return None if recovered else error
