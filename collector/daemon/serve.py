"""``evald serve``: the daemon's lifecycle.

Start order is downstream first (evaluation thread, completion timer, admin, then
receivers) so every stage drains into a live consumer; shutdown is the reverse:
stop accepting, release and evaluate every held trace, close sinks, then admin.
Signal handlers are installed before readiness is announced. Specs reload on
SIGHUP and, every ``specs_watch_interval``, when their files changed.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time

from collector.config.settings import Config, ConfigError
from collector.core.build_info import warn_if_interpreted
from collector.core.clock import Clock, MonotonicClock
from collector.core.gc_settings import settle_for_streaming
from collector.core.switching import hand_over_every
from collector.daemon.admin import AdminServer
from collector.daemon.front import FrontDaemon
from collector.daemon.log_limits import limit_log_floods
from collector.daemon.pipeline import Pipeline
from collector.processing.spec_watch import SpecWatcher
from collector.processing.wiring import (
    ActiveSpecs,
    build_sinks,
    build_stage,
    build_telemetry,
    decoder_selector,
)
from collector.receivers.grpc import GrpcReceiver
from collector.receivers.http import HttpReceiver
from collector.receivers.inflight import in_flight_budget
from collector.receivers.security import ReceiverSecurityError, load_security
from collector.sinks.digest import ServiceDigest
from collector.telemetry.registry import Telemetry

log = logging.getLogger(__name__)


class Daemon:
    """All of evald's live components, wired from one config.

    ``start`` binds every listener (ports may be 0: see the ``*_port`` properties);
    ``shutdown`` is safe before start and twice.
    """

    def __init__(
        self, config: Config, telemetry: Telemetry | None = None, clock: Clock | None = None
    ) -> None:
        self.config = config
        self.telemetry = telemetry or build_telemetry(config)
        self.specs = ActiveSpecs(config, self.telemetry)
        self.spec_watch = SpecWatcher(self.specs.reload_if_changed, config.specs_watch_interval)
        clock = clock or MonotonicClock()
        self.digest = ServiceDigest()
        sinks = [*build_sinks(config, self.telemetry), self.digest]
        self._stage = build_stage(
            config, self.specs, sinks, self.telemetry, clock=clock, daemon=True
        )
        self.pipeline = Pipeline(config, clock, self._stage, self.telemetry)
        selector = decoder_selector(config)
        otlp = config.receivers.otlp
        try:
            security = load_security(otlp, config.base_dir)
        except ReceiverSecurityError as exc:
            raise ConfigError(str(exc)) from None
        in_flight = in_flight_budget(otlp, self.telemetry)  # one budget, both receivers
        self.grpc = GrpcReceiver(
            otlp, self.pipeline, selector, self.telemetry, security, in_flight=in_flight
        )
        self.http = HttpReceiver(
            otlp, self.pipeline, selector, self.telemetry, security, in_flight=in_flight
        )
        self.admin = AdminServer(config.admin, self.telemetry, lambda: self.ready, self.digest)
        self._started = False
        self._stopping = False

    @property
    def ready(self) -> bool:
        return self._started and not self._stopping and self.pipeline.ready

    async def start(self) -> None:
        self.pipeline.start()
        await self.admin.start()
        if self.config.receivers.otlp.grpc.enabled:
            await self.grpc.start()
        if self.config.receivers.otlp.http.enabled:
            await self.http.start()
        await self.spec_watch.start()
        self._started = True

    async def shutdown(self) -> bool:
        """Graceful stop within ``shutdown.grace``; False if traces had to be dropped.

        One budget: in-flight exports get up to a quarter of it; evaluating what was
        accepted gets the time up to the last quarter when judges or OTLP output must
        be drained and flushed after it (else all of it); they get what is left.
        """
        self._stopping = True
        await self.spec_watch.shutdown()
        grace = self.config.shutdown.grace
        started = time.monotonic()
        receiver_grace = grace / 4
        await asyncio.gather(self.grpc.shutdown(receiver_grace), self.http.shutdown(receiver_grace))
        outputs = grace / 4 if self._drains_outputs else 0.0
        evaluation_deadline = started + grace - outputs
        clean = await self.pipeline.shutdown(max(0.0, evaluation_deadline - time.monotonic()))
        flush = max(0.0, started + grace - time.monotonic())
        await asyncio.to_thread(self._stage.close, flush)
        await self.admin.shutdown(1.0)
        return clean

    @property
    def _drains_outputs(self) -> bool:
        """Whether closing the processor can take time (judge calls, OTLP exports)."""
        return bool(self.config.judges.endpoints) or self.config.outputs.otlp.endpoint is not None


async def run_daemon(config: Config) -> int:
    """Run until SIGTERM/SIGINT; SIGHUP reloads specs. Returns the exit code.

    One process with ``pipeline.workers`` 1 (``Daemon``); else a front process and
    its workers (``collector.daemon.front.FrontDaemon``, ADR 0018)."""
    limit_log_floods()  # per-request records of the libraries (see log_limits)
    hand_over_every(config.pipeline.switch_interval)
    workers = config.pipeline.worker_count()
    daemon: Daemon | FrontDaemon = Daemon(config) if workers == 1 else FrontDaemon(config)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    reload = daemon.specs.reload if isinstance(daemon, Daemon) else daemon.reload
    loop.add_signal_handler(signal.SIGHUP, lambda: loop.run_in_executor(None, reload))
    warn_if_interpreted()
    try:
        await daemon.start()
    except (OSError, RuntimeError) as exc:  # a port in use; a worker that cannot start
        log.error("%s", exc)
        await daemon.shutdown()
        return 1
    settle_for_streaming()  # everything loaded now lives until exit
    log.info(
        "evald ready: otlp grpc %s, otlp http %s, admin %s, %d specs, %d worker process%s",
        _where(config.receivers.otlp.grpc.enabled, daemon.grpc),
        _where(config.receivers.otlp.http.enabled, daemon.http),
        f"port {daemon.admin.port}",
        len(daemon.specs()),
        workers,
        "" if workers == 1 else "es",
    )
    await stop.wait()
    log.info("shutting down (grace %.1fs)", config.shutdown.grace)
    clean = await daemon.shutdown()
    log.info("evald stopped%s", "" if clean else " (some traces were dropped)")
    return 0


def _where(enabled: bool, receiver: GrpcReceiver | HttpReceiver) -> str:
    return f"port {receiver.port}" if enabled else "disabled"
