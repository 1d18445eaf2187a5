"""The OTLP sink: evaluation results into the tracing backend, next to the trace.

Per evaluated trace (``outputs.otlp``):

- ``evaluation_spans``: one span in the evaluated trace, child of its root span,
  with a ``gen_ai.evaluation.result`` event per result;
- ``log_records``: the same results as ``gen_ai.evaluation.result`` log records
  parented to the root span;
- ``forward_spans``: the trace's own spans, root annotated with ``evald.*`` counts,
  so evald can sit inline between agents and the backend.

A session's results (a merged trajectory, through ``ResultSink.write_session``'s default
and, for judges, ``write_outcomes``) take the same forms in the session's last
turn, marked as session results (``otlp_records.session_attributes``).

Everything leaves from resource ``service.name=evald``, ``evald.output=…`` (see
``collector.receivers.own_output``) so evald's receivers drop it if it ever comes back.
Writes never block: export is batched on the SDK's threads (``otlp_export``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from opentelemetry.sdk._logs import ReadWriteLogRecord
from opentelemetry.sdk.resources import Resource as SdkResource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from collector.config.settings import OtlpOutput
from collector.core.build_info import installed_version
from collector.core.records import Trace
from collector.receivers.own_output import EVALUATION_OUTPUT, OUTPUT_ATTRIBUTE, SCOPE_NAME
from collector.sinks.base import ResultSink
from collector.sinks.otlp_export import Channel, log_channel, span_channel
from collector.sinks.otlp_records import (
    evaluation_log_records,
    evaluation_span,
    forwarded_spans,
    session_attributes,
    summary_attributes,
)
from collector.telemetry.registry import Telemetry
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory


class OtlpSink(ResultSink):
    """Sends evaluation spans, log records and forwarded spans to ``config.endpoint``.

    ``write`` / ``write_outcomes`` / ``write_trace`` may be called from any thread.
    ``close`` exports what is queued within ``config.timeout`` and counts the rest
    as dropped; safe to call twice.
    """

    name = "otlp"

    def __init__(
        self,
        config: OtlpOutput,
        telemetry: Telemetry,
        *,
        clock_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._config = config
        self._clock_ns = clock_ns
        version = installed_version()
        self._resource = SdkResource(
            {
                "service.name": "evald",
                "service.version": version,
                OUTPUT_ATTRIBUTE: EVALUATION_OUTPUT,
            }
        )
        self._scope = InstrumentationScope(SCOPE_NAME, version)
        needs_spans = config.evaluation_spans or config.forward_spans
        self._spans: Channel[ReadableSpan] | None = (
            span_channel(config, telemetry) if needs_spans else None
        )
        self._logs: Channel[ReadWriteLogRecord] | None = (
            log_channel(config, telemetry) if config.log_records else None
        )

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Publish the results of one trace (no forwarding: the spans are not at hand),
        or of a session (its merged trajectory): in its last turn's trace, marked."""
        if not outcomes:
            return
        now = self._clock_ns()
        resource, scope = self._resource, self._scope
        # Sessions reach here through ResultSink.write_session's default, and a session's
        # judge results later through write_outcomes: the trajectory tells.
        extra = session_attributes(trajectory)
        if self._spans is not None and self._config.evaluation_spans:
            self._spans.submit(
                evaluation_span(trajectory, outcomes, resource, scope, now, extra=extra)
            )
        if self._logs is not None:
            for record in evaluation_log_records(
                trajectory, outcomes, resource, scope, now, extra=extra
            ):
                self._logs.submit(record)

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Later results (a judge's) get their own evaluation span in the same trace."""
        self.write(trajectory, outcomes)

    def write_trace(
        self, trace: Trace, trajectory: Trajectory, outcomes: Sequence[Outcome]
    ) -> None:
        """Forward the trace's spans (if configured), then publish its results."""
        if self._spans is not None and self._config.forward_spans:
            summary = summary_attributes(outcomes)
            for span in forwarded_spans(trace, trajectory.root_span_id, summary):
                self._spans.submit(span)
        self.write(trajectory, outcomes)

    def close(self) -> None:
        self.close_within(self._config.timeout)

    def close_within(self, timeout: float) -> None:
        """Export what is queued within ``timeout`` seconds in all, both signals at
        once; what is left is counted as dropped."""
        channels = [channel for channel in (self._spans, self._logs) if channel is not None]
        deadline = time.monotonic() + timeout
        closers = [
            threading.Thread(target=channel.close_by, args=(deadline,), name="evald-otlp-close")
            for channel in channels
        ]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()
