"""What evald sends over OTLP, built as OpenTelemetry SDK records.

- An evaluation span per evaluated trace: same trace id, child of the evaluated
  root span, one ``gen_ai.evaluation.result`` event per result (attributes of the
  GenAI semantic conventions, plus ``evald.spec.id``). A session's results
  (``scope: session`` specs) go to the session's last turn, marked with
  ``session_attributes``: ``evald.evaluation.scope=session``, the conversation id
  and the turns' trace ids.
- The same results as log records (the conventions define ``gen_ai.evaluation.result``
  as an event), parented to the evaluated root span.
- The trace's own spans, forwarded, with ``evald.*`` summary attributes on the root.

Pure functions: no I/O, so the shapes are testable without a backend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import trace as trace_api
from opentelemetry._logs import LogRecord
from opentelemetry.sdk._logs import ReadWriteLogRecord
from opentelemetry.sdk.resources import Resource as SdkResource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace.status import Status, StatusCode

from collector.core.records import LogEvent, Resource, Span, SpanEvent, Trace
from collector.receivers.own_output import FORWARDED_OUTPUT, OUTPUT_ATTRIBUTE
from collector.sinks.metrics import outcome_label
from evaluators.results import is_error, score_of
from evaluators.runner import Outcome
from evaluators.session_merge import session_trace_ids, session_turns
from evaluators.trajectory import Trajectory

EVENT_NAME = "gen_ai.evaluation.result"
SPAN_NAME = "evald evaluation"
_SAMPLED = trace_api.TraceFlags(trace_api.TraceFlags.SAMPLED)
_IDS = RandomIdGenerator()
# OTLP span kinds are 1-based (0 = unspecified); the SDK's enum is 0-based.
_KINDS = {1: trace_api.SpanKind.INTERNAL, 2: trace_api.SpanKind.SERVER,
          3: trace_api.SpanKind.CLIENT, 4: trace_api.SpanKind.PRODUCER,
          5: trace_api.SpanKind.CONSUMER}  # fmt: skip


def result_attributes(outcome: Outcome) -> dict[str, Any]:
    """The ``gen_ai.evaluation.result`` attributes of one outcome.

    ``score.label`` is ``pass`` / ``fail`` / ``error``, absent when there is no
    verdict (no threshold); ``evald.spec.id`` is absent for always-on evaluators.
    """
    result = outcome.result
    attributes: dict[str, Any] = {"gen_ai.evaluation.name": outcome.evaluator}
    score = score_of(result)
    if score is not None and math.isfinite(score):
        attributes["gen_ai.evaluation.score.value"] = score
    label = outcome_label(outcome)
    if label != "none":
        attributes["gen_ai.evaluation.score.label"] = label
    explanation = result.error if is_error(result) else result.explanation
    if explanation:
        attributes["gen_ai.evaluation.explanation"] = explanation
    if is_error(result):
        attributes["error.type"] = _error_type(result.error)
    if outcome.spec_id is not None:
        attributes["evald.spec.id"] = outcome.spec_id
    return attributes


def summary_attributes(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """``evald.*`` counts of a trace's outcomes, for the evaluation span and forwarded root."""
    labels = [outcome_label(outcome) for outcome in outcomes]
    failed = sorted({_qualified(o) for o, label in zip(outcomes, labels, strict=True)
                     if label == "fail"})  # fmt: skip
    summary: dict[str, Any] = {
        "evald.evaluations": len(outcomes),
        "evald.evaluations.passed": labels.count("pass"),
        "evald.evaluations.failed": labels.count("fail"),
        "evald.evaluations.errors": labels.count("error"),
    }
    if failed:
        summary["evald.failed_evaluators"] = failed
    return summary


def session_attributes(trajectory: Trajectory) -> dict[str, Any]:
    """What marks the results of a session (a merged trajectory) in OTLP output: the
    scope, ``gen_ai.conversation.id`` (semconv), the number of turns and their trace
    ids, so a backend can tell them from the last turn's own results and find the
    other turns. Empty for one trace's trajectory."""
    turns = session_turns(trajectory)
    if turns is None:
        return {}
    attributes: dict[str, Any] = {
        "evald.evaluation.scope": "session",
        "evald.session.turns": turns,
        "evald.session.trace_ids": list(session_trace_ids(trajectory)),
    }
    if trajectory.session_id:
        attributes["gen_ai.conversation.id"] = trajectory.session_id
    return attributes


def parent_context(trajectory: Trajectory) -> trace_api.SpanContext | None:
    """The evaluated root span's context, or None when the trajectory names no root."""
    if not trajectory.root_span_id:
        return None
    return trace_api.SpanContext(
        int(trajectory.trace_id, 16), int(trajectory.root_span_id, 16), True, _SAMPLED
    )


def evaluation_span(
    trajectory: Trajectory,
    outcomes: Sequence[Outcome],
    resource: SdkResource,
    scope: InstrumentationScope,
    end_ns: int,
    *,
    extra: Mapping[str, Any] | None = None,
) -> ReadableSpan:
    """One span in the evaluated trace, ended at ``end_ns``, lasting as long as evaluation;
    ``extra`` attributes are added to the span (``session_attributes``)."""
    start_ns = end_ns - int(sum(outcome.duration_s for outcome in outcomes) * 1e9)
    context = trace_api.SpanContext(
        int(trajectory.trace_id, 16), _IDS.generate_span_id(), False, _SAMPLED
    )
    attributes = summary_attributes(outcomes) | {"evald.evaluated.service": trajectory.service}
    if trajectory.agent:
        attributes["gen_ai.agent.name"] = trajectory.agent
    attributes |= extra or {}
    events = [Event(EVENT_NAME, result_attributes(o), end_ns) for o in outcomes]
    return ReadableSpan(
        SPAN_NAME, context, parent_context(trajectory), resource, attributes, events,
        kind=trace_api.SpanKind.INTERNAL, start_time=start_ns, end_time=end_ns,
        instrumentation_scope=scope,
    )  # fmt: skip


def evaluation_log_records(
    trajectory: Trajectory,
    outcomes: Sequence[Outcome],
    resource: SdkResource,
    scope: InstrumentationScope,
    time_ns: int,
    *,
    extra: Mapping[str, Any] | None = None,
) -> list[ReadWriteLogRecord]:
    """One ``gen_ai.evaluation.result`` log record per outcome, on the evaluated span;
    ``extra`` attributes are added to each."""
    parent = parent_context(trajectory)
    context = trace_api.set_span_in_context(trace_api.NonRecordingSpan(parent)) if parent else None
    records = []
    for outcome in outcomes:
        record = LogRecord(
            timestamp=time_ns,
            observed_timestamp=time_ns,
            context=context,
            attributes={**result_attributes(outcome), **(extra or {})},
            event_name=EVENT_NAME,
        )
        records.append(ReadWriteLogRecord(record, resource, scope))
    return records


def forwarded_spans(
    trace: Trace, root_span_id: str | None, summary: Mapping[str, Any]
) -> list[ReadableSpan]:
    """The trace's spans as SDK spans, ``summary`` added to the root's attributes.

    Attributes are shared with the decoded spans, not copied (the root's excepted).
    Links and trace state are not kept by the decoder and so are not forwarded; nor
    are the events that arrived as OTLP log records (``LogEvent``).
    """
    resources: dict[int, SdkResource] = {}
    scopes: dict[str, InstrumentationScope] = {}
    spans = []
    for span in trace.spans:
        attributes: Mapping[str, Any] = span.attributes
        if span.span_id.hex() == root_span_id:
            attributes = {**span.attributes, **summary}
        resource = resources.get(id(span.resource)) or _forwarded_resource(span.resource)
        resources[id(span.resource)] = resource
        scope = scopes.setdefault(span.scope_name, InstrumentationScope(span.scope_name))
        spans.append(_readable(span, attributes, resource, scope))
    return spans


def _readable(
    span: Span, attributes: Mapping[str, Any], resource: SdkResource, scope: InstrumentationScope
) -> ReadableSpan:
    trace_id = int.from_bytes(span.trace_id, "big")
    context = trace_api.SpanContext(trace_id, int.from_bytes(span.span_id, "big"), False, _SAMPLED)
    parent = None
    if span.parent_span_id:
        parent_id = int.from_bytes(span.parent_span_id, "big")
        parent = trace_api.SpanContext(trace_id, parent_id, False, _SAMPLED)
    # Events that arrived as log records stay off: the sender kept them off its spans.
    events = [_event(e) for e in span.events if not isinstance(e, LogEvent)]
    return ReadableSpan(
        span.name, context, parent, resource, attributes, events,
        kind=_KINDS.get(span.kind, trace_api.SpanKind.INTERNAL), status=_status(span),
        start_time=span.start_unix_nano, end_time=span.end_unix_nano,
        instrumentation_scope=scope,
    )  # fmt: skip


def _forwarded_resource(resource: Resource) -> SdkResource:
    return SdkResource({**resource.attributes, OUTPUT_ATTRIBUTE: FORWARDED_OUTPUT})


def _event(event: SpanEvent) -> Event:
    return Event(event.name, event.attributes, event.time_unix_nano)


def _status(span: Span) -> Status:
    if span.status_code == StatusCode.ERROR.value:
        return Status(StatusCode.ERROR, span.status_message or None)
    return Status(StatusCode.OK if span.status_code == StatusCode.OK.value else StatusCode.UNSET)


def _qualified(outcome: Outcome) -> str:
    return f"{outcome.spec_id}/{outcome.evaluator}" if outcome.spec_id else outcome.evaluator


def _error_type(error: str) -> str:
    # The runner writes "ExceptionType: message"; anything else is _OTHER (semconv fallback).
    head, sep, _ = error.partition(":")
    return head if sep and head.isidentifier() else "_OTHER"
