"""Log records of one kind are rate limited, and the drops are reported."""

from __future__ import annotations

import logging

from collector.core.clock import ManualClock
from collector.daemon.log_limits import RateLimitFilter


def record(message: str, *args: object, name: str = "aiohttp.server") -> logging.LogRecord:
    return logging.LogRecord(name, logging.ERROR, __file__, 1, message, args, None)


def test_a_burst_passes_then_records_are_dropped_and_reported() -> None:
    clock = ManualClock(0.0)
    limit = RateLimitFilter(burst=3, interval=60.0, clock=clock)
    passed = [
        limit.filter(record("Error handling request from %s", "10.0.0.1")) for _ in range(100)
    ]
    assert passed.count(True) == 3
    assert limit.filter(record("another message"))  # other kinds have their own budget
    clock.advance(60.0)
    next_one = record("Error handling request from %s", "10.0.0.2")
    assert limit.filter(next_one)
    assert next_one.getMessage() == (
        "Error handling request from 10.0.0.2 [97 more like this were not logged]"
    )


def test_templates_beyond_the_memory_start_over_rather_than_grow() -> None:
    limit = RateLimitFilter(burst=1, interval=60.0, clock=ManualClock(0.0))
    for n in range(5000):
        assert limit.filter(record(f"pre-formatted {n}"))
    assert len(limit._windows) <= 1024
