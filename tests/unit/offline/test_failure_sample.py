"""``FailureSample``: the failing traces a report lists, the same however they were split."""

from __future__ import annotations

import pickle

from collector.offline.reports.summary import FailedCheck, FailureSample, TraceFailure


def failure(number: int) -> TraceFailure:
    check = FailedCheck("shop", "tool_match", 0.0, None)
    return TraceFailure(f"{number:032x}", "shop-agent", None, (check,))


def sample(numbers: list[int], limit: int = 3) -> FailureSample:
    kept = FailureSample(limit)
    for number in numbers:
        kept.add(failure(number))
    return kept


def test_the_smallest_ids_are_kept_whatever_the_order() -> None:
    kept = sample([9, 4, 7, 1, 8])
    assert [f.trace_id for f in kept.items()] == [failure(n).trace_id for n in (1, 4, 7)]
    assert kept.total == 5


def test_a_trimmed_part_is_smaller_and_merges_as_the_whole_part() -> None:
    parts = [[12, 3, 15, 8, 5], [2, 14, 6, 11, 4]]
    whole = sample(parts[0])
    whole.merge(sample(parts[1]))
    trimmed = [sample(part) for part in parts]
    for part in trimmed:
        before = len(pickle.dumps(part))
        part.trim()
        assert len(pickle.dumps(part)) < before  # five held, three sent
    merged = pickle.loads(pickle.dumps(trimmed[0]))
    merged.merge(pickle.loads(pickle.dumps(trimmed[1])))
    assert merged.items() == whole.items()
    assert merged.total == whole.total == 10
