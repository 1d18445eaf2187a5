"""Where evaluated trajectories and their results go.

A sink's ``write`` is called once per evaluated trace, one call at a time (the
processor serialises calls from the evaluation thread and the judge thread); a
failing sink is counted (``evald_sink_errors_total{sink}``) and never stops the
pipeline or the other sinks.

Two optional methods extend the contract without changing ``write``; callers go
through ``write_to`` / ``write_more``, which fall back to ``write``:

- ``write_trace(trace, trajectory, outcomes)``: instead of ``write`` when the
  caller has the assembled ``Trace`` (the processor does), for sinks that need the
  spans themselves (the OTLP sink forwards them). The spans are shared, not copied.
- ``write_outcomes(trajectory, outcomes)``: more outcomes for a trajectory that was
  already written (an LLM judge answering later); per-trace facts are not counted
  again.
- ``write_session(trajectory, outcomes)``: the outcomes of a ``scope: session`` spec
  on a session's merged trajectory (``evaluators.session_merge``). Its turns were each
  written as traces already, so, as for ``write_outcomes`` (the fallback), only
  the outcomes count, never trajectory facts; ``session_turns(trajectory)`` tells
  such a trajectory apart. Callers go through ``write_session_to``.
- ``close_within(timeout)``: instead of ``close`` when the caller has a deadline
  (daemon shutdown), for sinks whose flush can take long (the OTLP sink); callers go
  through ``close_sink``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from collector.core.records import Trace
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


def write_to(
    sink: ResultSink,
    trajectory: Trajectory,
    outcomes: Sequence[Outcome],
    trace: Trace | None = None,
) -> None:
    """Hand one evaluated trace to ``sink``: ``write_trace`` if it has one and ``trace``
    is known, else ``write``. Raises what the sink raises."""
    write_trace = getattr(sink, "write_trace", None)
    if trace is not None and write_trace is not None:
        write_trace(trace, trajectory, outcomes)
    else:
        sink.write(trajectory, outcomes)


def write_more(sink: ResultSink, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
    """Hand later outcomes of an already written trajectory to ``sink``."""
    write_outcomes = getattr(sink, "write_outcomes", None)
    if write_outcomes is not None:
        write_outcomes(trajectory, outcomes)
    else:
        sink.write(trajectory, outcomes)


def write_session_to(sink: ResultSink, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
    """Hand a session's outcomes to ``sink``: ``write_session`` if it has one, else as
    later outcomes (``write_more``). Raises what the sink raises."""
    write_session = getattr(sink, "write_session", None)
    if write_session is not None:
        write_session(trajectory, outcomes)
    else:
        write_more(sink, trajectory, outcomes)


def close_sink(sink: ResultSink, timeout: float | None) -> None:
    """Close ``sink`` within ``timeout`` seconds if it can bound its flush (None: its
    own limits). Raises what the sink raises."""
    close_within = getattr(sink, "close_within", None)
    if timeout is not None and close_within is not None:
        close_within(timeout)
    else:
        sink.close()
