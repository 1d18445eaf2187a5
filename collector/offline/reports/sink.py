"""The result sink that feeds a replay's ``RunSummary``."""

from __future__ import annotations

from collections.abc import Sequence

from collector.offline.reports.summary import RunSummary
from collector.sinks.base import ResultSink
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory


class SummarySink(ResultSink):
    """Adds every evaluated trace to ``summary``; O(1) memory per trace."""

    name = "summary"

    def __init__(self, summary: RunSummary) -> None:
        self.summary = summary

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self.summary.add(trajectory.trace_id, trajectory.service, trajectory.input, outcomes)

    def write_session(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """A session's results count per spec, not as a failing trace."""
        self.summary.add_metrics(outcomes)

    def write_skipped(self, trajectory: Trajectory) -> None:
        self.summary.add_skipped(trajectory.trace_id, trajectory.skip_reason or "")

    def close(self) -> None:
        """Nothing to release."""
