"""Recognising evald's own output, so it is never evaluated again.

Everything evald exports over OTLP comes from a resource carrying the attribute
``evald.output``: ``evaluation`` on evaluation spans and log records (whose
instrumentation scope is ``evald``), ``forwarded`` on the agent spans it
forwards. When a Collector or backend routes that back into evald's receivers
(easy to do by accident when evald sits in a Collector pipeline), the receivers
drop those spans and count them (``evald_spans_dropped_total{reason="own_output"}``)
rather than assembling phantom traces or counting late spans.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from collector.core.records import Resource, Span

OUTPUT_ATTRIBUTE = "evald.output"
EVALUATION_OUTPUT = "evaluation"
FORWARDED_OUTPUT = "forwarded"
SCOPE_NAME = "evald"


def is_own_output(resource: Resource) -> bool:
    """True for a resource evald marked as its own output."""
    return OUTPUT_ATTRIBUTE in resource.attributes


def without_own_output(spans: list[Span]) -> tuple[list[Span], int]:
    """``spans`` without those of resources marked as evald output, and how many went.

    Returns ``spans`` itself when nothing is marked (the common case, no copy).
    """
    if not any(is_own_output(resource) for resource in _resources(spans)):
        return spans, 0
    kept = [span for span in spans if not is_own_output(span.resource)]
    return kept, len(spans) - len(kept)


def _resources(spans: Sequence[Span]) -> Iterator[Resource]:
    # The decoders share one Resource object among the spans of a ResourceSpans,
    # so checking on identity changes touches each resource about once.
    last: Resource | None = None
    for span in spans:
        if span.resource is not last:
            last = span.resource
            yield last
