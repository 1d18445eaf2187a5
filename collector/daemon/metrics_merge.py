"""``/metrics`` of a daemon with workers: the front's families and every worker's, as one
exposition (ADR 0018).

Workers ship their registry's families (pickled ``prometheus_client`` metrics, with
exemplars) when the front renders a scrape; ``merged`` makes them one:

- counters, histograms and summaries are summed per label set; a histogram
  bucket keeps the newest exemplar any process had for it (its trace id is in the
  worker that evaluated it, and in no other);
- gauges that are amounts held (``SUMMED_GAUGES``: spans, traces, sessions in
  flight, queue depths, request bytes) are summed: memory and backlog of the
  whole daemon;
- every other gauge, and the reload counter (``evald_specs_loaded``,
  ``evald_config_reloads_total``, a judge's remaining budget, the
  ``process_*`` memory and descriptors, build info …) gets a ``worker`` label
  (``front``, ``0``, ``1`` …): a sum would be wrong. Of the front's own gauges
  only those it owns (``FRONT_GAUGES``, ``process_*``, ``python_*``) are shown.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import CollectorRegistry
from prometheus_client.samples import Sample

from collector.daemon.render import pause

SUMMED_GAUGES = frozenset(
    {
        "evald_spans_in_flight",
        "evald_traces_in_flight",
        "evald_log_records_in_flight",
        "evald_sessions_in_flight",
        "evald_session_turns_in_flight",
        "evald_evaluation_queue_depth",
        "evald_judge_queue_depth",
        "evald_receiver_bytes_in_flight",
    }
)
FRONT_GAUGES = frozenset(
    {"evald_receiver_bytes_in_flight", "evald_workers", "evald_build_info", "python_info"}
)
# Counters of something every worker does once for the daemon (a SIGHUP reload): a sum
# would count one reload N times, so they are shown per worker too.
# The process collector's network counters read the namespace's interfaces: the same
# bytes in every process.
PER_WORKER_COUNTERS = frozenset(
    {"evald_config_reloads", "process_network_receive_bytes", "process_network_transmit_bytes"}
)
FRONT_ONLY = frozenset({"evald_workers"})  # kept by the front; zero in every worker
WORKER_LABEL = "worker"
_PAUSE_EVERY = 32  # samples merged between two pauses (~50 µs)
_SampleKey = tuple[str, frozenset[tuple[str, str]]]


def merged(
    front: Iterable[Metric], workers: Sequence[tuple[int, Iterable[Metric]]]
) -> Iterator[Metric]:
    """``front``'s families and each ``(index, families)`` of ``workers`` as one, a
    family at a time: a renderer that pauses between families lets other threads in
    between two families' merges."""
    parts: dict[str, list[tuple[str, Metric]]] = {}
    for metric in front:
        if metric.type == "gauge" and not _front_owns(metric.name):
            continue
        parts.setdefault(metric.name, []).append(("front", metric))
    for index, families in workers:
        for metric in families:
            if metric.name not in FRONT_ONLY:
                parts.setdefault(metric.name, []).append((str(index), metric))
    for family in parts.values():
        yield _merge_family(family)


def unpickled(body: bytes) -> Iterator[Metric]:
    """A worker's ``METRICS`` answer (its families, each pickled), one family at a
    time, pausing between them as the render on this thread does."""
    for family in pickle.loads(body):
        pause()
        yield pickle.loads(family)


def registry_of(families: Callable[[], Iterable[Metric]]) -> CollectorRegistry:
    """A registry whose ``collect`` yields what ``families()`` returns, called then (on
    the thread that renders, not on the event loop that asked the workers)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Lazy(families))
    return registry


class _Lazy:
    def __init__(self, families: Callable[[], Iterable[Metric]]) -> None:
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return self._families()


def _front_owns(name: str) -> bool:
    return name in FRONT_GAUGES or name.startswith(("process_", "python_"))


def _merge_family(parts: list[tuple[str, Metric]]) -> Metric:
    """The samples of one family from every process: summed, or labelled per worker."""
    first = parts[0][1]
    metric = Metric(first.name, first.documentation, first.type, first.unit)
    per_worker = first.name in PER_WORKER_COUNTERS or (
        first.type in ("gauge", "info") and first.name not in SUMMED_GAUGES
    )
    samples: dict[_SampleKey, Sample] = {}
    for worker, part in parts:
        for index, original in enumerate(part.samples):
            if index % _PAUSE_EVERY == 0:
                pause()
            sample = original
            if per_worker:  # its own series per process: a sum would be wrong
                sample = original._replace(labels={**original.labels, WORKER_LABEL: worker})
            key = (sample.name, frozenset(sample.labels.items()))
            held = samples.get(key)
            samples[key] = sample if held is None else _sum(held, sample)
    metric.samples = list(samples.values())
    return metric


def _sum(held: Sample, new: Sample) -> Sample:
    exemplar = held.exemplar
    if new.exemplar is not None and (exemplar is None or _when(new) >= _when(held)):
        exemplar = new.exemplar
    name, labels, value, timestamp, _, native = held  # (``_replace`` costs 2x this)
    return Sample(name, labels, value + new.value, timestamp, exemplar, native)


def _when(sample: Sample) -> float:
    """When the sample's exemplar was observed (0 when it does not say)."""
    stamp = sample.exemplar.timestamp if sample.exemplar is not None else None
    return 0.0 if stamp is None else float(stamp)
