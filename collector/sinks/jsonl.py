"""JSON-lines files: ``--results-out`` and ``--trajectories-out``.

One line per (trace, evaluator) result, or one line per trajectory, in the
contracts documented in the README. Lines are written whole and flushed per
trace, so a reader tailing the file never sees half a record.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from evaluators.results import ErrorResult, score_of
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory


def _default(value: object) -> Any:
    # Arguments and results come from traffic: bytes, tuples, sets … must not
    # make a result line unwritable.
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return repr(value)


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def result_record(trajectory: Trajectory, outcome: Outcome) -> dict[str, Any]:
    """The ``--results-out`` line for one outcome."""
    result = outcome.result
    return {
        "trace_id": trajectory.trace_id,
        "spec": outcome.spec_id,
        "evaluator": outcome.evaluator,
        "score": _finite(score_of(result)),
        "passed": outcome.passed,
        "error": result.error if isinstance(result, ErrorResult) else None,
        "explanation": result.explanation,
        "details": result.details,
        "service": trajectory.service,
        "agent": trajectory.agent,
        "session_id": trajectory.session_id,
        "duration_s": outcome.duration_s,
    }


class _JsonLinesFile:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = path.open("a", encoding="utf-8")

    def _write_lines(self, records: Sequence[dict[str, Any]]) -> None:
        if self._file is None:
            raise ValueError("sink is closed")
        text = "".join(
            json.dumps(record, default=_default, ensure_ascii=False) + "\n" for record in records
        )
        self._file.write(text)
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class ResultsFileSink(_JsonLinesFile):
    """Appends one JSON line per evaluation result."""

    name = "results_file"

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        if outcomes:
            self._write_lines([result_record(trajectory, outcome) for outcome in outcomes])


class TrajectoriesFileSink(_JsonLinesFile):
    """Appends one JSON line per normalised trajectory."""

    name = "trajectories_file"

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self._write_lines([trajectory.to_json()])
