"""``evald compare``: options and the run (see ``collector.compare``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from collector.compare import CompareInputError, Side, compare, load_side, load_split
from collector.reports.compare_report import COMPARE_FORMATS, CompareReport, write_compare

EXIT_OK, EXIT_USAGE = 0, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", nargs="+", type=Path, metavar="RESULTS",
        help="two result files (A B), or one with --split-by",
    )  # fmt: skip
    parser.add_argument(
        "--split-by",
        metavar="FIELD",
        help="compare the two groups of one file by this field or resource attribute "
        "(service.version, service, agent …)",
    )
    parser.add_argument(
        "--groups", nargs=2, metavar=("A", "B"), help="the two --split-by values to compare"
    )
    parser.add_argument(
        "--align-by",
        default="input",
        metavar="FIELD",
        help="what makes two results the same item: input (default), trace_id, session_id, "
        "or a resource attribute such as a dataset case id",
    )
    parser.add_argument(
        "--lower-is-better",
        action="append",
        default=[],
        metavar="EVALUATOR",
        help="evaluator ids where a lower score wins (built-ins such as latency are known)",
    )
    parser.add_argument("--report", choices=COMPARE_FORMATS, default="table")
    parser.add_argument("--report-out", type=Path, metavar="FILE", help="default: stdout")


def run(args: argparse.Namespace) -> int:
    """Compare and print; raises ``CompareInputError`` (exit 2) for unusable input."""
    a, b = _sides(args)
    lower = frozenset(args.lower_is_better) | _lower_is_better_builtins(a, b)
    report = CompareReport(a, b, args.align_by, compare(a, b, lower))
    if args.report_out is None:
        write_compare(report, args.report, sys.stdout)
        return EXIT_OK
    try:
        with args.report_out.open("w", encoding="utf-8") as out:
            write_compare(report, args.report, out)
    except OSError as exc:
        raise CompareInputError(f"--report-out {args.report_out}: {exc.strerror or exc}") from None
    return EXIT_OK


def _sides(args: argparse.Namespace) -> tuple[Side, Side]:
    files: list[Path] = args.results
    if args.split_by:
        if len(files) != 1:
            raise CompareInputError("--split-by takes one result file")
        return load_split(files[0], args.split_by, args.align_by, args.groups)
    if args.groups:
        raise CompareInputError("--groups needs --split-by")
    if len(files) != 2:
        raise CompareInputError("give two result files (A B), or one with --split-by")
    return load_side(files[0], args.align_by, str(files[0])), load_side(
        files[1], args.align_by, str(files[1])
    )


def _lower_is_better_builtins(a: Side, b: Side) -> frozenset[str]:
    """Evaluator ids that name a registered evaluator whose lower scores are better."""
    from evaluators.registry import EvaluatorLoadError, default_registry  # noqa: PLC0415

    names = {key[1] for key in (*a.scores, *b.scores)}
    registry = default_registry()
    registered = set(registry.names())
    lower = set()
    for name in names & registered:
        try:
            if not registry.resolve(name).higher_is_better:
                lower.add(name)
        except EvaluatorLoadError:
            continue  # a plugin that fails to load: the user can still pass --lower-is-better
    return frozenset(lower)
