"""What every result sink can be asked to do, with the defaults a simple sink needs.

A sink's ``write`` is called once per evaluated trace, one call at a time (the
processor's ``SinkFanout`` serialises calls from the evaluation thread and the judge
thread); a failing sink is counted (``evald_sink_errors_total{sink}``) and never stops
the pipeline or the other sinks.

``ResultSink`` is a base class rather than a protocol so that each capability is a
real method mypy checks against its override, and a sink that does not need one
inherits a default that says what happens instead:

- ``write_trace(trace, trajectory, outcomes)``: called instead of ``write`` when the
  caller has the assembled ``Trace`` (the processor does), for sinks that need the
  spans themselves (the OTLP sink forwards them). The spans are shared, not copied.
  Default: ``write``.
- ``write_outcomes(trajectory, outcomes)``: more outcomes for a trajectory that was
  already written (an LLM judge answering later); per-trace facts must not be
  counted again. Default: ``write``, for sinks that keep no per-trace facts.
- ``write_session(trajectory, outcomes)``: the outcomes of a ``scope: session`` spec
  on a session's merged trajectory (``evaluators.session_merge``). Its turns were each
  written as traces already, so only the outcomes count, never trajectory facts;
  ``session_turns(trajectory)`` tells such a trajectory apart. Default:
  ``write_outcomes``.
- ``write_skipped(trajectory)``: a trace that is no agent run (``skip_reason``) and
  was not evaluated. Default: nothing (replay reports list them).
- ``reads``: the optional trajectory parts (``evaluators.depth``) the sink writes out;
  a trace is normalised with them (default: none; arguments and results need no
  declaring, they are parsed when read).
- ``close_within(timeout)``: called instead of ``close`` when the caller has a
  deadline (daemon shutdown), for sinks whose flush can take long (the OTLP sink).
  Default: ``close``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from collector.core.records import Trace
from evaluators.depth import NOTHING
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory


class ResultSink(ABC):
    """Receives every evaluated trajectory with its outcomes."""

    name: str
    # What the sink reads that the normalizer builds only on demand (``evaluators.depth``).
    reads: ClassVar[frozenset[str]] = NOTHING

    @abstractmethod
    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """Record one trace's results; may raise (the caller counts and goes on)."""

    def write_trace(
        self, trace: Trace, trajectory: Trajectory, outcomes: Sequence[Outcome]
    ) -> None:
        """``write``, for a caller that also has the trace's spans."""
        self.write(trajectory, outcomes)

    def write_outcomes(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """More outcomes of a trajectory already written."""
        self.write(trajectory, outcomes)

    def write_session(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        """The outcomes of session specs on a merged session trajectory."""
        self.write_outcomes(trajectory, outcomes)

    def write_skipped(self, trajectory: Trajectory) -> None:  # noqa: B027 - optional, no-op
        """A trace that is no agent run (``trajectory.skip_reason``): not evaluated."""

    @abstractmethod
    def close(self) -> None:
        """Flush and release resources; safe to call twice."""

    def close_within(self, timeout: float) -> None:
        """``close``, for a caller with a deadline ``timeout`` seconds away."""
        self.close()
