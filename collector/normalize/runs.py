"""The normalizer's entry points: the runs a trace holds, and each one's trajectory.

``normalize_for`` reads a trace as one run (``build.RunBuilder``); ``normalize_runs``
first asks whether the trace holds a conversation's turns (``turns``) and reads each
turn as a run of its own. The daemon and replay evaluate ``normalize_runs``'s runs.
"""

from __future__ import annotations

from collector.core.records import Trace
from collector.normalize.build import NOT_A_RUN, RunBuilder
from collector.normalize.mappings import Mappings
from collector.normalize.step_records import no_run
from collector.normalize.tree import SpanTree
from collector.normalize.turns import Run, conversation_turns, inherit_session, turn_trace
from evaluators.depth import CALL_IDS, EVERYTHING
from evaluators.trajectory import Trajectory


def normalize(trace: Trace, mappings: Mappings | None = None) -> Trajectory:
    """The trajectory of one trace read as one run. Never raises on odd span data (see
    ``values``)."""
    return normalize_for(trace, mappings, EVERYTHING)[0]


def normalize_for(
    trace: Trace, mappings: Mappings | None, parts: frozenset[str]
) -> tuple[Trajectory, bool]:
    """``normalize`` building only the optional ``parts``, and whether one was left out.
    The trace is read as one run, whatever it holds (``normalize_runs`` splits turns)."""
    tree = SpanTree(trace.spans)
    if not len(tree):
        return no_run(trace.trace_id.hex(), NOT_A_RUN), False
    builder = RunBuilder(trace, tree, mappings)
    builder.call_ids = CALL_IDS in parts
    return builder.trajectory(), builder.left_out


def normalize_runs(trace: Trace, mappings: Mappings | None, parts: frozenset[str]) -> list[Run]:
    """The runs ``trace`` holds, each with its trajectory (``normalize_for``): the trace
    itself, or one run per turn of a conversation recorded in it (``turns``). A turn's
    trajectory has the trace's session id when only spans outside the turns record it."""
    tree = SpanTree(trace.spans)
    if not len(tree):
        return [Run(trace, no_run(trace.trace_id.hex(), NOT_A_RUN), False)]
    builder = RunBuilder(trace, tree, mappings)
    builder.call_ids = CALL_IDS in parts
    whole = builder.trajectory()
    turns = conversation_turns(tree, builder.roles, builder.llms)
    if not turns:
        return [Run(trace, whole, builder.left_out)]
    runs = []
    for turn in turns:
        run = turn_trace(trace, tree, turn)
        trajectory, left_out = normalize_for(run, mappings, parts)
        runs.append(Run(run, inherit_session(trajectory, whole.session_id), left_out))
    return runs
