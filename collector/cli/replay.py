"""``evald replay``: options, the run, the report, the CI gate's exit code.

Only argument parsing is imported with the ``evald`` command; the pipeline is
imported when a replay runs, so ``evald --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from collector.config.settings import Config
from collector.core.build_info import warn_if_interpreted
from collector.offline.readers import TRACE_FILE_SUFFIXES
from collector.offline.reports import FORMATS
from collector.offline.reports.fail_under import FailUnder

if TYPE_CHECKING:
    from collector.offline.reports.gate import Catalogue
    from collector.offline.reports.model import Report
    from collector.offline.workers import ReplayJob, ReplayOutput

EXIT_OK, EXIT_FAILED = 0, 1


class ReplayError(Exception):
    """The replay cannot run or did not complete (usage, input, a dead worker): exit 2."""


def add_arguments(replay: argparse.ArgumentParser) -> None:
    replay.add_argument("inputs", nargs="+", metavar="PATH", help="trace files, directories, globs")
    replay.add_argument("--results-out", type=Path, metavar="FILE", help="JSON lines of results")
    replay.add_argument(
        "--trajectories-out", type=Path, metavar="FILE", help="JSON lines of trajectories"
    )
    replay.add_argument(
        "--strict", action="store_true", help="stop at the first corrupt record (exit 2)"
    )
    replay.add_argument("--report", choices=FORMATS, default="table", help="report format")
    replay.add_argument(
        "--report-out",
        type=Path,
        metavar="FILE",
        help="write the report here (the table still goes to stdout); default: stdout",
    )
    replay.add_argument(
        "--fail-under",
        type=_fail_under,
        action="append",
        default=[],
        metavar="[SPEC/]EVALUATOR=VALUE",
        help="gate on the run's mean score of EVALUATOR instead of its per-result threshold "
        "(an upper bound for lower-is-better evaluators such as latency); repeatable",
    )
    replay.add_argument(
        "--workers",
        type=_workers,
        default=1,
        metavar="N",
        help="processes to use; traces are split by trace id, or by session when "
        "scope: session specs are loaded (0: one per CPU; default 1)",
    )


def _fail_under(text: str) -> FailUnder:
    try:
        return FailUnder.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _workers(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"--workers {text!r}: expected a number >= 0")
    return count or os.cpu_count() or 1


def run(config: Config, args: argparse.Namespace) -> int:
    """Replay, report, and return the gate's exit code (0 pass, 1 fail).

    Input without any trace is an input error (``ReplayError``), not a pass.

    Raises ``ReplayError``, ``ConfigError``, ``SpecError`` and ``TraceFileError``
    (the caller maps them to exit code 2).
    """
    from collector.offline.reports.gate import catalogue, judge  # noqa: PLC0415
    from collector.offline.reports.model import Report  # noqa: PLC0415
    from collector.offline.workers import ReplayJob, ReplayWorkerError  # noqa: PLC0415
    from evaluators.runner import bind_always  # noqa: PLC0415
    from evaluators.spec import load_specs  # noqa: PLC0415

    known = catalogue(load_specs(config.spec_paths()), bind_always(config.evaluation.always))
    _check_bounds(args.fail_under, known)
    job = ReplayJob(
        config, tuple(args.inputs), args.strict, args.results_out, args.trajectories_out,
        junit=args.report == "junit", workers=args.workers,
        log_level=logging.getLogger().getEffectiveLevel(),
    )  # fmt: skip
    warn_if_interpreted()
    with tempfile.TemporaryDirectory(prefix="evald-replay-") as scratch:
        try:
            output = _run_with_progress(job, Path(scratch), known)
        except ReplayWorkerError as exc:
            raise ReplayError(str(exc)) from exc
        except OSError as exc:  # --results-out / --trajectories-out cannot be created
            raise ReplayError(f"{exc.filename or 'output'}: {exc.strerror or exc}") from None
        if output.summary.traces == 0:
            # A gate that evaluated nothing has not passed: almost always a wrong path or
            # an empty export. No report either: its gate line would read PASS.
            raise ReplayError(_nothing_evaluated(args.inputs, output.summary.read.files))
        verdict = judge(output.summary, known, args.fail_under)
        report = Report(output.summary, known, verdict, output.junit)
        _write_reports(report, args.report, args.report_out)
    return EXIT_OK if report.verdict.ok else EXIT_FAILED


def _nothing_evaluated(inputs: list[str], files: int) -> str:
    named = ", ".join(repr(item) for item in inputs)
    if files == 0:
        return f"no trace file in {named} (looked for {', '.join(TRACE_FILE_SUFFIXES)}, .gz)"
    return f"no trace in {named} ({files} file(s) read): nothing was evaluated"


def _check_bounds(bounds: list[FailUnder], known: Catalogue) -> None:
    from collector.offline.reports.gate import unmatched  # noqa: PLC0415

    missing = unmatched(bounds, known)
    if missing:
        names = ", ".join(f"{b.spec + '/' if b.spec else ''}{b.evaluator}" for b in missing)
        raise ReplayError(f"--fail-under names no evaluator of the loaded specs: {names}")


def _run_with_progress(job: ReplayJob, scratch: Path, known: Catalogue) -> ReplayOutput:
    from collector.offline.progress import ProgressLine  # noqa: PLC0415
    from collector.offline.workers import run_job  # noqa: PLC0415

    progress = ProgressLine(sys.stderr)
    try:
        return run_job(job, scratch, known, progress.update)
    finally:
        progress.close()


def _write_reports(report: Report, fmt: str, report_out: Path | None) -> None:
    from collector.offline.reports.render import write_report  # noqa: PLC0415

    if report_out is None:
        write_report(report, fmt, sys.stdout)
        return
    with _open_report(report_out) as out:
        write_report(report, fmt, out)
    write_report(report, "table", sys.stdout)


@contextlib.contextmanager
def _open_report(path: Path) -> Iterator[TextIO]:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("w", encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"--report-out {path}: {exc.strerror or exc}") from None
    with handle:
        yield handle
