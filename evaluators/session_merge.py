"""Session trajectories: the turns of one conversation merged into one ``Trajectory``.

A multi-turn conversation is one trace per user turn, tied together by a session
(conversation) id. A spec with ``scope: session`` is matched and evaluated on the
merge of a session's turns, so every evaluator works on a whole conversation
unchanged: the trajectory is an ordinary ``Trajectory`` whose steps are those of
every turn, one turn after the other.

The number of turns and their trace ids are recorded as attributes
(``evald.session.turns``, ``evald.session.trace_ids``) rather than as new
``Trajectory`` fields: the model is the plug-in contract and the normalizer's
compiled output, and attributes are already what spec matching reads
(``match: {attributes: {evald.session.turns: 3}}``). ``session_turns`` tells a
session trajectory from a trace's.

Pure functions; this module never imports ``collector``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evaluators.trajectory import Trajectory

TURNS_ATTRIBUTE = "evald.session.turns"
TRACE_IDS_ATTRIBUTE = "evald.session.trace_ids"


def merge_session(turns: Sequence[Trajectory]) -> Trajectory:
    """One trajectory for the ``turns`` of one session (any order; at least one).

    Turns are ordered by start time (then trace id, for a stable order), and each
    turn's steps are kept as they are, one turn after the other (turns that
    overlap in time are not interleaved). ``input`` is the first turn's, ``output``
    the last turn's; ``service``, ``agent``, ``session_id``, attributes and
    resource attributes the first turn's; ``agents`` and ``conventions`` the union
    in order. ``failed`` if any turn failed (``error``: the first failed turn's);
    ``incomplete`` if any turn was. ``latency_s`` runs from the first turn's start
    to the latest end of any turn. ``evald.session.trace_ids`` names each trace the
    turns come from once, in turn order (the turns of a conversation recorded in one
    trace share its id). ``trace_id`` and ``root_span_id`` are the **last** turn's,
    so results, exemplars and evaluation spans attach to a real trace; token totals
    add up on their own (they are sums over the steps).
    """
    if not turns:
        raise ValueError("a session has at least one turn")
    ordered = sorted(turns, key=lambda turn: (turn.start_unix_nano, turn.trace_id))
    first, last = ordered[0], ordered[-1]
    end_ns = max(turn.start_unix_nano + round(turn.latency_s * 1e9) for turn in ordered)
    failed = [turn for turn in ordered if turn.failed]
    return first._replace(
        trace_id=last.trace_id,
        root_span_id=last.root_span_id,
        output=last.output,
        failed=bool(failed),
        error=next((turn.error for turn in failed if turn.error is not None), None),
        latency_s=max(0, end_ns - first.start_unix_nano) / 1e9,
        steps=tuple(step for turn in ordered for step in turn.steps),
        agents=_union(turn.agents for turn in ordered),
        conventions=_union(turn.conventions for turn in ordered),
        incomplete=any(turn.incomplete for turn in ordered),
        attributes={
            **first.attributes,
            TURNS_ATTRIBUTE: len(ordered),
            TRACE_IDS_ATTRIBUTE: tuple(dict.fromkeys(turn.trace_id for turn in ordered)),
        },
    )


def session_turns(trajectory: Trajectory) -> int | None:
    """How many turns a session trajectory merged; None for one trace's trajectory."""
    turns = trajectory.attributes.get(TURNS_ATTRIBUTE)
    return turns if isinstance(turns, int) and not isinstance(turns, bool) else None


def session_trace_ids(trajectory: Trajectory) -> tuple[str, ...]:
    """The trace ids of a session trajectory's turns, each once, in turn order (``()``
    for a trace)."""
    ids = trajectory.attributes.get(TRACE_IDS_ATTRIBUTE) if session_turns(trajectory) else None
    return tuple(str(ident) for ident in ids) if isinstance(ids, tuple) else ()


def _union(groups: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in groups:
        seen.update(dict.fromkeys(group))
    return tuple(seen)
