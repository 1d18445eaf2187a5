"""The JSON report: every figure of the table, machine-readable, plus the failing traces kept."""

from __future__ import annotations

import json
import math
from typing import Any, TextIO

from collector.offline.reports.model import Report
from collector.offline.reports.summary import MetricKey, MetricSummary, TraceFailure

SCHEMA_VERSION = 1


def _finite(value: float | None) -> float | None:
    # 12 significant digits: the same figures whatever the summation order (workers).
    return float(f"{value:.12g}") if value is not None and math.isfinite(value) else None


def _metric(key: MetricKey, metric: MetricSummary, report: Report) -> dict[str, Any]:
    stats = metric.scores
    info = report.catalogue.get(key)
    interval = metric.pass_interval
    return {
        "spec": key[0],
        "evaluator": key[1],
        "count": metric.count,
        "scored": stats.count,
        "mean": _finite(stats.mean) if stats.count else None,
        "std": _finite(stats.std),
        "min": _finite(stats.minimum),
        "max": _finite(stats.maximum),
        "passed": metric.passed,
        "failed": metric.failed,
        "errors": metric.errors,
        "no_verdict": metric.no_verdict,
        "pass_rate": _finite(metric.pass_rate),
        "pass_rate_ci95": [_finite(bound) for bound in interval] if interval else None,
        "threshold": info.threshold if info else None,
        "higher_is_better": info.higher_is_better if info else True,
    }


def _failure(failure: TraceFailure) -> dict[str, Any]:
    return {
        "trace_id": failure.trace_id,
        "service": failure.service,
        "input": failure.input,
        "failed": [check._asdict() for check in failure.checks],
    }


def document(report: Report) -> dict[str, Any]:
    """The report as JSON-ready data (``schema_version`` changes on incompatible edits)."""
    summary, read = report.summary, report.summary.read
    failures = summary.failures.items()
    return {
        "schema_version": SCHEMA_VERSION,
        "passed": report.verdict.ok,
        "totals": {
            "files": read.files,
            "payloads": read.payloads,
            "spans": summary.spans,
            "rejected_spans": read.rejected_spans,
            "log_records": summary.log_records,
            "dropped_log_records": read.dropped_log_records,
            "corrupt_records": read.corrupt_total,
            "traces": summary.traces,
            "untraceable_traces": summary.untraceable,
        },
        "metrics": [_metric(key, metric, report) for key, metric in summary.sorted_metrics()],
        "gate": [
            {"spec": c.key[0], "evaluator": c.key[1], "ok": c.ok, "reason": c.reason or None}
            for c in report.verdict.checks
        ],
        "failing_traces": {
            "total": summary.failures.total,
            "listed": len(failures),
            "traces": [_failure(failure) for failure in failures],
        },
        "corrupt_records": {"total": read.corrupt_total, "listed": read.corrupt},
        "skipped_traces": {"total": summary.skipped, "listed": summary.skipped_traces},
    }


def write_json(report: Report, out: TextIO) -> None:
    json.dump(document(report), out, indent=2, ensure_ascii=False, allow_nan=False)
    out.write("\n")
