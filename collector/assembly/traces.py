"""Trace assembly: group spans by trace id and release each trace once, when it is complete.

OTLP has no "trace complete" signal, so, like the Collector's ``groupbytrace`` and
``tail_sampling`` processors, completion is decided by timers on an injected clock.
See docs/adr/0003-trace-completion.md for the rules and why. Log records of a trace
are held with it and become events of its spans on release (docs/adr/0014-otlp-logs.md).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence, Sized
from typing import Generic, TypeVar

from prometheus_client import Counter

from collector.assembly.log_join import join
from collector.assembly.timed_index import TimedIndex
from collector.config.settings import Assembly
from collector.core.clock import Clock
from collector.core.records import CompletionReason, LogRecord, Span, Trace
from collector.receivers.handoff import ConsumeResult
from collector.telemetry.registry import Telemetry

_MAX_MESSAGES = 3  # distinct rejection messages quoted in one ConsumeResult

Offer = Callable[[Trace], bool]
"""Where released traces go: True when ``trace`` was taken (or dropped and counted),
False when there is no room now; the trace then stays held and releasing stops."""


class _Pending:
    """A trace being assembled; mutable, owned by one ``TraceAssembler``."""

    __slots__ = ("first_seen", "has_root", "last_seen", "records", "spans", "trace_id")

    def __init__(self, trace_id: bytes, now: float) -> None:
        self.trace_id = trace_id
        self.spans: dict[bytes, Span] = {}  # span id -> span, in arrival order
        self.records: list[LogRecord] = []  # in arrival order
        self.has_root = False
        self.first_seen = now
        self.last_seen = now

    @property
    def size(self) -> int:
        """What the trace holds toward the span limits: spans and log records."""
        return len(self.spans) + len(self.records)


# What a batch holds per trace id: new spans by span id, or new log records.
_New = TypeVar("_New", dict[bytes, Span], list[LogRecord])
_Item = TypeVar("_Item", Span, LogRecord)


class _Batch(Generic[_New]):
    """What one ``add`` / ``add_logs`` call will store, worked out before any state changes."""

    __slots__ = ("collisions", "late", "messages", "new", "rejected", "retries")

    def __init__(self) -> None:
        self.new: dict[bytes, _New] = {}  # trace id -> what it gains
        self.late = 0
        self.retries = self.collisions = 0  # spans already held (``_duplicate``)
        self.rejected = 0
        self.messages: dict[str, None] = {}  # an ordered set

    def duplicate(self, held: Span, again: Span) -> None:
        """A span received with a held span's ids: the same span again (an OTLP retry:
        same name and start), or another one under reused ids."""
        if again.name == held.name and again.start_unix_nano == held.start_unix_nano:
            self.retries += 1
        else:
            self.collisions += 1

    def count(self, late: Counter, duplicate: Counter) -> None:
        """Add what this batch did not store to the counters."""
        if self.late:
            late.inc(self.late)
        if self.retries or self.collisions:
            duplicate.labels(kind="retry").inc(self.retries)
            duplicate.labels(kind="id_collision").inc(self.collisions)

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
    """A bounded map trace id -> spans (and log records); each trace is released once,
    to an ``Offer``.

    Completion (reasons in ``Trace.completed_by``):

    * ``IDLE``: a root span (``parent_span_id == b""``) was received -- spans are
      exported when they end, so the root has ended -- and no new span arrived for
      ``idle_timeout``;
    * ``MAX_AGE``: ``max_trace_age`` after the first span or log record, root or not;
    * ``EVICTED``: released early because adding a batch would exceed ``max_traces``
      or ``max_spans``; the oldest traces (by first seen) go first, except traces the
      batch itself adds to (evicting those would split them in two);
    * ``flush(reason)``: everything still held (shutdown, end of replay input).

    Spans are deduplicated by ``(trace_id, span_id)`` (OTLP is at-least-once): a
    duplicate is reported accepted but stored once and does not restart the idle timer.
    Spans past ``max_spans_per_trace`` are reported rejected; so are spans that still
    do not fit the global limits after eviction (only a batch larger than the limits).

    Log records (``add_logs``, docs/adr/0014-otlp-logs.md) count as spans toward the
    limits, are not deduplicated (no id) and start no timer. On release they become
    events of their spans (``collector.assembly.log_join``). A trace of records only
    is never offered: its records are counted as orphaned and its id not remembered.

    Late spans and records: the ids of the last ``decided_traces_memory`` released
    traces are remembered. A span or record for one of them is not merged (the trace
    was already evaluated) and not retried by the sender: it is reported accepted and
    counted (``evald_spans_late_total``, ``evald_log_records_late_total``). With a
    memory of 0 a late span starts a new trace.

    ``add``, ``add_logs``, ``tick`` and ``flush`` take the ``offer`` that released
    traces go to. A trace is offered before it is removed: an offer that has no room
    (returns False) leaves that trace, and every later one, held for the next call. In
    ``add`` / ``add_logs`` evictions happen before anything of the batch is stored, so
    when they cannot be offered nothing is stored and the result is None: the caller
    refuses the batch.

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
        self._record_count = 0
        self._records_gauged = 0  # what the records gauge shows: most traffic has none
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

    @property
    def in_flight_log_records(self) -> int:
        return self._record_count

    def add(self, spans: Sequence[Span], offer: Offer) -> ConsumeResult | None:
        """Take ``spans`` (any traces, any order); O(len(spans)) plus evictions.

        Returns accepted (stored, duplicate or late) and rejected counts; None when a
        trace evicted to make room could not be offered: then no span was stored.
        """
        batch = self._plan(spans)
        late = self._telemetry.assembly.spans_late
        return self._take(batch, len(spans), offer, self._store_spans, late)

    def add_logs(self, records: Sequence[LogRecord], offer: Offer) -> ConsumeResult | None:
        """Take log records (any traces, any order), as ``add`` takes spans."""
        batch = self._plan_logs(records)
        late = self._telemetry.assembly.log_records_late
        return self._take(batch, len(records), offer, self._store_records, late)

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

    def _take(
        self,
        batch: _Batch[_New],
        received: int,
        offer: Offer,
        store: Callable[[_Batch[_New]], None],
        late: Counter,
    ) -> ConsumeResult | None:
        try:
            if not self._make_room(batch.new, offer):
                return None
            store(batch)
        finally:
            self._update_gauges()
        batch.count(late, self._telemetry.assembly.spans_duplicate)
        return batch.result(received)

    def _plan(self, spans: Sequence[Span]) -> _Batch[dict[bytes, Span]]:
        batch: _Batch[dict[bytes, Span]] = _Batch()
        limit, decided = self._config.max_spans_per_trace, self._decided
        batch_new = batch.new
        # Per trace of the batch, looked up once (a request holds a few traces of many
        # spans): what the assembler holds of it and how many items that is.
        held_of: dict[bytes, tuple[dict[bytes, Span] | None, int]] = {}
        for span in spans:
            trace_id = span.trace_id
            new = batch_new.get(trace_id)
            if new is None:
                pending = self._traces.get(trace_id)
                if pending is None and trace_id in decided:
                    decided.move_to_end(trace_id)  # still receiving: keep remembering it
                    batch.late += 1
                    continue
                new = batch_new[trace_id] = {}
                held_of[trace_id] = (None, 0) if pending is None else (pending.spans, pending.size)
            held, size = held_of[trace_id]
            span_id = span.span_id
            seen = new.get(span_id) or (held.get(span_id) if held is not None else None)
            if seen is not None:
                batch.duplicate(seen, span)
                continue
            if len(new) + size >= limit:
                batch.reject(1, f"trace {trace_id.hex()} exceeds max_spans_per_trace={limit}")
                continue
            new[span_id] = span
        return batch

    def _plan_logs(self, records: Sequence[LogRecord]) -> _Batch[list[LogRecord]]:
        batch: _Batch[list[LogRecord]] = _Batch()
        limit, decided = self._config.max_spans_per_trace, self._decided
        for record in records:
            trace_id = record.trace_id
            held = self._traces.get(trace_id)
            if held is None and trace_id in decided:
                decided.move_to_end(trace_id)  # still receiving: keep remembering it
                batch.late += 1
                continue
            new = batch.new.setdefault(trace_id, [])
            if len(new) + (held.size if held else 0) >= limit:
                batch.reject(
                    1,
                    f"trace {trace_id.hex()} exceeds max_spans_per_trace={limit} "
                    "(spans and log records)",
                )
                continue
            new.append(record)
        return batch

    def _make_room(self, new: Mapping[bytes, Sized], offer: Offer) -> bool:
        """Evict the oldest traces the batch does not touch until the batch fits; False
        when an evicted trace could not be offered."""
        max_traces, max_spans = self._config.max_traces, self._config.max_spans
        traces = len(self._traces) + sum(1 for trace_id in new if trace_id not in self._traces)
        held = self._held + sum(map(len, new.values()))
        victims: list[tuple[_Pending, str]] = []
        # Choose first, release after: releasing removes entries from the dict we walk.
        for pending in self._traces:
            if traces <= max_traces and held <= max_spans:
                break
            if pending.trace_id not in new:
                victims.append((pending, "max_traces" if traces > max_traces else "max_spans"))
                traces -= 1
                held -= pending.size
        for pending, limit in victims:
            if not self._release(pending, CompletionReason.EVICTED, offer):
                return False
            self._telemetry.assembly.traces_evicted.labels(limit=limit).inc()
        return True

    def _store_spans(self, batch: _Batch[dict[bytes, Span]]) -> None:
        now = self._clock.now()
        for trace_id, new in batch.new.items():
            spans = self._fit(trace_id, list(new.values()), batch)
            if not spans:
                continue
            pending = self._pending(trace_id, now)
            if len(spans) == len(new):  # the usual case: all of them fit
                pending.spans.update(new)
            else:
                pending.spans.update((span.span_id, span) for span in spans)
            self._span_count += len(spans)
            pending.last_seen = now
            # ``Span.is_root`` is ``not parent_span_id``; read directly, once per span.
            pending.has_root = pending.has_root or not all(s.parent_span_id for s in spans)
            if pending.has_root:
                self._traces.touch(trace_id, pending, now)

    def _store_records(self, batch: _Batch[list[LogRecord]]) -> None:
        now = self._clock.now()
        for trace_id, new in batch.new.items():
            records = self._fit(trace_id, new, batch)
            if records:
                # No touch: records neither start nor restart the idle timer.
                self._pending(trace_id, now).records.extend(records)
                self._record_count += len(records)

    def _fit(self, trace_id: bytes, items: list[_Item], batch: _Batch[_New]) -> list[_Item]:
        # Only reached when the batch alone exceeds a global limit: nothing is left
        # to evict, so the excess is refused (the sender hears it) rather than dropped.
        if trace_id not in self._traces and len(self._traces) >= self._config.max_traces:
            batch.reject(len(items), f"assembler full: max_traces={self._config.max_traces}")
            return []
        room = self._config.max_spans - self._held
        if len(items) > room:
            batch.reject(len(items) - room, f"assembler full: max_spans={self._config.max_spans}")
            return items[:room]
        return items

    def _pending(self, trace_id: bytes, now: float) -> _Pending:
        pending = self._traces.get(trace_id)
        if pending is None:
            pending = _Pending(trace_id, now)
            self._traces.insert(trace_id, pending)
        return pending

    @property
    def _held(self) -> int:
        return self._span_count + self._record_count

    # --- release ------------------------------------------------------------------

    def _release(self, pending: _Pending, reason: CompletionReason, offer: Offer) -> bool:
        if not pending.spans:
            self._discard(pending)  # log records only: nothing to evaluate
            return True
        spans, unjoined = tuple(pending.spans.values()), 0
        if pending.records:
            spans, unjoined = join(spans, pending.records)
        trace = Trace(pending.trace_id, spans, reason, pending.first_seen, pending.last_seen)
        # Offered before any bookkeeping: without room the trace stays held exactly
        # as it was and the next tick/flush offers it again.
        if not offer(trace):
            return False
        self._discard(pending)
        self._remember(pending.trace_id)
        self._completed[reason].inc()
        if unjoined:
            self._telemetry.assembly.log_records_unjoined.inc(unjoined)
        return True

    def _discard(self, pending: _Pending) -> None:
        self._traces.remove(pending.trace_id)
        self._span_count -= len(pending.spans)
        self._record_count -= len(pending.records)
        if not pending.spans and pending.records:
            self._telemetry.assembly.log_records_orphaned.inc(len(pending.records))

    def _remember(self, trace_id: bytes) -> None:
        if self._config.decided_traces_memory == 0:
            return
        self._decided[trace_id] = None
        if len(self._decided) > self._config.decided_traces_memory:
            self._decided.popitem(last=False)

    def _update_gauges(self) -> None:
        assembly = self._telemetry.assembly
        assembly.traces_in_flight.set(len(self._traces))
        assembly.spans_in_flight.set(self._span_count)
        if self._record_count != self._records_gauged:
            assembly.log_records_in_flight.set(self._record_count)
            self._records_gauged = self._record_count
