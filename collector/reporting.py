"""Human-readable replay summaries (the terminal table)."""

from __future__ import annotations

from typing import TextIO

from collector.replay import ReplayReport


def print_summary(report: ReplayReport, out: TextIO) -> None:
    """A table of evaluator results, then what was read and what was skipped."""
    rows = [("spec", "evaluator", "n", "mean", "pass", "fail", "error")]
    for (spec, evaluator), summary in sorted(
        report.evaluators.items(), key=lambda item: (item[0][0] or "", item[0][1])
    ):
        mean = summary.mean
        rows.append(
            (
                spec or "-",
                evaluator,
                str(summary.count),
                "-" if mean is None else f"{mean:.3f}",
                str(summary.passed),
                str(summary.failed),
                str(summary.errors),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        out.write("\n")
    out.write(
        f"\n{report.traces} traces from {report.spans} spans in {report.files} file(s)"
        f"; {report.rejected_spans} spans rejected, {len(report.corrupt_records)} corrupt records"
        f", {report.untraceable} traces without a trajectory\n"
    )
    for record in report.corrupt_records[:20]:
        out.write(f"  skipped {record}\n")
