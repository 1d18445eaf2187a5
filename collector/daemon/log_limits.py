"""Per-request log records, rate limited: a hostile client cannot flood the log.

evald's own per-request logs go through ``RateLimitedLog``; the libraries' do not
(aiohttp logs every malformed request at ERROR with its traceback: 1 200 bad
requests were 380 KB of log). ``RateLimitFilter`` sits on the daemon's log
handlers: each (logger, message template) may emit ``burst`` records per
``interval``; the rest are dropped and counted, and the next record of that kind
says how many were.
"""

from __future__ import annotations

import logging
import threading

from collector.core.clock import Clock, MonotonicClock

_MAX_KEYS = 1024  # distinct templates remembered; past it, every window starts over


class RateLimitFilter(logging.Filter):
    """Lets at most ``burst`` records of one kind through every ``interval`` seconds."""

    def __init__(self, burst: int = 10, interval: float = 60.0, clock: Clock | None = None) -> None:
        super().__init__()
        self._burst = burst
        self._interval = interval
        self._clock = clock or MonotonicClock()
        self._lock = threading.Lock()
        # key → [window start, records let through in it, records dropped in it]
        self._windows: dict[tuple[str, str], list[float]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg)[:200])
        now = self._clock.now()
        with self._lock:
            window = self._windows.get(key)
            if window is None or now - window[0] >= self._interval:
                dropped = int(window[2]) if window is not None else 0
                if len(self._windows) >= _MAX_KEYS:
                    self._windows.clear()
                self._windows[key] = [now, 1, 0]
                if dropped:
                    record.msg = f"{record.msg} [{dropped} more like this were not logged]"
                return True
            if window[1] < self._burst:
                window[1] += 1
                return True
            window[2] += 1
            return False


def limit_log_floods(logger: logging.Logger | None = None) -> RateLimitFilter:
    """Put one ``RateLimitFilter`` on every handler of ``logger`` (the root logger)."""
    found = RateLimitFilter()
    for handler in (logger or logging.getLogger()).handlers:
        handler.addFilter(found)
    return found
