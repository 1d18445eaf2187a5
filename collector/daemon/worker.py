"""One worker process of ``evald serve`` (``pipeline.workers > 1``, ADR 0018).

A worker owns the traces whose id hashes to it: it decodes the requests the front
forwards (already split by trace id), assembles, evaluates and writes results, with
the same objects as the single-process daemon (``Ingest``, ``Pipeline``, the stage
of ``build_stage``). It answers each export with what ``Ingest`` decided (partial
success, or a refusal such as a full evaluation queue), ships its metrics and
service digest when the front asks, and drains when told to (or when the front is
gone). It ignores SIGINT and SIGTERM: a terminal's Ctrl-C or a process-group
SIGTERM reaches the front, which drains every worker within ``shutdown.grace``.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from collector.config.settings import Config, Sessions
from collector.core.clock import Clock, MonotonicClock
from collector.core.gc_settings import settle_for_streaming
from collector.core.switching import hand_over_every
from collector.daemon.frames import TRANSPORTS, Answer, Frame, Kind, encode, read_frame
from collector.daemon.log_limits import limit_log_floods
from collector.daemon.pipeline import Pipeline
from collector.daemon.routed_sessions import RoutedSessions
from collector.daemon.shared_state import WorkerState
from collector.decode import DecodedBatch, DecodedLogs, decode_logs_protobuf, decode_protobuf
from collector.processing.spec_watch import SpecWatcher
from collector.processing.wiring import (
    ActiveSpecs,
    build_sinks,
    build_stage,
    build_telemetry,
    decoder_selector,
)
from collector.receivers.common import ExportError, Ingest, PartialSuccess, Refusal
from collector.sinks.digest import ServiceDigest
from collector.telemetry.registry import Telemetry
from evaluators.trajectory import Trajectory

log = logging.getLogger(__name__)

_EXPORTS = frozenset((Kind.TRACES, Kind.LOGS, Kind.DECODED_SPANS, Kind.DECODED_LOGS))
_PUBLISH_S = 0.05  # the shared state follows the timer's releases this closely


@dataclass(frozen=True)
class WorkerSetup:
    """What a spawned worker is started with (pickled to it)."""

    config: Config
    index: int
    count: int
    log_level: int = logging.INFO


def run_worker(setup: WorkerSetup, sock: socket.socket, shared: Any) -> None:
    """The worker process's entry point (module level, so ``spawn`` can import it)."""
    hand_over_every(setup.config.pipeline.switch_interval)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    if not logging.getLogger().handlers:  # spawned: nothing inherited
        logging.basicConfig(
            level=setup.log_level,
            format=f"%(asctime)s %(levelname)s %(name)s[worker {setup.index}]: %(message)s",
        )
    limit_log_floods()
    asyncio.run(Worker(setup, sock, WorkerState(shared, setup.index)).run())


class Worker:
    """The pipeline of one shard, driven by frames from the front."""

    def __init__(self, setup: WorkerSetup, sock: socket.socket, state: WorkerState) -> None:
        config = setup.config
        self._setup = setup
        self._sock = sock
        self._state = state
        self.telemetry = build_telemetry(config)
        self.specs = ActiveSpecs(config, self.telemetry)
        self._spec_watch = SpecWatcher(self.specs.reload_if_changed, config.specs_watch_interval)
        self.digest = ServiceDigest()
        clock = MonotonicClock()
        self._sessions: RoutedSessions | None = None
        self._stage = build_stage(
            config,
            self.specs,
            [*build_sinks(config, self.telemetry), self.digest],
            self.telemetry,
            clock=clock,
            daemon=True,
            session_stage=self._make_sessions,
        )
        self.pipeline = Pipeline(config, clock, self._stage, self.telemetry)
        selector = decoder_selector(config)
        retry_after = config.receivers.otlp.retry_after
        self._ingests = [
            Ingest(name, self.pipeline, selector, self.telemetry, retry_after)
            for name in TRANSPORTS
        ]
        self._writer: asyncio.StreamWriter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _make_sessions(
        self,
        config: Sessions,
        clock: Clock,
        telemetry: Telemetry,
        evaluate: Callable[[Trajectory], None],
    ) -> RoutedSessions:
        self._sessions = RoutedSessions(
            config,
            clock,
            telemetry,
            evaluate,
            shard=self._setup.index,
            count=self._setup.count,
            specs=self.specs,
            send=self._send_turn,
        )
        return self._sessions

    async def run(self) -> None:
        """Serve frames until told to drain, or until the front is gone (then drain too)."""
        self._loop = asyncio.get_running_loop()
        reader, self._writer = await asyncio.open_unix_connection(sock=self._sock)
        self.pipeline.start()
        await self._spec_watch.start()
        publisher = self._loop.create_task(self._publish_forever())
        settle_for_streaming()  # everything loaded now lives until exit
        try:
            while (frame := await read_frame(reader)) is not None:
                if frame.kind is Kind.DRAIN:
                    clean = await self._drain(pickle.loads(frame.body))
                    self._send(encode(Kind.DRAIN, frame.ident, pickle.dumps(clean)))
                    await self._writer.drain()
                    return
                self._handle(frame)
            log.warning("the front process is gone; draining")
            await self._drain(self._setup.config.shutdown.grace)
        finally:
            publisher.cancel()
            self._state.clear()

    def _handle(self, frame: Frame) -> None:
        kind = frame.kind
        if kind in _EXPORTS:
            answer = self._export(frame)
            self._send(encode(Kind.ANSWER, frame.ident, pickle.dumps(answer)))
            self._publish()
        elif kind is Kind.METRICS:
            # Each family pickled on its own: the front unpickles them one at a time,
            # pausing between them, while it renders (``metrics_merge.unpickled``).
            families = [pickle.dumps(family) for family in self.telemetry.registry.collect()]
            self._send(encode(Kind.METRICS, frame.ident, pickle.dumps(families)))
        elif kind is Kind.SERVICES:
            self._send(encode(Kind.SERVICES, frame.ident, pickle.dumps(self.digest)))
        elif kind is Kind.RELOAD:
            asyncio.get_running_loop().run_in_executor(None, self.specs.reload)
        elif kind is Kind.TURN:
            self._take_turn(pickle.loads(frame.body))

    def _export(self, frame: Frame) -> Answer:
        try:
            result = self._ingest(frame)
        except ExportError as refused:
            return Answer(0, refused.message, refused.refusal.value, refused.retry_after_s)
        except Exception:  # one of the catch-all places: answered 500, logged
            log.exception("an export failed unexpectedly")
            return Answer(0, "internal error; see the evald log", Refusal.INTERNAL.value)
        return Answer(result.rejected, result.message)

    def _ingest(self, frame: Frame) -> PartialSuccess:
        if frame.kind is Kind.DECODED_LOGS:
            carrier, logs = pickle.loads(frame.body)
            decoded_logs: DecodedLogs = logs
            ingest: Ingest = self._ingests[int(carrier)]
            return ingest.export_logs(lambda _data, _selector: decoded_logs, b"")
        if frame.kind is Kind.DECODED_SPANS:
            carrier, batch = pickle.loads(frame.body)
            decoded: DecodedBatch = batch
            ingest = self._ingests[int(carrier)]
            return ingest.export(lambda _data, _selector: decoded, b"")
        ingest = self._ingests[frame.body[0]]
        payload = frame.body[1:]
        if frame.kind is Kind.LOGS:
            return ingest.export_logs(decode_logs_protobuf, payload)
        return ingest.export(decode_protobuf, payload)

    # --- sessions: turns to and from other workers ---------------------------------
    def _send_turn(self, owner: int, trajectory: Trajectory) -> None:
        """From the evaluation thread: the turn goes to the front, which routes it."""
        body = pickle.dumps(trajectory)
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._send, encode(Kind.TURN, owner, body))

    def _take_turn(self, trajectory: Trajectory) -> None:
        sessions = self._sessions
        if sessions is None or not self.pipeline.submit(
            lambda: sessions.add_routed_turn(trajectory)
        ):
            self.telemetry.workers.turns_lost.inc()

    # --- state and shutdown -----------------------------------------------------------
    def _send(self, data: bytes) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.write(data)

    def _publish(self) -> None:
        traces, spans = self.pipeline.held()
        self._state.publish(self.pipeline.ready, self.pipeline.full, traces, spans)

    async def _publish_forever(self) -> None:
        while True:
            self._publish()
            if self._writer is not None:
                await self._writer.drain()  # answers wait for a slow reader, bounded
            await asyncio.sleep(_PUBLISH_S)

    async def _drain(self, grace: float) -> bool:
        """``Daemon.shutdown`` without receivers: evaluate what is held within ``grace``."""
        started = time.monotonic()
        await self._spec_watch.shutdown()
        config = self._setup.config
        outputs_drain = bool(config.judges.endpoints) or config.outputs.otlp.endpoint is not None
        outputs = grace / 4 if outputs_drain else 0.0
        clean = await self.pipeline.shutdown(max(0.0, started + grace - outputs - time.monotonic()))
        self._publish()
        flush = max(0.0, started + grace - time.monotonic())
        await asyncio.to_thread(self._stage.close, flush)
        return clean
