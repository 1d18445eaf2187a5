"""``evald_build_info``: which evald runs, and whether its hot path is compiled."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge

from collector.core.build_info import build_labels, installed_version


class BuildMetrics:
    """Always-1 gauge whose labels say what was built."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.build_info = Gauge(
            "evald_build_info",
            "Always 1; labels: evald version, protobuf decoder (native | upb), normalizer and "
            "evaluators (compiled | interpreted): the interpreted fallbacks when built without "
            "a C compiler",
            ["version", "decoder", "normalizer", "evaluators"],
            registry=registry,
        )
        self.build_info.labels(version=installed_version(), **build_labels()).set(1)
