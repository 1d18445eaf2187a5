"""Label values that come from traffic, capped so a misbehaving client cannot explode
cardinality."""

from __future__ import annotations

import re
import threading

from prometheus_client import Counter

OVERFLOW_LABEL = "other"
UNKNOWN_LABEL = "unknown"
_SURROGATES = re.compile("[\ud800-\udfff]")


def encodable(value: str) -> str:
    """``value`` with lone surrogates (which UTF-8 cannot encode, so the exposition
    could not render) replaced by U+FFFD."""
    return _SURROGATES.sub("\ufffd", value)


class LabelGuard:
    """Caps the distinct values one traffic-derived label may take.

    The first ``limit`` distinct values pass through; later new values become
    ``other`` and are counted in ``evald_label_overflow_total{label}``. Values UTF-8
    cannot encode are made encodable first (``encodable``). Values are
    never forgotten, so a series, once created, keeps its label value (a series
    that switched to ``other`` later would break rates). Thread-safe.
    """

    def __init__(self, label: str, limit: int, overflow: Counter) -> None:
        self._label = label
        self._limit = limit
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._overflow = overflow.labels(label=label)

    def __call__(self, value: str | None) -> str:
        if not value:
            return UNKNOWN_LABEL
        if not value.isascii():
            value = encodable(value)
        if value in self._seen:
            return value
        with self._lock:
            if value in self._seen:
                return value
            if len(self._seen) < self._limit:
                self._seen.add(value)
                return value
        self._overflow.inc()
        return OVERFLOW_LABEL
