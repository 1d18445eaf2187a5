"""Recognising evald's own output, so it is never evaluated again.

Everything evald exports over OTLP comes from a resource carrying the attribute
``evald.output``: ``evaluation`` on evaluation spans and log records (whose
instrumentation scope is ``evald``), ``forwarded`` on the agent spans it
forwards. When a Collector or backend routes that back into evald's receivers
(easy to do by accident when evald sits in a Collector pipeline), the receivers
drop those spans and log records and count them (``evald_spans_dropped_total`` /
``evald_log_records_dropped_total{reason="own_output"}``) rather than assembling
phantom traces or counting late spans.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, TypeVar

from collector.core.records import Resource

OUTPUT_ATTRIBUTE = "evald.output"
EVALUATION_OUTPUT = "evaluation"
FORWARDED_OUTPUT = "forwarded"
SCOPE_NAME = "evald"


def is_own_output(resource: Resource) -> bool:
    """True for a resource evald marked as its own output."""
    return OUTPUT_ATTRIBUTE in resource.attributes


class _FromResource(Protocol):
    @property
    def resource(self) -> Resource: ...


_Item = TypeVar("_Item", bound=_FromResource)  # a Span or a LogRecord


def without_own_output(items: list[_Item]) -> tuple[list[_Item], int]:
    """``items`` (spans or log records) without those of resources marked as evald
    output, and how many went.

    Returns ``items`` itself when nothing is marked (the common case, no copy).
    """
    if not any(is_own_output(resource) for resource in _resources(items)):
        return items, 0
    kept = [item for item in items if not is_own_output(item.resource)]
    return kept, len(items) - len(kept)


def _resources(items: Sequence[_FromResource]) -> Iterator[Resource]:
    # The decoders share one Resource object among the items of a ResourceSpans
    # (ResourceLogs), so checking on identity changes touches each resource about once.
    last: Resource | None = None
    for item in items:
        if item.resource is not last:
            last = item.resource
            yield last
