"""What each service's traces carry: the data behind ``evald doctor``.

Per service: traces seen (and skipped as no agent run), the agent runs they held (one
per trace, or one per turn of a conversation recorded in one trace), the
instrumentation conventions recognised, tool and model calls per run, and how many runs
each gap affects (``evaluators.gaps``). Bounded: at most ``max_services`` services are
tracked (later ones are counted under ``other``), a few numbers each. Thread-safe.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from collector.sinks.base import ResultSink
from evaluators.gaps import CONTENT, setting_for
from evaluators.runner import Outcome
from evaluators.trajectory import StepKind, Trajectory

OVERFLOW_SERVICE = "other"
DEFAULT_MAX_SERVICES = 200


@dataclass
class ServiceStats:
    """One service's counts. ``traces`` counts a trace once however many runs (turns) it
    held: the runs of one trace are written one after the other (``TraceProcessor``), so
    a run of the trace written just before is not a new trace."""

    traces: int = 0
    skipped: int = 0
    runs: int = 0
    tool_calls: int = 0
    llm_calls: int = 0
    conventions: Counter[str] = field(default_factory=Counter)
    gaps: Counter[str] = field(default_factory=Counter)
    last_trace_id: str = ""

    def add(self, trajectory: Trajectory) -> None:
        if trajectory.trace_id != self.last_trace_id or not trajectory.trace_id:
            self.traces += 1
            self.last_trace_id = trajectory.trace_id
        if trajectory.skip_reason is not None:
            self.skipped += 1
            return
        self.runs += 1
        for step in trajectory.steps:  # one pass, and no Counter.update: per trace
            kind = step.kind
            if kind is StepKind.TOOL:
                self.tool_calls += 1
            elif kind is StepKind.LLM:
                self.llm_calls += 1
        conventions, gaps = self.conventions, self.gaps
        for convention in trajectory.conventions:
            conventions[convention] += 1
        for gap in trajectory.gaps:
            gaps[gap] += 1

    def merge(self, other: ServiceStats) -> None:
        self.traces += other.traces
        self.skipped += other.skipped
        self.runs += other.runs
        self.tool_calls += other.tool_calls
        self.llm_calls += other.llm_calls
        self.conventions.update(other.conventions)
        self.gaps.update(other.gaps)

    def to_json(self) -> dict[str, Any]:
        runs = self.runs
        conventions = sorted(self.conventions)
        content_recorded = not self.gaps.get(CONTENT)  # every run recorded message content
        return {
            "traces": self.traces,
            "skipped": self.skipped,
            "runs": runs,
            "conventions": dict(sorted(self.conventions.items())),
            "tool_calls_per_run": round(self.tool_calls / runs, 2) if runs else 0.0,
            "llm_calls_per_run": round(self.llm_calls / runs, 2) if runs else 0.0,
            "gaps": {
                gap: {
                    "runs": count,
                    "share": round(count / runs, 4) if runs else 0.0,
                    "setting": setting_for(
                        conventions, gap, content_recorded, model_calls=self.llm_calls > 0
                    ),
                }
                for gap, count in sorted(self.gaps.items())
            },
        }


class ServiceDigest(ResultSink):
    """Per-service digest of what the traces carry; ``snapshot()`` for doctor."""

    name = "digest"

    def __init__(self, max_services: int = DEFAULT_MAX_SERVICES) -> None:
        self._max = max_services
        self._services: dict[str, ServiceStats] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (``evald serve``'s workers ship their digest): the lock stays."""
        with self._lock:
            return {"max": self._max, "services": dict(self._services)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._max = state["max"]
        self._services = state["services"]
        self._lock = threading.Lock()

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        self._add(trajectory)

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Later outcomes: the trajectory was counted already."""

    def write_session(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """A merged session: its turns were counted already."""

    def write_skipped(self, trajectory: Trajectory) -> None:
        self._add(trajectory)

    def close(self) -> None:
        """Nothing to release."""

    def snapshot(self) -> dict[str, Any]:
        """``{service: stats}`` as JSON-ready dicts, services in name order."""
        with self._lock:
            return {name: stats.to_json() for name, stats in sorted(self._services.items())}

    def merge(self, other: ServiceDigest) -> None:
        """Add ``other``'s counts (replay workers)."""
        with other._lock:
            items = list(other._services.items())
        with self._lock:
            for name, stats in items:
                self._stats(name).merge(stats)

    def _add(self, trajectory: Trajectory) -> None:
        with self._lock:
            self._stats(trajectory.service).add(trajectory)

    def _stats(self, service: str) -> ServiceStats:
        found = self._services.get(service)
        if found is None:
            if len(self._services) >= self._max:
                service = OVERFLOW_SERVICE
            found = self._services.setdefault(service, ServiceStats())
        return found
