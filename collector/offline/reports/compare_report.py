"""``evald compare`` output: terminal table, Markdown, JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple, TextIO

from collector.offline.compare import Comparison, Side

COMPARE_FORMATS = ("table", "json", "markdown")
ALPHA = 0.05  # the significance level the verdict column uses
HEADER = ("spec", "evaluator", "pairs", "A wins", "B wins", "ties", "A preferred (95% CI)",
          "p-value", "mean A", "mean B", "only A", "only B", "verdict")  # fmt: skip
_P_VALUE_NOTE = "p-value: two-sided exact binomial test on non-tied pairs (no preference: p = 0.5)"


class CompareReport(NamedTuple):
    a: Side
    b: Side
    align_by: str
    comparisons: Sequence[Comparison]


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _wins(count: int, ratio: float | None) -> str:
    return f"{count} ({_percent(ratio)})"


def verdict(comparison: Comparison) -> str:
    """ "A better" / "B better" when p < ALPHA, else "no difference"."""
    tally = comparison.tally
    if tally.a + tally.b == 0 or comparison.p_value >= ALPHA:
        return "no significant difference"
    return "A better" if tally.a > tally.b else "B better"


def _preferred(comparison: Comparison) -> str:
    tally, interval = comparison.tally, comparison.interval("a")
    if interval is None:
        return "-"
    share = tally.a / (tally.a + tally.b)
    return f"{_percent(share)} [{_percent(interval[0])}, {_percent(interval[1])}]"


def rows(report: CompareReport) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for c in report.comparisons:
        out.append((
            c.key[0] or "-", c.key[1], str(c.tally.pairs),
            _wins(c.tally.a, c.ratio("a")), _wins(c.tally.b, c.ratio("b")),
            _wins(c.tally.ties, c.ratio("tie")), _preferred(c), f"{c.p_value:.3g}",
            _number(c.mean_a), _number(c.mean_b), str(c.only_a), str(c.only_b), verdict(c),
        ))  # fmt: skip
    return out


def _sides(report: CompareReport) -> list[str]:
    return [
        f"A = {report.a.label} ({report.a.records} results)",
        f"B = {report.b.label} ({report.b.records} results)",
        f"aligned by {report.align_by}",
    ]


def write_compare_table(report: CompareReport, out: TextIO) -> None:
    for line in _sides(report):
        out.write(line + "\n")
    out.write("\n")
    table = [HEADER, *rows(report)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    for row in table:
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")
    if not report.comparisons:
        out.write("(no evaluator scored the same items on both sides)\n")
    out.write(f"\n{_P_VALUE_NOTE}\n")


def write_compare_markdown(report: CompareReport, out: TextIO) -> None:
    out.write("## evald compare\n\n")
    for line in _sides(report):
        out.write(f"- {line}\n")
    out.write("\n| " + " | ".join(HEADER) + " |\n")
    out.write("|" + "|".join("---" if i < 2 else "--:" for i in range(len(HEADER))) + "|\n")
    for row in rows(report):
        out.write("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |\n")
    out.write(f"\n{_P_VALUE_NOTE}.\n")


def _comparison(c: Comparison) -> dict[str, Any]:
    interval_a, interval_b = c.interval("a"), c.interval("b")
    return {
        "spec": c.key[0],
        "evaluator": c.key[1],
        "pairs": c.tally.pairs,
        "a_wins": c.tally.a,
        "b_wins": c.tally.b,
        "ties": c.tally.ties,
        "ratios": {"a": c.ratio("a"), "b": c.ratio("b"), "tie": c.ratio("tie")},
        "a_preferred_ci95": list(interval_a) if interval_a else None,
        "b_preferred_ci95": list(interval_b) if interval_b else None,
        "p_value": c.p_value,
        "mean_a": c.mean_a,
        "mean_b": c.mean_b,
        "only_a": c.only_a,
        "only_b": c.only_b,
        "verdict": verdict(c),
    }


def write_compare_json(report: CompareReport, out: TextIO) -> None:
    document = {
        "schema_version": 1,
        "a": {"label": report.a.label, "results": report.a.records},
        "b": {"label": report.b.label, "results": report.b.records},
        "aligned_by": report.align_by,
        "alpha": ALPHA,
        "comparisons": [_comparison(c) for c in report.comparisons],
    }
    json.dump(document, out, indent=2, ensure_ascii=False)
    out.write("\n")


def write_compare(report: CompareReport, fmt: str, out: TextIO) -> None:
    """Render ``report`` as one of ``COMPARE_FORMATS``."""
    writers = {
        "table": write_compare_table,
        "json": write_compare_json,
        "markdown": write_compare_markdown,
    }
    writers[fmt](report, out)
