"""TraceAssembler: completion rules, limits, late spans, callback failures (ManualClock)."""

from __future__ import annotations

import pytest
from support.assembly_kit import IDLE, MAX_AGE, Harness, span, tid

from collector.core.records import CompletionReason, Trace
from collector.receivers.handoff import ConsumeResult


@pytest.fixture
def h() -> Harness:
    return Harness()


# --- completion ---------------------------------------------------------------------


def test_trace_with_root_completes_after_idle_timeout(h: Harness) -> None:
    h.add(span(1, 2, parent=1), span(1, 1))
    h.at(IDLE - 0.001)
    assert h.done == []
    h.at(IDLE)
    assert h.released() == [(1, CompletionReason.IDLE)]
    trace = h.done[0]
    assert [s.span_id for s in trace.spans] == [span(1, 2).span_id, span(1, 1).span_id]
    assert (trace.first_seen, trace.last_seen) == (0.0, 0.0)
    assert h.assembler.in_flight_traces == h.assembler.in_flight_spans == 0
    assert h.metric("evald_traces_completed_total", reason="idle") == 1


def test_new_span_restarts_the_idle_timer(h: Harness) -> None:
    h.add(span(1, 1))
    h.at(3.0)
    h.add(span(1, 2, parent=1))
    h.at(3.0 + IDLE - 0.001)
    assert h.done == []
    h.at(3.0 + IDLE)
    assert h.released() == [(1, CompletionReason.IDLE)]
    assert h.done[0].last_seen == 3.0


def test_trace_without_root_waits_until_max_age(h: Harness) -> None:
    h.add(span(1, 2, parent=1), span(1, 3, parent=1))
    for now in range(1, int(MAX_AGE)):
        h.at(float(now))
    assert h.done == []
    h.at(MAX_AGE)
    assert h.released() == [(1, CompletionReason.MAX_AGE)]
    assert len(h.done[0].spans) == 2


def test_busy_trace_is_cut_at_max_age(h: Harness) -> None:
    h.add(span(1, 1))
    for second in range(1, int(MAX_AGE)):
        h.at(float(second))
        h.add(span(1, 100 + second, parent=1))  # never quiet for idle_timeout
    assert h.done == []
    h.at(MAX_AGE)
    assert h.released() == [(1, CompletionReason.MAX_AGE)]
    assert h.done[0].last_seen == MAX_AGE - 1


def test_complete_trace_past_max_age_is_reported_idle(h: Harness) -> None:
    h.add(span(1, 1), span(2, 2, parent=1))
    h.at(MAX_AGE + 1.0)  # a late tick, or a replay clock jump
    assert h.released() == [(1, CompletionReason.IDLE), (2, CompletionReason.MAX_AGE)]


def test_out_of_order_arrival_across_adds_forms_one_trace(h: Harness) -> None:
    h.add(span(1, 3, parent=2), span(2, 1))
    h.at(1.0)
    h.add(span(1, 2, parent=1))
    h.at(2.0)
    h.add(span(1, 1))  # the root arrives last
    h.at(2.0 + IDLE)
    assert h.released() == [(2, CompletionReason.IDLE), (1, CompletionReason.IDLE)]
    trace = h.done[1]
    assert [int.from_bytes(s.span_id, "big") for s in trace.spans] == [3, 2, 1]
    assert (trace.first_seen, trace.last_seen) == (0.0, 2.0)


def test_duplicates_are_accepted_but_stored_once(h: Harness) -> None:
    result = h.add(span(1, 1), span(1, 2, parent=1), span(1, 2, parent=1))
    assert result == ConsumeResult(accepted=3)
    h.at(4.0)
    assert h.add(span(1, 1), span(1, 2, parent=1)) == ConsumeResult(accepted=2)  # a retry
    assert h.assembler.in_flight_spans == 2
    assert h.metric("evald_spans_in_flight") == 2
    h.at(IDLE)  # the retried duplicates did not restart the idle timer
    assert h.released() == [(1, CompletionReason.IDLE)]
    assert len(h.done[0].spans) == 2


def test_a_duplicate_is_counted_as_a_retry_or_as_an_id_collision(h: Harness) -> None:
    """The same span again is an OTLP retry; another span under the same trace and span
    ids (an SDK whose id generator repeats across processes) is stored once all the
    same, so the second is lost: counted apart, so that an alert can tell."""
    h.add(span(1, 1), span(1, 2, parent=1, start=5))
    h.add(span(1, 2, parent=1, start=5))  # the same span
    assert h.metric("evald_spans_duplicate_total", kind="retry") == 1
    assert h.metric("evald_spans_duplicate_total", kind="id_collision") == 0
    h.add(span(1, 2, parent=1, start=9), span(1, 3, parent=1, start=9))  # reused id, new
    assert h.metric("evald_spans_duplicate_total", kind="id_collision") == 1
    assert h.assembler.in_flight_spans == 3


# --- limits ---------------------------------------------------------------------------


def test_spans_past_max_spans_per_trace_are_rejected() -> None:
    h = Harness(max_spans_per_trace=3)
    h.add(span(1, 1), span(1, 2, parent=1))
    result = h.add(*(span(1, i, parent=1) for i in range(3, 6)), span(2, 1))
    assert (result.accepted, result.rejected) == (2, 2)
    assert result.message == f"trace {tid(1).hex()} exceeds max_spans_per_trace=3"
    assert h.assembler.in_flight_spans == 4
    h.flush(CompletionReason.SHUTDOWN)
    assert [len(t.spans) for t in h.done] == [3, 1]


def test_rejection_message_quotes_a_few_traces() -> None:
    h = Harness(max_spans_per_trace=1)
    result = h.add(*(span(t, i, parent=9) for t in range(5) for i in range(2)))
    assert (result.accepted, result.rejected) == (5, 5)
    assert result.message.count("exceeds max_spans_per_trace=1") == 3
    assert result.message.endswith("; and 2 more")


def test_max_traces_evicts_oldest_first_seen() -> None:
    h = Harness(max_traces=2)
    h.add(span(1, 1, parent=9))
    h.at(1.0)
    h.add(span(2, 1, parent=9))
    h.at(2.0)
    h.add(span(1, 2, parent=9))  # recent activity does not change first-seen order
    assert h.add(span(3, 1, parent=9)) == ConsumeResult(accepted=1)
    assert h.released() == [(1, CompletionReason.EVICTED)]
    assert h.assembler.in_flight_traces == 2
    assert h.metric("evald_traces_evicted_total", limit="max_traces") == 1
    assert h.metric("evald_traces_completed_total", reason="evicted") == 1


def test_eviction_spares_traces_the_batch_adds_to() -> None:
    h = Harness(max_traces=2)
    h.add(span(1, 1, parent=9), span(2, 1, parent=9))
    h.add(span(1, 2, parent=9), span(3, 1, parent=9))
    assert h.released() == [(2, CompletionReason.EVICTED)]
    h.flush(CompletionReason.SHUTDOWN)
    assert [len(t.spans) for t in h.done[1:]] == [2, 1]  # trace 1 was not split


def test_max_spans_evicts_only_what_the_batch_needs() -> None:
    h = Harness(max_spans=5)
    h.add(span(1, 1, parent=9), span(1, 2, parent=9))
    h.add(span(2, 1, parent=9), span(2, 2, parent=9))
    h.add(*(span(3, i, parent=9) for i in range(3)))
    assert h.released() == [(1, CompletionReason.EVICTED)]
    assert h.assembler.in_flight_spans == 5
    assert h.metric("evald_traces_evicted_total", limit="max_spans") == 1
    assert h.metric("evald_traces_evicted_total", limit="max_traces") == 0


def test_batch_larger_than_the_limits_is_refused_not_dropped() -> None:
    h = Harness(max_spans=3)
    result = h.add(*(span(1, i, parent=9) for i in range(5)))
    assert (result.accepted, result.rejected) == (3, 2)
    assert result.message == "assembler full: max_spans=3"
    assert h.assembler.in_flight_spans == 3


# --- late spans -------------------------------------------------------------------------


def test_late_span_is_counted_and_not_merged(h: Harness) -> None:
    h.add(span(1, 1))
    h.at(IDLE)
    assert h.add(span(1, 2, parent=1)) == ConsumeResult(accepted=1)
    assert h.metric("evald_spans_late_total") == 1
    assert h.assembler.in_flight_traces == 0
    h.flush(CompletionReason.END_OF_INPUT)
    assert len(h.done) == 1


def test_late_span_starts_a_new_trace_without_memory() -> None:
    h = Harness(decided_traces_memory=0)
    h.add(span(1, 1))
    h.at(IDLE)
    h.add(span(1, 2, parent=1))
    assert h.metric("evald_spans_late_total") == 0
    assert h.assembler.in_flight_traces == 1


def test_decided_memory_is_bounded() -> None:
    h = Harness(decided_traces_memory=2)
    h.add(span(1, 1), span(2, 1), span(3, 1))
    h.at(IDLE)
    assert len(h.done) == 3
    h.add(span(3, 2, parent=1), span(2, 2, parent=1))  # remembered: late
    assert h.metric("evald_spans_late_total") == 2
    h.add(span(1, 2, parent=1))  # forgotten: a new trace
    assert h.metric("evald_spans_late_total") == 2
    assert h.assembler.in_flight_traces == 1


# --- flush, deadlines, gauges ------------------------------------------------------------


def test_flush_releases_everything_oldest_first(h: Harness) -> None:
    h.add(span(2, 1, parent=9))
    h.at(1.0)
    h.add(span(1, 1), span(3, 1, parent=9))
    h.flush(CompletionReason.SHUTDOWN)
    assert h.released() == [(2, "shutdown"), (1, "shutdown"), (3, "shutdown")]
    assert h.assembler.in_flight_traces == h.assembler.in_flight_spans == 0
    assert h.metric("evald_traces_in_flight") == h.metric("evald_spans_in_flight") == 0
    assert h.metric("evald_traces_completed_total", reason="shutdown") == 3


def test_next_deadline(h: Harness) -> None:
    assert h.assembler.next_deadline() is None
    h.clock.set(10.0)
    h.add(span(1, 2, parent=1))  # rootless: only max age can release it
    assert h.assembler.next_deadline() == 10.0 + MAX_AGE
    h.clock.set(12.0)
    h.add(span(2, 1))
    assert h.assembler.next_deadline() == 12.0 + IDLE
    h.at(12.0 + IDLE)
    assert h.released() == [(2, CompletionReason.IDLE)]
    assert h.assembler.next_deadline() == 10.0 + MAX_AGE
    h.at(10.0 + MAX_AGE)
    assert h.assembler.next_deadline() is None


def test_gauges_follow_in_flight_counts(h: Harness) -> None:
    h.add(span(1, 1), span(1, 2, parent=1), span(2, 1, parent=9))
    assert h.metric("evald_traces_in_flight") == 2
    assert h.metric("evald_spans_in_flight") == 3
    h.at(IDLE)
    assert h.metric("evald_traces_in_flight") == h.assembler.in_flight_traces == 1
    assert h.metric("evald_spans_in_flight") == h.assembler.in_flight_spans == 1


# --- an offer without room --------------------------------------------------------------


def test_an_offer_without_room_in_tick_keeps_the_trace(h: Harness) -> None:
    h.add(span(1, 1), span(1, 2, parent=1))
    h.full = True
    h.clock.set(IDLE)
    h.tick()
    assert (h.assembler.in_flight_traces, h.assembler.in_flight_spans) == (1, 2)
    assert h.metric("evald_traces_in_flight") == 1
    assert h.metric("evald_traces_completed_total", reason="idle") == 0
    assert h.assembler.next_deadline() == IDLE  # still due: the caller can retry
    h.full = False
    h.tick()
    assert h.released() == [(1, CompletionReason.IDLE)]
    assert len(h.done[0].spans) == 2
    assert h.assembler.in_flight_traces == 0


def test_an_offer_without_room_during_eviction_stores_nothing_of_the_batch() -> None:
    h = Harness(max_traces=2)
    h.add(span(1, 1, parent=9), span(2, 1, parent=9))
    h.full = True
    assert h.add(span(3, 1, parent=9), span(2, 2, parent=9)) is None
    assert h.assembler.in_flight_traces == 2
    assert h.assembler.in_flight_spans == 2
    assert h.metric("evald_traces_evicted_total", limit="max_traces") == 0
    h.full = False
    assert h.add(span(3, 1, parent=9), span(2, 2, parent=9)) == ConsumeResult(accepted=2)
    assert h.released() == [(1, CompletionReason.EVICTED)]
    h.flush(CompletionReason.SHUTDOWN)
    assert [len(t.spans) for t in h.done[1:]] == [2, 1]


def test_an_offer_without_room_in_flush_keeps_the_rest(h: Harness) -> None:
    h.add(span(1, 1), span(2, 1), span(3, 1))
    calls = 0

    def second_has_no_room(trace: Trace) -> bool:
        nonlocal calls
        calls += 1
        if calls == 2:
            return False
        h.done.append(trace)
        return True

    h.assembler.flush(CompletionReason.SHUTDOWN, second_has_no_room)
    assert h.released() == [(1, CompletionReason.SHUTDOWN)]
    assert h.assembler.in_flight_traces == 2
    h.flush(CompletionReason.SHUTDOWN)
    assert [r[0] for r in h.released()] == [1, 2, 3]


# --- cost ------------------------------------------------------------------------------


def test_tick_never_revisits_parked_rootless_traces(h: Harness) -> None:
    # White-box: the idle index is what tick() walks; rootless traces must not be in
    # it, so tick cost does not grow with them. Only max age may release them.
    h.add(*(span(t, 1, parent=9) for t in range(10_000)))
    h.clock.set(1.0)
    h.add(span(10_001, 1))
    assert h.assembler._traces.idle_candidates == 1
    for step in range(1_000):
        h.at(2.0 + step * (MAX_AGE - 3.0) / 1_000)
    assert h.released() == [(10_001, CompletionReason.IDLE)]
    assert h.assembler._traces.idle_candidates == 0
    assert h.assembler.in_flight_traces == 10_000
    h.add(span(5, 2, parent=9))  # a non-root span does not make it idle-eligible
    assert h.assembler._traces.idle_candidates == 0
    h.add(span(5, 3))  # its root does
    assert h.assembler._traces.idle_candidates == 1


def test_late_spans_interleaved_with_new_ones_are_each_counted(h: Harness) -> None:
    # A batch is planned per trace (each trace looked up once): a released trace's
    # spans are each counted late wherever they fall in the batch, and a root that is
    # not the first span of its trace in the batch still starts the idle timer.
    h.add(span(1, 1))
    h.at(IDLE)
    assert h.released() == [(1, CompletionReason.IDLE)]
    batch = (span(1, 2, parent=1), span(2, 2, parent=1), span(1, 3, parent=1), span(2, 1))
    assert h.add(*batch) == ConsumeResult(accepted=4)
    assert h.metric("evald_spans_late_total") == 2
    assert h.assembler.in_flight_spans == 2
    h.at(2 * IDLE)
    assert h.released() == [(1, CompletionReason.IDLE), (2, CompletionReason.IDLE)]
    assert sorted(s.span_id for s in h.done[1].spans) == [
        (1).to_bytes(8, "big"),
        (2).to_bytes(8, "big"),
    ]
