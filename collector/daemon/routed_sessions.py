"""Sessions across serve's workers: each turn is held by the worker that owns its session.

Workers own trace ids (the front splits requests by trace id), but the turns of one
session are different traces and so land on different workers. After a worker
evaluates a trace, a turn that a ``scope: session`` spec may hold is sent (through
the front) to the worker that owns ``(service, session id)``, the sharding key of
``evald replay --workers``; that worker holds and merges every turn of the session,
so sessions are evaluated whole, as in one process (ADR 0018).
"""

from __future__ import annotations

from collections.abc import Callable

from collector.config.settings import Sessions
from collector.core.clock import Clock
from collector.processing.sessions import SessionStage
from collector.receivers.wire_split import shard_of
from collector.telemetry.registry import Telemetry
from evaluators.spec import SpecSet
from evaluators.trajectory import Trajectory

SendTurn = Callable[[int, Trajectory], None]  # (owner worker, turn): from the evaluation thread


def session_owner(trajectory: Trajectory, count: int) -> int:
    """The worker that holds the session of ``trajectory`` (which has a session id)."""
    return session_shard(trajectory.service, trajectory.session_id or "", count)


def session_shard(service: str, session_id: str, count: int) -> int:
    """The worker of ``count`` that holds the session ``session_id`` of ``service``."""
    key = f"{service}\0{session_id}"
    return shard_of(key.encode("utf-8", "surrogatepass"), count)


class RoutedSessions(SessionStage):
    """A ``SessionStage`` that keeps only its own worker's sessions and sends other
    turns to their owner with ``send``; ``add_routed_turn`` takes the turns sent here."""

    def __init__(
        self,
        config: Sessions,
        clock: Clock,
        telemetry: Telemetry,
        evaluate: Callable[[Trajectory], None],
        *,
        shard: int,
        count: int,
        specs: Callable[[], SpecSet],
        send: SendTurn,
    ) -> None:
        super().__init__(config, clock, telemetry, evaluate)
        self._shard = shard
        self._count = count
        self._specs = specs
        self._send = send

    def add_turn(self, trajectory: Trajectory, specs: SpecSet) -> None:
        if trajectory.session_id and specs.has_session_specs:
            owner = session_owner(trajectory, self._count)
            if owner != self._shard:
                if specs.may_hold_session_of(trajectory):
                    self._send(owner, trajectory)
                return
        super().add_turn(trajectory, specs)

    def add_routed_turn(self, trajectory: Trajectory) -> None:
        """A turn another worker evaluated, whose session this worker owns."""
        super().add_turn(trajectory, self._specs())
