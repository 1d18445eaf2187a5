"""Where evaluated trajectories and their results go.

A sink's ``write`` is called from the evaluation thread only, once per evaluated
trace; a failing sink is counted (``evald_sink_errors_total{sink}``) and never stops
the pipeline or the other sinks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory


class ResultSink(Protocol):
    """Receives every evaluated trajectory with its outcomes."""

    name: str

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Record one trace's results; may raise (the caller counts and goes on)."""
        ...

    def close(self) -> None:
        """Flush and release resources; safe to call twice."""
        ...
