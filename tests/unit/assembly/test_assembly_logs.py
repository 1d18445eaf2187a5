"""Log records in the TraceAssembler: held with their trace, joined to their span as events
on release, in any arrival order; bounded like spans; late, unjoined and orphaned counted."""

from __future__ import annotations

import pytest
from support.assembly_kit import IDLE, MAX_AGE, Harness, events_of, record, span

from collector.assembly.log_join import as_event, join
from collector.core.records import CompletionReason, SpanEvent, Trace
from collector.receivers.handoff import ConsumeResult

CHOICE = "gen_ai.choice"
DETAILS = "gen_ai.client.inference.operation.details"


@pytest.fixture
def h() -> Harness:
    return Harness()


def only_trace(h: Harness) -> Trace:
    (trace,) = h.done
    return trace


# --- join ---------------------------------------------------------------------------


def test_a_record_becomes_an_event_of_its_span(h: Harness) -> None:
    assert h.add_logs(
        record(1, 2, time=7, name=DETAILS, body={"content": "hi"}, **{"gen_ai.x": "y"})
    ) == ConsumeResult(accepted=1)
    h.add(span(1, 1), span(1, 2, parent=1))
    h.at(IDLE)
    trace = only_trace(h)
    child = next(s for s in trace.spans if s.span_id == span(1, 2).span_id)
    assert child.events == (SpanEvent(DETAILS, 7, {"content": "hi", "gen_ai.x": "y"}),)
    assert events_of(trace) == {2: [(DETAILS, 7)]}
    assert h.metric("evald_log_records_unjoined_total") == 0


@pytest.mark.parametrize("records_first", [True, False], ids=["records-first", "spans-first"])
def test_the_joined_trace_does_not_depend_on_arrival_order(records_first: bool) -> None:
    h = Harness()
    spans = [span(1, 1), span(1, 2, parent=1), span(1, 3, parent=1)]
    records = [record(1, 3, time=30), record(1, 2, time=20), record(1, 2, time=10)]
    if records_first:
        h.add_logs(*records)
        h.add(*spans)
    else:
        h.add(*spans)
        h.add_logs(*records)
    h.at(IDLE)
    assert events_of(only_trace(h)) == {2: [(CHOICE, 10), (CHOICE, 20)], 3: [(CHOICE, 30)]}


def test_records_are_appended_after_the_spans_own_events_in_time_order(h: Harness) -> None:
    own = span(1, 1)._replace(events=(SpanEvent("exception", 50, {}),))
    h.add(own)
    h.add_logs(record(1, 1, time=40, name="b"), record(1, 1, time=5, name="a"))
    h.add_logs(record(1, 1, time=5, name="c"))  # same time: arrival order
    h.at(IDLE)
    assert events_of(only_trace(h)) == {1: [("exception", 50), ("a", 5), ("c", 5), ("b", 40)]}


@pytest.mark.parametrize("span_id", [None, 99], ids=["no-span-id", "unknown-span-id"])
def test_unjoined_records_go_to_the_root_span_and_are_counted(
    h: Harness, span_id: int | None
) -> None:
    h.add(span(1, 2, parent=1, start=0), span(1, 1, start=10), span(1, 3, parent=1, start=20))
    h.add_logs(record(1, span_id, time=1), record(1, 3, time=2))
    h.at(IDLE)
    assert events_of(only_trace(h)) == {1: [(CHOICE, 1)], 3: [(CHOICE, 2)]}
    assert h.metric("evald_log_records_unjoined_total") == 1


def test_without_a_root_unjoined_records_go_to_the_earliest_span(h: Harness) -> None:
    h.add(span(1, 3, parent=1, start=20), span(1, 2, parent=1, start=10))
    h.add_logs(record(1, None))
    h.at(MAX_AGE)
    assert events_of(only_trace(h)) == {2: [(CHOICE, 0)]}
    assert h.metric("evald_log_records_unjoined_total") == 1


def test_with_two_roots_unjoined_records_go_to_the_earliest_root() -> None:
    spans = [span(1, 5, start=9), span(1, 4, parent=5, start=0), span(1, 6, start=3)]
    joined = join(spans, [record(1, None)])
    assert [len(s.events) for s in joined.spans] == [0, 0, 1]
    assert joined.unjoined == 1


def test_unjoined_records_are_counted_once_when_the_offer_first_has_no_room(h: Harness) -> None:
    h.add(span(1, 1))
    h.add_logs(record(1, 42))
    h.full = True
    h.at(IDLE)
    h.at(IDLE + 1)
    assert h.done == [] and h.metric("evald_log_records_unjoined_total") == 0
    h.full = False
    h.at(IDLE + 2)
    assert events_of(only_trace(h)) == {1: [(CHOICE, 0)]}
    assert h.metric("evald_log_records_unjoined_total") == 1


# --- the body ------------------------------------------------------------------------


def test_a_kvlist_body_joins_the_attributes_which_win_a_clash() -> None:
    event = as_event(record(1, 1, body={"content": "c", "role": "body"}, role="attribute"))
    assert event.attributes == {"content": "c", "role": "attribute"}


@pytest.mark.parametrize(
    ("body", "attributes"),
    [("text", {"body": "text", "k": 1}), ((1, 2), {"body": (1, 2), "k": 1}),
     (None, {"k": 1}), ({}, {"k": 1})],
    ids=["string", "array", "none", "empty-kvlist"],
)  # fmt: skip
def test_another_body_is_kept_under_body(body: object, attributes: dict[str, object]) -> None:
    assert as_event(record(1, 1, body=body, k=1)).attributes == attributes  # type: ignore[arg-type]


def test_an_attribute_named_body_wins_over_a_scalar_body() -> None:
    assert as_event(record(1, 1, body="b", body_attr=1)).attributes == {"body": "b", "body_attr": 1}
    clash = record(1, 1, body="b")._replace(attributes={"body": "attribute"})
    assert as_event(clash).attributes == {"body": "attribute"}


# --- timers ---------------------------------------------------------------------------


def test_records_do_not_restart_the_idle_timer(h: Harness) -> None:
    h.add(span(1, 1))
    h.at(IDLE - 1)
    h.add_logs(record(1, 1))
    h.at(IDLE)
    assert h.released() == [(1, CompletionReason.IDLE)]
    assert only_trace(h).last_seen == 0.0


def test_a_trace_of_records_waits_for_its_spans_until_max_age(h: Harness) -> None:
    h.add_logs(record(1, 1))
    h.at(IDLE * 3)  # no idle completion without a root span
    assert h.done == [] and h.assembler.in_flight_traces == 1
    h.add(span(1, 1))  # the root: the idle timer starts now
    h.at(IDLE * 4 - 0.001)
    assert h.done == []
    h.at(IDLE * 4)
    assert h.released() == [(1, CompletionReason.IDLE)]
    assert only_trace(h).first_seen == 0.0  # the max age counts from the first record


def test_a_trace_of_records_only_is_not_offered_and_its_records_are_orphaned(h: Harness) -> None:
    h.add_logs(record(1, 1), record(1, None))
    h.at(MAX_AGE)
    assert h.done == [] and h.assembler.in_flight_traces == 0
    assert h.assembler.in_flight_log_records == 0
    assert h.metric("evald_log_records_orphaned_total") == 2
    assert h.metric("evald_traces_completed_total", reason="max_age") == 0
    # Not remembered as decided: its spans, arriving now, still make a trace.
    assert h.add(span(1, 1)) == ConsumeResult(accepted=1)
    assert h.metric("evald_spans_late_total") == 0
    h.at(MAX_AGE + IDLE)
    assert h.released() == [(1, CompletionReason.IDLE)]


def test_flush_orphans_traces_of_records_only(h: Harness) -> None:
    h.add_logs(record(1, 1))
    h.add(span(2, 1))
    h.flush()
    assert h.released() == [(2, CompletionReason.SHUTDOWN)]
    assert h.metric("evald_log_records_orphaned_total") == 1


# --- late ---------------------------------------------------------------------------


def test_late_records_are_accepted_counted_and_not_merged(h: Harness) -> None:
    h.add(span(1, 1))
    h.at(IDLE)
    assert h.add_logs(record(1, 1), record(1, None)) == ConsumeResult(accepted=2)
    assert h.metric("evald_log_records_late_total") == 2
    assert h.assembler.in_flight_traces == 0
    h.flush()
    assert h.released() == [(1, CompletionReason.IDLE)]  # nothing new was released


# --- limits ---------------------------------------------------------------------------


def test_records_count_toward_max_spans_per_trace() -> None:
    h = Harness(max_spans_per_trace=3)
    h.add(span(1, 1), span(1, 2, parent=1))
    result = h.add_logs(record(1, 1), record(1, 2), record(2, 1))
    assert result is not None
    assert (result.accepted, result.rejected) == (2, 1)
    assert "exceeds max_spans_per_trace=3 (spans and log records)" in result.message
    assert h.add(span(1, 3, parent=1)) == ConsumeResult(
        0, 1, f"trace {(1).to_bytes(16, 'big').hex()} exceeds max_spans_per_trace=3"
    )


def test_records_count_toward_max_spans_and_evict_like_spans() -> None:
    h = Harness(max_spans=3)
    h.add(span(1, 1))
    h.add_logs(record(2, 1), record(2, 2))
    assert h.add_logs(record(3, 1)) == ConsumeResult(accepted=1)
    assert h.released() == [(1, CompletionReason.EVICTED)]
    assert h.metric("evald_traces_evicted_total", limit="max_spans") == 1
    assert h.add(span(4, 1)) == ConsumeResult(accepted=1)  # evicts trace 2: records only
    assert h.metric("evald_log_records_orphaned_total") == 2
    assert (h.assembler.in_flight_spans, h.assembler.in_flight_log_records) == (1, 1)


def test_a_batch_of_records_larger_than_the_limits_is_refused_not_dropped() -> None:
    h = Harness(max_spans=2)
    result = h.add_logs(record(1, 1), record(1, 2), record(1, 3))
    assert result == ConsumeResult(2, 1, "assembler full: max_spans=2")


def test_records_of_a_new_trace_past_max_traces_evict_the_oldest() -> None:
    h = Harness(max_traces=1)
    h.add(span(1, 1))
    assert h.add_logs(record(2, 1)) == ConsumeResult(accepted=1)
    assert h.released() == [(1, CompletionReason.EVICTED)]


def test_records_are_not_stored_when_an_eviction_finds_no_room() -> None:
    h = Harness(max_traces=1)
    h.add(span(1, 1))
    h.full = True
    assert h.add_logs(record(2, 1)) is None
    assert h.assembler.in_flight_log_records == 0 and h.assembler.in_flight_traces == 1


def test_gauges_follow_records_in_flight(h: Harness) -> None:
    h.add(span(1, 1))
    h.add_logs(record(1, 1), record(1, 1), record(2, 1))
    assert h.metric("evald_log_records_in_flight") == 3
    assert h.metric("evald_spans_in_flight") == 1
    assert h.metric("evald_traces_in_flight") == 2
    h.flush()
    assert h.metric("evald_log_records_in_flight") == 0
