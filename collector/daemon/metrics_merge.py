"""``/metrics`` of a daemon with workers: the front's families and every worker's, as one
exposition (ADR 0018).

Workers ship their registry's families (pickled ``prometheus_client`` metrics, with
exemplars) when the front renders a scrape; ``merge`` makes them one:

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

from collections.abc import Iterable, Sequence

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import CollectorRegistry
from prometheus_client.samples import Sample

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
_SampleKey = tuple[str, tuple[tuple[str, str], ...]]


def merge(front: Iterable[Metric], workers: Sequence[tuple[int, Iterable[Metric]]]) -> list[Metric]:
    """One list of families: ``front``'s and each ``(index, families)`` of ``workers``."""
    merged: dict[str, tuple[Metric, dict[_SampleKey, Sample]]] = {}
    for metric in front:
        if metric.type == "gauge" and not _front_owns(metric.name):
            continue
        _add(merged, metric, "front")
    for index, families in workers:
        for metric in families:
            if metric.name not in FRONT_ONLY:
                _add(merged, metric, str(index))
    out = []
    for metric, samples in merged.values():
        metric.samples = list(samples.values())
        out.append(metric)
    return out


def registry_of(families: list[Metric]) -> CollectorRegistry:
    """A registry whose ``collect`` yields ``families`` (what the encoders read)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(families))
    return registry


class _Fixed:
    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return self._families


def _front_owns(name: str) -> bool:
    return name in FRONT_GAUGES or name.startswith(("process_", "python_"))


def _add(
    merged: dict[str, tuple[Metric, dict[_SampleKey, Sample]]], metric: Metric, worker: str
) -> None:
    entry = merged.get(metric.name)
    if entry is None:
        entry = Metric(metric.name, metric.documentation, metric.type, metric.unit), {}
        merged[metric.name] = entry
    samples = entry[1]
    per_worker = metric.name in PER_WORKER_COUNTERS or (
        metric.type in ("gauge", "info") and metric.name not in SUMMED_GAUGES
    )
    for original in metric.samples:
        sample = original
        if per_worker:
            sample = original._replace(labels={**original.labels, WORKER_LABEL: worker})
        key = (sample.name, tuple(sorted(sample.labels.items())))
        held = samples.get(key)
        samples[key] = sample if held is None else _sum(held, sample)


def _sum(held: Sample, new: Sample) -> Sample:
    exemplar = held.exemplar
    if new.exemplar is not None and (exemplar is None or _when(new) >= _when(held)):
        exemplar = new.exemplar
    return held._replace(value=held.value + new.value, exemplar=exemplar)


def _when(sample: Sample) -> float:
    """When the sample's exemplar was observed (0 when it does not say)."""
    stamp = sample.exemplar.timestamp if sample.exemplar is not None else None
    return 0.0 if stamp is None else float(stamp)
