"""Trace assembly: group spans by trace id and release each trace once, when it is complete.

OTLP has no "trace complete" signal, so, like the Collector's ``groupbytrace`` and
``tail_sampling`` processors, completion is decided by timers on an injected clock.
See docs/adr/0003-trace-completion.md for the rules and why.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

from collector.assembly.timed_index import TimedIndex
from collector.config.settings import Assembly
from collector.core.clock import Clock
from collector.core.records import CompletionReason, Span, Trace
from collector.receivers.handoff import ConsumeResult
from collector.telemetry.registry import Telemetry

_MAX_MESSAGES = 3  # distinct rejection messages quoted in one ConsumeResult

Offer = Callable[[Trace], bool]
"""Where released traces go: True when ``trace`` was taken (or dropped and counted),
False when there is no room now; the trace then stays held and releasing stops."""


class _Pending:
    """A trace being assembled; mutable, owned by one ``TraceAssembler``."""

    __slots__ = ("first_seen", "has_root", "last_seen", "spans", "trace_id")

    def __init__(self, trace_id: bytes, now: float) -> None:
        self.trace_id = trace_id
        self.spans: dict[bytes, Span] = {}  # span id -> span, in arrival order
        self.has_root = False
        self.first_seen = now
        self.last_seen = now

    def freeze(self, reason: CompletionReason) -> Trace:
        spans = tuple(self.spans.values())
        return Trace(self.trace_id, spans, reason, self.first_seen, self.last_seen)


class _Batch:
    """What one ``add`` call will store, worked out before any state changes."""

    __slots__ = ("late", "messages", "new", "rejected")

    def __init__(self) -> None:
        self.new: dict[bytes, dict[bytes, Span]] = {}  # trace id -> new spans by span id
        self.late = 0
        self.rejected = 0
        self.messages: dict[str, None] = {}  # an ordered set

    def reject(self, count: int, message: str) -> None:
        self.rejected += count
        self.messages[message] = None

    def result(self, received: int) -> ConsumeResult:
        messages = list(self.messages)
        text = "; ".join(messages[:_MAX_MESSAGES])
        if len(messages) > _MAX_MESSAGES:
            text += f"; and {len(messages) - _MAX_MESSAGES} more"
        return ConsumeResult(received - self.rejected, self.rejected, text)


class TraceAssembler:
    """A bounded map trace id -> spans; each trace is released once, to an ``Offer``.

    Completion (reasons in ``Trace.completed_by``):

    * ``IDLE``: a root span (``parent_span_id == b""``) was received -- spans are
      exported when they end, so the root has ended -- and no new span arrived for
      ``idle_timeout``;
    * ``MAX_AGE``: ``max_trace_age`` after the first span, root or not;
    * ``EVICTED``: released early because adding a batch would exceed ``max_traces``
      or ``max_spans``; the oldest traces (by first seen) go first, except traces the
      batch itself adds to (evicting those would split them in two);
    * ``flush(reason)``: everything still held (shutdown, end of replay input).

    Spans are deduplicated by ``(trace_id, span_id)`` (OTLP is at-least-once): a
    duplicate is reported accepted but stored once and does not restart the idle timer.
    Spans past ``max_spans_per_trace`` are reported rejected; so are spans that still
    do not fit the global limits after eviction (only a batch larger than the limits).

    Late spans: the ids of the last ``decided_traces_memory`` released traces are
    remembered. A span for one of them is not merged (the trace was already
    evaluated) and not retried by the sender: it is reported accepted and counted in
    ``evald_spans_late_total``. With a memory of 0 a late span starts a new trace.

    ``add``, ``tick`` and ``flush`` take the ``offer`` that released traces go to. A
    trace is offered before it is removed: an offer that has no room (returns False)
    leaves that trace, and every later one, held for the next call. In ``add``
    evictions happen before any span of the batch is stored, so when they cannot be
    offered ``add`` stores nothing and returns None: the caller refuses the batch.

    Not thread-safe by design: one owner (the daemon's event loop, or replay) calls
    every method. An offer must not call back into the assembler.
    """

    def __init__(self, config: Assembly, clock: Clock, telemetry: Telemetry) -> None:
        self._config = config
        self._clock = clock
        self._telemetry = telemetry
        # Every held trace by first-seen time (the max-age and eviction order); traces
        # with a root also by last activity (the idle order). Rootless traces cannot
        # complete on idle, so tick() never rescans them.
        self._traces: TimedIndex[bytes, _Pending] = TimedIndex(
            config.idle_timeout, config.max_trace_age
        )
        self._span_count = 0
        self._decided: OrderedDict[bytes, None] = OrderedDict()  # LRU of released ids
        # One child per reason: labels() validates and locks on every call.
        self._completed = {
            reason: telemetry.assembly.traces_completed.labels(reason=reason.value)
            for reason in CompletionReason
        }

    @property
    def in_flight_traces(self) -> int:
        return len(self._traces)

    @property
    def in_flight_spans(self) -> int:
        return self._span_count

    def add(self, spans: Sequence[Span], offer: Offer) -> ConsumeResult | None:
        """Take ``spans`` (any traces, any order); O(len(spans)) plus evictions.

        Returns accepted (stored, duplicate or late) and rejected counts; None when a
        trace evicted to make room could not be offered: then no span was stored.
        """
        batch = self._plan(spans)
        try:
            if not self._make_room(batch.new, offer):
                return None
            self._store(batch)
        finally:
            self._update_gauges()
        if batch.late:
            self._telemetry.assembly.spans_late.inc(batch.late)
        return batch.result(len(spans))

    def tick(self, offer: Offer) -> None:
        """Release every trace due at ``clock.now()``; cost O(released traces)."""
        now = self._clock.now()
        while (due := self._traces.due(now)) is not None:
            pending, idle = due
            if not self._release(
                pending, CompletionReason.IDLE if idle else CompletionReason.MAX_AGE, offer
            ):
                break
        self._update_gauges()  # once per tick, not per trace released

    def flush(self, reason: CompletionReason, offer: Offer) -> None:
        """Release every held trace, oldest first, with ``reason``."""
        while (pending := self._traces.oldest()) is not None and self._release(
            pending, reason, offer
        ):
            pass
        self._update_gauges()

    def next_deadline(self) -> float | None:
        """The earliest clock time at which ``tick`` could release a trace, or None.

        Exact: ``tick`` at this time releases the trace it belongs to. It may be in
        the past when an offer had no room and the trace is still held.
        """
        return self._traces.next_deadline()

    # --- add, in three steps: plan (no changes), make room (may raise), store --------

    def _plan(self, spans: Sequence[Span]) -> _Batch:
        batch = _Batch()
        limit = self._config.max_spans_per_trace
        for span in spans:
            trace_id = span.trace_id
            held = self._traces.get(trace_id)
            if held is None and trace_id in self._decided:
                self._decided.move_to_end(trace_id)  # still receiving: keep remembering it
                batch.late += 1
                continue
            new = batch.new.setdefault(trace_id, {})
            if span.span_id in new or (held is not None and span.span_id in held.spans):
                continue  # duplicate
            if len(new) + (len(held.spans) if held else 0) >= limit:
                batch.reject(1, f"trace {trace_id.hex()} exceeds max_spans_per_trace={limit}")
                continue
            new[span.span_id] = span
        return batch

    def _make_room(self, new: dict[bytes, dict[bytes, Span]], offer: Offer) -> bool:
        """Evict the oldest traces the batch does not touch until the batch fits; False
        when an evicted trace could not be offered."""
        max_traces, max_spans = self._config.max_traces, self._config.max_spans
        traces = len(self._traces) + sum(1 for trace_id in new if trace_id not in self._traces)
        spans = self._span_count + sum(map(len, new.values()))
        victims: list[tuple[_Pending, str]] = []
        # Choose first, release after: releasing removes entries from the dict we walk.
        for pending in self._traces:
            if traces <= max_traces and spans <= max_spans:
                break
            if pending.trace_id not in new:
                victims.append((pending, "max_traces" if traces > max_traces else "max_spans"))
                traces -= 1
                spans -= len(pending.spans)
        for pending, limit in victims:
            if not self._release(pending, CompletionReason.EVICTED, offer):
                return False
            self._telemetry.assembly.traces_evicted.labels(limit=limit).inc()
        return True

    def _store(self, batch: _Batch) -> None:
        now = self._clock.now()
        for trace_id, new in batch.new.items():
            fitting = self._fit(trace_id, list(new.values()), batch)
            if fitting:
                self._append(trace_id, fitting, now)

    def _fit(self, trace_id: bytes, spans: list[Span], batch: _Batch) -> list[Span]:
        # Only reached when the batch alone exceeds a global limit: nothing is left
        # to evict, so the excess is refused (the sender hears it) rather than dropped.
        if trace_id not in self._traces and len(self._traces) >= self._config.max_traces:
            batch.reject(len(spans), f"assembler full: max_traces={self._config.max_traces}")
            return []
        room = self._config.max_spans - self._span_count
        if len(spans) > room:
            batch.reject(len(spans) - room, f"assembler full: max_spans={self._config.max_spans}")
            return spans[:room]
        return spans

    def _append(self, trace_id: bytes, spans: list[Span], now: float) -> None:
        pending = self._traces.get(trace_id)
        if pending is None:
            pending = _Pending(trace_id, now)
            self._traces.insert(trace_id, pending)
        pending.spans.update((span.span_id, span) for span in spans)
        self._span_count += len(spans)
        pending.last_seen = now
        pending.has_root = pending.has_root or any(span.is_root for span in spans)
        if pending.has_root:
            self._traces.touch(trace_id, pending, now)

    # --- release ------------------------------------------------------------------

    def _release(self, pending: _Pending, reason: CompletionReason, offer: Offer) -> bool:
        # Offered before any bookkeeping: without room the trace stays held exactly
        # as it was and the next tick/flush offers it again.
        if not offer(pending.freeze(reason)):
            return False
        trace_id = pending.trace_id
        self._traces.remove(trace_id)
        self._span_count -= len(pending.spans)
        self._remember(trace_id)
        self._completed[reason].inc()
        return True

    def _remember(self, trace_id: bytes) -> None:
        if self._config.decided_traces_memory == 0:
            return
        self._decided[trace_id] = None
        if len(self._decided) > self._config.decided_traces_memory:
            self._decided.popitem(last=False)

    def _update_gauges(self) -> None:
        self._telemetry.assembly.traces_in_flight.set(len(self._traces))
        self._telemetry.assembly.spans_in_flight.set(self._span_count)
