"""The terminal table and the Markdown report (a CI job summary, a PR comment)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from collector.offline.reports.model import Report
from collector.offline.reports.summary import FailedCheck, MetricSummary, TraceFailure

HEADER = ("spec", "evaluator", "n", "mean", "std", "min", "max", "pass rate (95% CI)", "fail",
          "error", "gate")  # fmt: skip
TABLE_FAILURES_SHOWN = 20  # the JSON report lists more; the table must stay readable


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def pass_rate(metric: MetricSummary) -> str:
    rate, interval = metric.pass_rate, metric.pass_interval
    if rate is None or interval is None:
        return "-"
    return f"{percent(rate)} [{percent(interval[0])}, {percent(interval[1])}]"


def metric_rows(report: Report) -> list[tuple[str, ...]]:
    """One row of cells per (spec, evaluator), in report order."""
    gate = {check.key: check.ok for check in report.verdict.checks}
    rows: list[tuple[str, ...]] = []
    for key, metric in report.summary.sorted_metrics():
        stats = metric.scores
        present = stats.count > 0
        rows.append((
            key[0] or "-", key[1], str(metric.count),
            number(stats.mean if present else None), number(stats.std),
            number(stats.minimum if present else None), number(stats.maximum if present else None),
            pass_rate(metric), str(metric.failed), str(metric.errors),
            "ok" if gate.get(key, True) else "FAIL",
        ))  # fmt: skip
    return rows


def check_text(check: FailedCheck) -> str:
    spec = f"{check.spec}/" if check.spec else ""
    if check.error is not None:
        return f"{spec}{check.evaluator}: error: {check.error}"
    return f"{spec}{check.evaluator}={number(check.score)}"


def failure_detail(failure: TraceFailure) -> str:
    """Service, input and failed checks of one failing trace (its id not included)."""
    checks = ", ".join(check_text(check) for check in failure.checks)
    said = f' "{failure.input}"' if failure.input else ""
    return f"{failure.service}{said}: {checks}"


def totals_line(report: Report) -> str:
    summary, read = report.summary, report.summary.read
    logs = ""
    if summary.log_records or read.dropped_log_records:
        logs = f" and {summary.log_records} log records ({read.dropped_log_records} dropped)"
    return (
        f"{summary.traces} traces from {summary.spans} spans{logs} in {read.files} file(s); "
        f"{read.rejected_spans} spans rejected, {read.corrupt_total} corrupt records, "
        f"{summary.untraceable} traces without a trajectory"
    )


def verdict_line(report: Report) -> str:
    failed = report.verdict.failed
    if not failed:
        return "gate: PASS"
    return f"gate: FAIL ({len(failed)} check(s) failed)"


def write_table(report: Report, out: TextIO) -> None:
    """Aligned columns for a terminal, then the gate, failing traces and read problems."""
    rows = [HEADER, *metric_rows(report)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    for row in rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")
    out.write(f"\n{totals_line(report)}\n{verdict_line(report)}\n")
    for check in report.verdict.failed:
        out.write(f"  {check.key[0] or '-'}/{check.key[1]}: {check.reason}\n")
    failures = report.summary.failures
    listed = [f"{failure.trace_id} {failure_detail(failure)}" for failure in failures.items()]
    _write_list(out, "failing traces", failures.total, listed)
    read = report.summary.read
    _write_list(out, "corrupt records skipped", read.corrupt_total, read.corrupt)
    summary = report.summary
    _write_list(out, "traces skipped (no agent run)", summary.skipped, summary.skipped_traces)


def _write_list(out: TextIO, title: str, total: int, lines: Sequence[str]) -> None:
    if not total:
        return
    shown = lines[:TABLE_FAILURES_SHOWN]
    out.write(f"\n{title}: {total}\n")
    for line in shown:
        out.write(f"  {line}\n")
    if total > len(shown):
        out.write(f"  … and {total - len(shown)} more (see --report json)\n")


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_markdown(report: Report, out: TextIO) -> None:
    """GitHub-flavoured Markdown: the metric table, the gate, failing traces."""
    out.write(f"## evald replay: {'PASS' if report.verdict.ok else 'FAIL'}\n\n")
    out.write(f"{totals_line(report)}.\n\n")
    out.write("| " + " | ".join(HEADER) + " |\n")
    out.write("|" + "|".join("---" if i < 2 else "--:" for i in range(len(HEADER))) + "|\n")
    for row in metric_rows(report):
        out.write("| " + " | ".join(_md_cell(cell) for cell in row) + " |\n")
    if report.verdict.failed:
        out.write("\n### Failed checks\n\n")
        for check in report.verdict.failed:
            out.write(f"- `{check.key[0] or '-'}/{check.key[1]}`: {_md_cell(check.reason)}\n")
    failures = report.summary.failures
    if failures.total:
        out.write(f"\n### Failing traces ({failures.total})\n\n")
        for failure in failures.items()[:TABLE_FAILURES_SHOWN]:
            out.write(f"- `{failure.trace_id}` {_md_cell(failure_detail(failure))}\n")
        if failures.total > TABLE_FAILURES_SHOWN:
            out.write(f"- … and {failures.total - TABLE_FAILURES_SHOWN} more\n")
    if report.summary.read.corrupt_total:
        out.write(f"\n{report.summary.read.corrupt_total} corrupt record(s) skipped.\n")
    if report.summary.skipped:
        out.write(f"\n{report.summary.skipped} trace(s) skipped: no agent run.\n")
