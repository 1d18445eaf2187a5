"""JSON-lines files: ``--results-out`` and ``--trajectories-out``.

One line per (trace, evaluator) result, or one line per trajectory, in the
contracts documented in docs/replay-and-compare.md. Lines are written whole and flushed per
trace, so a reader tailing the file never sees half a record; files from the
config rotate by size (``collector.sinks.rotating``) between traces.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from collector.sinks.base import ResultSink
from collector.sinks.rotating import RotatingFile
from evaluators.depth import EVERYTHING
from evaluators.lazy import LazyValue
from evaluators.results import is_error, score_of
from evaluators.runner import Outcome
from evaluators.session_merge import session_trace_ids, session_turns
from evaluators.trajectory import Trajectory

_SCALARS = (str, int, float, bool)


def _default(value: object) -> Any:
    # Arguments and results come from traffic: bytes, tuples, sets … must not
    # make a result line unwritable. A lazily parsed value (a step taken apart as a
    # tuple, in an evaluator's details) is written as its value.
    if type(value) is LazyValue:
        return value.value
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return repr(value)


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def result_record(trajectory: Trajectory, outcome: Outcome) -> dict[str, Any]:
    """The ``--results-out`` line for one outcome.

    ``scope`` is ``trace``, or ``session`` for a ``scope: session`` spec's result on
    a session's merged trajectory: ``trace_id`` is then the last turn's, and
    ``turns`` / ``trace_ids`` name every turn.
    """
    result = outcome.result
    turns = session_turns(trajectory)
    record: dict[str, Any] = {
        "trace_id": trajectory.trace_id,
        # (a trace may hold several runs: a conversation's turns recorded in one trace)
        "span_id": trajectory.root_span_id,
        "scope": "trace" if turns is None else "session",
        "spec": outcome.spec_id,
        "evaluator": outcome.evaluator,
        "score": _finite(score_of(result)),
        "passed": outcome.passed,
        "error": result.error if is_error(result) else None,
        "explanation": result.explanation,
        "details": result.details,
        "service": trajectory.service,
        "agent": trajectory.agent,
        "session_id": trajectory.session_id,
        "duration_s": outcome.duration_s,
        # For `evald compare`: the item (dataset item, user input) and the agent
        # version (resource attributes such as service.version) of the result.
        "item": outcome.item,
        "input": trajectory.input,
        "resource": _scalars(trajectory.resource_attributes),
    }
    if turns is not None:
        record["turns"] = turns
        record["trace_ids"] = list(session_trace_ids(trajectory))
    return record


def _scalars(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The attributes whose values are plain strings, numbers or booleans."""
    return {key: value for key, value in attributes.items() if isinstance(value, _SCALARS)}


class _JsonLinesFile(ResultSink):
    """JSON lines appended to ``path``, rotated by size when ``max_size`` is set."""

    def __init__(self, path: Path, max_size: int | None = None, max_backups: int = 0) -> None:
        self._file = RotatingFile(path, max_size, max_backups)

    def _write_lines(self, records: Sequence[dict[str, Any]]) -> None:
        text = "".join(
            json.dumps(record, default=_default, ensure_ascii=False) + "\n" for record in records
        )
        self._file.write(text)

    def close(self) -> None:
        self._file.close()


class ResultsFileSink(_JsonLinesFile):
    """Appends one JSON line per evaluation result."""

    name = "results_file"

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        if outcomes:
            self._write_lines([result_record(trajectory, outcome) for outcome in outcomes])

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Later outcomes (a judge's) are more result lines, like the first ones."""
        self.write(trajectory, outcomes)


class TrajectoriesFileSink(_JsonLinesFile):
    """Appends one JSON line per normalised trajectory, skipped ones included (their
    ``skip_reason`` says why they were not evaluated)."""

    name = "trajectories_file"
    reads = EVERYTHING  # the whole trajectory, call ids included

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self._write_lines([trajectory.to_json()])

    def write_skipped(self, trajectory: Trajectory) -> None:
        self._write_lines([trajectory.to_json()])

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """The trajectory was written already; later outcomes add nothing here."""
