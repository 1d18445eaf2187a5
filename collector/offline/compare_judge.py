"""``evald compare --judge NAME``: a pairwise LLM judge as the source of preferences.

The two sides are two ``--trajectories-out`` files, aligned by item like result
files (``collector.offline.compare.field_value``: ``input`` by default, ``trace_id``,
``session_id``, ``service``, ``agent``; trajectory lines carry no resource
attributes). When an item ran several times on one side, its first run is judged
and the later ones are counted as ``repeated``.

For each item on both sides the configured judge sees the user input and the two
runs (final response and tool steps) in an order drawn from
``position_seed(str(seed), item)``; ``evaluators.judges.pairwise.prefer`` maps its
"A" / "B" back to a / b (a tie stays a tie) and ``Tally.add`` counts it, so the
statistics and reports are those of score comparisons. The seed is recorded in
every output: a rerun with the same ``--seed`` shows the judge the same orders,
and with ``judges.cache_file`` set it answers from the cache without a call.

A judge error on an item (no answer after the retries, an unreadable verdict, a
spent budget) leaves the item out of the tally; it is counted and listed.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from collector.offline.compare import (
    CompareInputError,
    Comparison,
    Side,
    Tally,
    field_value,
    json_lines,
)
from collector.offline.reports.compare_report import CompareReport, write_compare
from evaluators.judges.pairwise import position_seed, prefer
from evaluators.judges.parse import VerdictError
from evaluators.judges.protocol import JudgeError
from evaluators.judges.runner import BudgetSpent, JudgeRunner
from evaluators.judges.worker import JudgeWorker
from evaluators.trajectory import Step, StepKind, Trajectory

_STEP_OPTIONAL = (
    "call_id", "raw_args", "agent", "model", "input_tokens", "output_tokens", "source", "attempts"
)  # fmt: skip


@dataclass
class Runs:
    """The trajectories of one side by item (the first run of each item)."""

    label: str
    items: dict[str, Trajectory] = field(default_factory=dict)
    records: int = 0
    unaligned: int = 0  # trajectories without an alignment key
    repeated: int = 0  # later runs of an item already held

    def add(self, trajectory: Trajectory, item: str | None) -> None:
        self.records += 1
        if item is None:
            self.unaligned += 1
        elif item in self.items:
            self.repeated += 1
        else:
            self.items[item] = trajectory


class Judged(NamedTuple):
    """The judge's answer on one item: ``preferred`` a / b / tie, or an ``error``."""

    item: str
    seed: int  # the item's position seed
    preferred: str | None  # "a", "b", "tie"; None on error
    swapped: bool  # b was shown first
    reasoning: str | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


class JudgeRun(NamedTuple):
    """A judged comparison: the tallied ``comparison`` and how it was obtained."""

    judge: str
    seed: int
    criteria: str | None
    comparison: Comparison
    judged: Sequence[Judged]
    a: Runs
    b: Runs

    @property
    def errors(self) -> int:
        return sum(1 for judged in self.judged if judged.error is not None)


def item_seed(seed: int, item: str) -> int:
    """The position seed of ``item`` under the run seed ``seed``."""
    return position_seed(str(seed), item)


def trajectory_from_json(record: dict[str, Any]) -> Trajectory:
    """A ``Trajectory`` from its ``--trajectories-out`` line (``Trajectory.to_json``).

    Raises ``KeyError`` / ``TypeError`` / ``ValueError`` on a line that is not one.
    """
    steps = tuple(_step(raw) for raw in record.get("steps") or ())
    return Trajectory(
        trace_id=str(record["trace_id"]),
        service=str(record.get("service") or ""),
        agent=_text(record.get("agent")),
        session_id=_text(record.get("session_id")),
        input=_text(record.get("input")),
        output=_text(record.get("output")),
        failed=bool(record.get("failed", False)),
        latency_s=float(record.get("latency_s") or 0.0),
        start_unix_nano=int(record.get("start_unix_nano") or 0),
        steps=steps,
        error=_text(record.get("error")),
        conventions=tuple(str(name) for name in record.get("conventions") or ()),
        incomplete=bool(record.get("incomplete", False)),
        gaps=tuple(str(gap) for gap in record.get("gaps") or ()),
        skip_reason=_text(record.get("skip_reason")),
    )


def _step(raw: dict[str, Any]) -> Step:
    optional = {key: raw[key] for key in _STEP_OPTIONAL if raw.get(key) is not None}
    return Step(
        kind=StepKind(raw["kind"]),
        name=str(raw["name"]),
        span_id=str(raw.get("span_id") or ""),
        parent_span_id=_text(raw.get("parent_span_id")),
        start_unix_nano=int(raw.get("start_unix_nano") or 0),
        duration_s=float(raw.get("duration_s") or 0.0),
        args=raw.get("args"),
        result=raw.get("result"),
        error=_text(raw.get("error")),
        executed=bool(raw.get("executed", True)),
        **optional,
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def read_trajectories(path: Path) -> Iterator[tuple[dict[str, Any], Trajectory]]:
    """The lines of a trajectories file, streamed; ``CompareInputError`` on a bad line."""
    for where, record in json_lines(path):
        if not isinstance(record, dict) or "steps" not in record:
            raise CompareInputError(
                f"{where}: not an evald trajectory record "
                "(--judge compares `evald replay --trajectories-out` files)"
            )
        try:
            yield record, trajectory_from_json(record)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            message = f"{type(exc).__name__}: {exc}"
            raise CompareInputError(f"{where}: bad trajectory: {message}") from None


def load_runs(path: Path, align_by: str, label: str) -> Runs:
    runs = Runs(label)
    for record, trajectory in read_trajectories(path):
        runs.add(trajectory, field_value(record, align_by))
    return runs


async def judge_items(
    runner: JudgeRunner,
    a: Runs,
    b: Runs,
    *,
    judge: str,
    seed: int,
    criteria: str | None = None,
) -> list[Judged]:
    """Ask ``judge`` about every item on both sides (concurrently, within the judge's
    limits); in item order."""
    items = sorted(a.items.keys() & b.items.keys())
    asks = [
        _judge_one(runner, item, a.items[item], b.items[item], judge=judge, seed=seed,
                   criteria=criteria)
        for item in items
    ]  # fmt: skip
    return list(await asyncio.gather(*asks))


async def _judge_one(
    runner: JudgeRunner,
    item: str,
    run_a: Trajectory,
    run_b: Trajectory,
    *,
    judge: str,
    seed: int,
    criteria: str | None,
) -> Judged:
    position = item_seed(seed, item)
    question = run_a.input if run_a.input is not None else run_b.input
    try:
        preference = await prefer(
            runner, question, run_a, run_b, seed=position, judge=judge, criteria=criteria
        )
    except (JudgeError, BudgetSpent, VerdictError) as exc:
        return Judged(item, position, None, False, None, f"{type(exc).__name__}: {exc}")
    preferred = preference.preferred or "tie"
    return Judged(item, position, preferred, preference.swapped, preference.reasoning)


def tally(judge: str, a: Runs, b: Runs, judged: Sequence[Judged]) -> Comparison:
    """The judged preferences as a ``Comparison`` (no scores: the means are None)."""
    counted = Tally()
    for answer in judged:
        if answer.preferred == "a":
            counted.add("a")
        elif answer.preferred == "b":
            counted.add("b")
        elif answer.preferred == "tie":
            counted.add("tie")
    only_a = len(a.items.keys() - b.items.keys())
    only_b = len(b.items.keys() - a.items.keys())
    return Comparison((None, f"judge:{judge}"), counted, only_a, only_b, None, None)


def compare_with_judge(
    worker: JudgeWorker,
    a: Runs,
    b: Runs,
    *,
    judge: str,
    seed: int,
    criteria: str | None = None,
) -> JudgeRun:
    """Judge every aligned item on the worker's loop and tally the answers."""
    judged = worker.call(
        lambda runner: judge_items(runner, a, b, judge=judge, seed=seed, criteria=criteria)
    )
    return JudgeRun(judge, seed, criteria, tally(judge, a, b, judged), judged, a, b)


def report_of(run: JudgeRun, align_by: str) -> CompareReport:
    return CompareReport(
        Side(run.a.label, records=run.a.records),
        Side(run.b.label, records=run.b.records),
        align_by,
        [run.comparison],
    )


def _summary(run: JudgeRun) -> list[str]:
    lines = [
        f"judge: {run.judge}; position seed: {run.seed} (rerun with --seed {run.seed} "
        "to show the judge the same orders)",
        f"judged items: {len(run.judged)}; judge errors (not tallied): {run.errors}",
    ]
    if run.criteria:
        lines.append(f"criteria: {run.criteria}")
    skipped = (run.a.unaligned, run.b.unaligned, run.a.repeated, run.b.repeated)
    if any(skipped):
        lines.append(
            "not judged: unaligned A {} / B {}; repeated runs A {} / B {}".format(*skipped)
        )
    lines += [f"error on {j.item!r}: {j.error}" for j in run.judged if j.error is not None]
    return lines


def _judge_json(run: JudgeRun) -> dict[str, Any]:
    return {
        "name": run.judge,
        "seed": run.seed,
        "criteria": run.criteria,
        "judged": len(run.judged),
        "errors": run.errors,
        "unaligned": {"a": run.a.unaligned, "b": run.b.unaligned},
        "repeated": {"a": run.a.repeated, "b": run.b.repeated},
        "items": [judged.to_json() for judged in run.judged],
    }


def write_judged(run: JudgeRun, align_by: str, fmt: str, out: TextIO) -> None:
    """The compare report of ``run`` in ``fmt``, with the judge, the seed and the
    per-item answers (JSON) recorded."""
    report = report_of(run, align_by)
    if fmt == "json":
        buffer = io.StringIO()
        write_compare(report, fmt, buffer)
        document = json.loads(buffer.getvalue())
        document["judge"] = _judge_json(run)
        json.dump(document, out, indent=2, ensure_ascii=False)
        out.write("\n")
        return
    write_compare(report, fmt, out)
    prefix = "- " if fmt == "markdown" else ""
    out.write("\n")
    for line in _summary(run):
        out.write(f"{prefix}{line}\n")
