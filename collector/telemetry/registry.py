"""evald's own Prometheus metrics: one registry per process, the groups of every stage.

Names follow Prometheus conventions (``evald_`` namespace, base units, ``_total`` on
counters). Each group is declared beside the stage that owns it; ``Telemetry`` only
puts them on one registry and hands the whole to the components, which use their
own group (``telemetry.assembly.traces_completed``). Every metric is listed in the
metric tables of docs/metrics.md (tests/unit/telemetry/test_metric_docs.py).
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)

from collector.assembly.metrics import AssemblyMetrics
from collector.daemon.metrics import WorkerMetrics
from collector.processing.metrics import EvaluationMetrics
from collector.receivers.metrics import IngestMetrics
from collector.sinks.result_metrics import ResultMetrics
from collector.telemetry.build import BuildMetrics

# `_created` series double the exposition size and no dashboard uses them.
disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in prometheus-client


class Telemetry:
    """All of evald's metrics, registered on ``registry`` (a fresh one in tests).

    ``label_value_limit`` caps the distinct values of each traffic-derived label,
    ``label_value_length`` their length, ``series_limit`` the combinations of them a
    metric family holds (``telemetry.*``; see ``collector.telemetry.labels``).
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        label_value_limit: int = 200,
        *,
        label_value_length: int = 64,
        series_limit: int = 100,
    ) -> None:
        self.registry = registry or CollectorRegistry()
        self.build = BuildMetrics(self.registry)
        self.ingest = IngestMetrics(self.registry)
        self.assembly = AssemblyMetrics(self.registry)
        self.evaluation = EvaluationMetrics(self.registry)
        self.workers = WorkerMetrics(self.registry)
        self.results = ResultMetrics(
            self.registry,
            label_value_limit,
            label_value_length=label_value_length,
            series_limit=series_limit,
        )
        # process_* (memory, CPU, file descriptors), python_gc_*, python_info: the
        # collectors prometheus-client puts on its default registry, on this one.
        ProcessCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
