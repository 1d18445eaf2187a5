"""``evald compare``: options and the run (see ``collector.offline.compare``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from collector.offline.compare import CompareInputError, Side, compare, load_side, load_split
from collector.offline.reports.compare_report import COMPARE_FORMATS, CompareReport, write_compare

EXIT_OK, EXIT_USAGE = 0, 2
CONFIG_ENV = "EVALD_CONFIG"  # as `evald replay --config`


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", nargs="+", type=Path, metavar="RESULTS",
        help="two result files (A B), or one with --split-by; with --judge: two "
        "--trajectories-out files",
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
        help="what makes two results the same item: input (default), item (the dataset "
        "item of a dataset spec), trace_id, session_id, or a resource attribute",
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
    judging = parser.add_argument_group(
        "pairwise LLM judge",
        "with --judge, A and B are two `evald replay --trajectories-out` files and the "
        "judge decides, item by item, which run is better",
    )
    judging.add_argument("--judge", metavar="NAME", help="a judge of the config's judges.endpoints")
    judging.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="draws the order the two runs are shown in, per item (default 0; recorded "
        "in the output)",
    )
    judging.add_argument("--criteria", metavar="TEXT", help="added to the judge's instructions")
    judging.add_argument(
        "--config",
        type=Path,
        default=os.environ.get(CONFIG_ENV),
        help=f"config file with the judges (default: ${CONFIG_ENV})",
    )


def run(args: argparse.Namespace) -> int:
    """Compare and print; raises ``CompareInputError`` (exit 2) for unusable input."""
    if args.judge is not None:
        return _run_judge(args)
    for option in ("seed", "criteria"):
        if getattr(args, option) is not None:
            raise CompareInputError(f"--{option} needs --judge")
    a, b = _sides(args)
    lower = frozenset(args.lower_is_better) | _lower_is_better_builtins(a, b)
    report = CompareReport(a, b, args.align_by, compare(a, b, lower))
    _write(args.report_out, lambda out: write_compare(report, args.report, out))
    return EXIT_OK


def _write(path: Path | None, write: Callable[[TextIO], None]) -> None:
    if path is None:
        write(sys.stdout)
        return
    try:
        with path.open("w", encoding="utf-8") as out:
            write(out)
    except OSError as exc:
        raise CompareInputError(f"--report-out {path}: {exc.strerror or exc}") from None


def _run_judge(args: argparse.Namespace) -> int:
    """``--judge``: the judge's preferences over two trajectories files."""
    from collector.config.settings import ConfigError, load_config  # noqa: PLC0415
    from collector.offline import compare_judge  # noqa: PLC0415 - the HTTP stack only when judging
    from collector.processing.wiring import build_telemetry, start_judge_worker  # noqa: PLC0415

    files: list[Path] = args.results
    if args.split_by or args.groups:
        raise CompareInputError(
            "--judge compares two trajectories files; --split-by is not supported"
        )
    if args.lower_is_better:
        raise CompareInputError("--lower-is-better applies to scores, not to --judge")
    if len(files) != 2:
        raise CompareInputError("--judge needs two trajectories files (A B)")
    if args.align_by == "item":
        raise CompareInputError(
            "--judge --align-by item: trajectories carry no dataset item (a trace can be "
            "an item of several specs); align by input, trace_id, session_id, service or agent"
        )
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise CompareInputError(str(exc)) from None
    if args.judge not in config.judges.endpoints:
        known = ", ".join(sorted(config.judges.endpoints)) or "none; pass --config"
        raise CompareInputError(
            f"--judge {args.judge}: no such judge in judges.endpoints (configured: {known})"
        )
    a = compare_judge.load_runs(files[0], args.align_by, str(files[0]))
    b = compare_judge.load_runs(files[1], args.align_by, str(files[1]))
    try:
        worker = start_judge_worker(config, build_telemetry(config))
    except ConfigError as exc:  # an API key that cannot be read
        raise CompareInputError(str(exc)) from None
    assert worker is not None  # the judge is configured
    seed = 0 if args.seed is None else args.seed
    try:
        judged = compare_judge.compare_with_judge(
            worker, a, b, judge=args.judge, seed=seed, criteria=args.criteria
        )
    finally:
        worker.close(config.judges.drain_timeout)
    _write(
        args.report_out,
        lambda out: compare_judge.write_judged(judged, args.align_by, args.report, out),
    )
    if judged.errors:
        print(
            f"evald: compare: {judged.errors} item(s) without a judge verdict (not tallied)",
            file=sys.stderr,
        )
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
