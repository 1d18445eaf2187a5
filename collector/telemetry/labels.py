"""Label values that come from traffic, capped so a misbehaving client cannot explode
cardinality: each label's distinct values and their length (``LabelGuard``), and the
combinations of such labels a metric family may hold (``SeriesBudget``)."""

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
    """Caps the distinct values one traffic-derived label may take, and their length.

    Values longer than ``max_length`` are cut to it and counted in
    ``evald_label_values_truncated_total{label}``; values UTF-8 cannot encode are made
    encodable (``encodable``). The first ``limit`` distinct values then pass through;
    later new values become ``other`` and are counted in
    ``evald_label_overflow_total{label}``. Values are never forgotten, so a series,
    once created, keeps its label value (a series that switched to ``other`` later
    would break rates). Thread-safe.
    """

    def __init__(
        self,
        label: str,
        limit: int,
        overflow: Counter,
        max_length: int = 64,
        truncated: Counter | None = None,
    ) -> None:
        self._label = label
        self._limit = limit
        self._max_length = max_length
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._overflow = overflow.labels(label=label)
        self._truncated = None if truncated is None else truncated.labels(label=label)

    def __call__(self, value: str | None) -> str:
        if not value:
            return UNKNOWN_LABEL
        if len(value) > self._max_length:
            value = value[: self._max_length]
            if self._truncated is not None:
                self._truncated.inc()
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

    def passes(self, value: str | None) -> bool:
        """True when ``self(value)`` returns ``value`` itself, or ``unknown`` for no value,
        and counts nothing, now and from now on (values are never forgotten): a caller
        may then keep what it derived from ``value``."""
        return not value or (len(value) <= self._max_length and value in self._seen)


class SeriesBudget:
    """Caps the combinations of traffic-derived label values (``(service, agent)``,
    ``(service, tool)``) that the metric families labelled by them may hold.

    Each label is capped on its own (``LabelGuard``), but combinations multiply: 200
    services times 200 agents is 40 000 series per family. The first ``limit``
    distinct combinations keep their values; later ones become all ``other`` and
    each such observation is counted in ``evald_series_overflow_total{labels}``.
    Every family labelled by the same labels goes through one budget, so their
    series line up (a pair has its own series in all of them, or in none).
    Combinations are never forgotten, as in ``LabelGuard``. Thread-safe.
    """

    def __init__(self, labels: tuple[str, ...], limit: int, overflow: Counter) -> None:
        self._limit = limit
        self._seen: set[tuple[str, ...]] = set()
        self._lock = threading.Lock()
        self._overflow = overflow.labels(labels=",".join(labels))
        self._other = (OVERFLOW_LABEL,) * len(labels)

    def __call__(self, *values: str) -> tuple[str, ...]:
        """``values`` if the combination has (or gets) its own series, else all ``other``."""
        if values in self._seen:
            return values
        with self._lock:
            if values in self._seen:
                return values
            if len(self._seen) < self._limit:
                self._seen.add(values)
                return values
        self._overflow.inc()
        return self._other

    def passes(self, *values: str) -> bool:
        """True when ``self(*values)`` returns ``values`` and counts nothing, now and from
        now on (combinations are never forgotten)."""
        return values in self._seen
