"""Running a replay in this process or across ``--workers`` processes, with one result.

With N workers, N processes each replay every input file as shard ``i`` of N
(``collector.offline.replay.Shard``: traces split by trace-id hash, so a trace is
always evaluated whole by one worker): this process is worker 0, and N - 1 child
processes are started for the others (a child for every shard would leave this one
idle while costing a start, a pickled summary and a wake-up more). Each writes its
results, trajectories and JUnit test cases to its own files in ``scratch``; the
children pickle their ``RunSummary`` there. This process shows progress (its own
count and the children's shared counters), merges the summaries
(``RunSummary.merge``: exactly what one process would have counted) and
concatenates the files. Line order in the result files differs from a
single-process run; their content does not.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_for_exit
from pathlib import Path
from typing import Any, NamedTuple

from collector.config.settings import Config
from collector.offline.readers import TraceFileError
from collector.offline.replay import Replayer, Shard
from collector.offline.reports.gate import Catalogue
from collector.offline.reports.junit import JUnitSpool, Suite, merge_suites
from collector.offline.reports.summary import RunSummary

_POLL_S = 0.1

log = logging.getLogger(__name__)


class ReplayWorkerError(Exception):
    """A worker process died without a result (killed, crashed)."""


@dataclass(frozen=True)
class ReplayJob:
    """What to replay and what to write. Result files are truncated first."""

    config: Config
    inputs: tuple[str, ...]
    strict: bool = False
    results_out: Path | None = None
    trajectories_out: Path | None = None
    junit: bool = False
    workers: int = 1
    log_level: int = logging.WARNING


class ReplayOutput(NamedTuple):
    summary: RunSummary
    junit: dict[str, Suite] | None


def run_job(
    job: ReplayJob, scratch: Path, catalogue: Catalogue, progress: Callable[[int], None]
) -> ReplayOutput:
    """Replay ``job``; ``scratch`` (an empty directory) must outlive the JUnit report.

    Raises ``TraceFileError`` (strict mode, unreadable inputs) and ``ReplayWorkerError``.
    """
    for path in (job.results_out, job.trajectories_out):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"")  # this run's results only, not appended to an old run's
    if job.workers <= 1:
        outputs = (job.results_out, job.trajectories_out)
        return _run_shard(job, Shard(), scratch, catalogue, progress=progress, outputs=outputs)
    return _run_parallel(job, scratch, catalogue, progress)


def _run_shard(
    job: ReplayJob,
    shard: Shard,
    scratch: Path,
    catalogue: Catalogue,
    *,
    progress: Callable[[int], None],
    outputs: tuple[Path | None, Path | None],
) -> ReplayOutput:
    """Replay the traces of ``shard``; ``outputs`` are the results and trajectories files."""
    spool = None
    if job.junit:
        directory = scratch / f"junit-{shard.index}"
        directory.mkdir()
        thresholds = {key: info.threshold for key, info in catalogue.items()}
        spool = JUnitSpool(directory, thresholds)
    replayer = Replayer(
        job.config,
        results_out=outputs[0],
        trajectories_out=outputs[1],
        sinks=[spool] if spool is not None else [],
        shard=shard,
        progress=progress,
    )
    summary = replayer.run(job.inputs, job.strict)
    return ReplayOutput(summary, spool.suites if spool is not None else None)


def _outputs(job: ReplayJob, scratch: Path, index: int) -> tuple[Path | None, Path | None]:
    """Shard ``index``'s results and trajectories files in ``scratch``, if wanted."""
    return (
        _part(scratch, index, "results", job.results_out),
        _part(scratch, index, "trajectories", job.trajectories_out),
    )


def _part(scratch: Path, index: int, name: str, wanted: Path | None) -> Path | None:
    return None if wanted is None else scratch / f"{name}-{index}.jsonl"


class _Poll:
    """``due()`` is true at most once every ``_POLL_S``: the checks a shard makes after
    each payload, kept off most payloads."""

    def __init__(self) -> None:
        self._last = time.monotonic()

    def due(self) -> bool:
        now = time.monotonic()
        if now - self._last < _POLL_S:
            return False
        self._last = now
        return True


def _worker(job: ReplayJob, index: int, scratch: Path, catalogue: Catalogue, counter: Any) -> None:
    """Entry point of one worker process (module level, so ``spawn`` can import it)."""
    if not logging.getLogger().handlers:  # spawned: nothing inherited
        logging.basicConfig(level=job.log_level, format="%(levelname)s %(name)s: %(message)s")
    shard = Shard(index, job.workers)
    parent = os.getppid()
    poll = _Poll()

    def report(traces: int) -> None:
        counter.value = traces
        if poll.due() and os.getppid() != parent:  # evald died: nobody will merge
            log.error("replay worker %d: the evald process is gone; stopping", index)
            raise SystemExit(1)

    try:
        outputs = _outputs(job, scratch, index)
        output = _run_shard(job, shard, scratch, catalogue, progress=report, outputs=outputs)
    except TraceFileError as exc:
        (scratch / f"error-{index}.txt").write_text(str(exc), encoding="utf-8")
        sys.exit(2)
    output.summary.failures.trim()  # up to twice the sample otherwise: pickled for nothing
    with (scratch / f"summary-{index}.pickle").open("wb") as out:
        pickle.dump(output, out)


def _run_parallel(
    job: ReplayJob, scratch: Path, catalogue: Catalogue, progress: Callable[[int], None]
) -> ReplayOutput:
    # Any: typeshed's BaseContext does not declare Process/Value, the concrete ones do.
    context: Any = multiprocessing.get_context(_start_method())
    counters = [context.Value("q", 0, lock=False) for _ in range(1, job.workers)]
    processes = [
        context.Process(
            target=_worker,
            args=(job, index, scratch, dict(catalogue), counters[index - 1]),
            name=f"evald-replay-{index}",
            daemon=True,
        )
        for index in range(1, job.workers)
    ]
    terminated: list[Any] = []
    try:
        for process in processes:
            process.start()
        own = _run_own_shard(
            job, scratch, catalogue, progress, children=processes, counters=counters
        )
        if own is not None:
            _wait(processes, lambda: progress(own.summary.traces + _sum(counters)))
    finally:
        for process in processes:
            if process.is_alive():
                terminated.append(process)
                process.terminate()
            if process.pid is not None:  # started
                process.join()
    _raise_worker_errors(processes, scratch, terminated)
    assert own is not None  # a child failed, or there is an error file
    return _merge(job, scratch, own)


def _run_own_shard(
    job: ReplayJob,
    scratch: Path,
    catalogue: Catalogue,
    progress: Callable[[int], None],
    *,
    children: Sequence[Any],
    counters: Sequence[Any],
) -> ReplayOutput | None:
    """Shard 0, in this process; None when a child failed first (it is not waited for).

    A strict run's input error is written as the children write theirs, so that the
    first shard's error is the one raised whichever process met it."""
    poll = _Poll()

    def report(traces: int) -> None:
        if poll.due():
            progress(traces + _sum(counters))
            if _one_failed(children):
                raise _ChildFailed

    outputs = _outputs(job, scratch, 0)
    try:
        return _run_shard(job, Shard(0, job.workers), scratch, catalogue,
                          progress=report, outputs=outputs)  # fmt: skip
    except TraceFileError as exc:
        (scratch / "error-0.txt").write_text(str(exc), encoding="utf-8")
    except _ChildFailed:
        pass
    return None


class _ChildFailed(Exception):
    """Raised through this process's shard to stop it when a child has failed."""


def _sum(counters: Sequence[Any]) -> int:
    return sum(int(counter.value) for counter in counters)


def _one_failed(processes: Sequence[Any]) -> bool:
    """Whether a worker process has exited with an error (or been killed)."""
    return any(process.exitcode not in (None, 0) for process in processes)


def _start_method() -> str:
    # fork starts a worker in milliseconds, spawn re-imports everything (seconds);
    # but forking a process that runs other threads can deadlock the child.
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def _wait(processes: Sequence[Any], on_tick: Callable[[], None]) -> None:
    """Until every worker exits, or one fails (then the others are not waited for);
    ``on_tick`` every ``_POLL_S`` and as each worker exits. Woken by the exit itself
    (the processes' sentinels), not by the next poll: a sleep here cost every run half
    a poll on average after its last worker was done."""
    running = {process.sentinel: process for process in processes}
    while running:
        if _one_failed(processes):
            return
        on_tick()
        for sentinel in wait_for_exit(list(running), timeout=_POLL_S):
            del running[sentinel]
    on_tick()


def _raise_worker_errors(
    processes: Sequence[Any], scratch: Path, terminated: Sequence[Any]
) -> None:
    """The first shard's input error, else a child's failure: one that failed on its
    own before one this process stopped (``terminated``, because another had failed)."""
    for index in range(len(processes) + 1):  # this process's shard 0, then the children's
        error = scratch / f"error-{index}.txt"
        if error.exists():
            raise TraceFileError(error.read_text(encoding="utf-8"))
    for process in sorted(processes, key=lambda process: process in terminated):
        if process.exitcode != 0:
            raise ReplayWorkerError(f"replay worker {process.name} exited with {process.exitcode}")


def _merge(job: ReplayJob, scratch: Path, own: ReplayOutput) -> ReplayOutput:
    summary = RunSummary()
    suites: dict[str, Suite] = {}
    for index in range(job.workers):
        output = own if index == 0 else _child_output(scratch, index)
        summary.merge(output.summary)
        merge_suites(suites, output.junit or {})
    _concatenate(scratch, "results", job.workers, job.results_out)
    _concatenate(scratch, "trajectories", job.workers, job.trajectories_out)
    return ReplayOutput(summary, suites if job.junit else None)


def _child_output(scratch: Path, index: int) -> ReplayOutput:
    with (scratch / f"summary-{index}.pickle").open("rb") as stream:
        output: ReplayOutput = pickle.load(stream)  # our own worker's file
    return output


def _concatenate(scratch: Path, name: str, workers: int, target: Path | None) -> None:
    if target is None:
        return
    with target.open("ab") as out:
        for index in range(workers):
            part = scratch / f"{name}-{index}.jsonl"
            if part.exists():
                with part.open("rb") as source:
                    shutil.copyfileobj(source, out, 1 << 20)
                part.unlink()
