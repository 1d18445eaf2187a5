"""``evald serve`` with ``pipeline.workers > 1``: the front process (ADR 0018).

The front runs the OTLP receivers and the admin endpoint; ``pipeline.workers``
spawned worker processes (``collector.daemon.worker``) each own the traces whose id
hashes to them and assemble, evaluate and write results for those. Each request is
split by trace id without decoding attributes (``collector.daemon.forwarder``); the
workers' answers make the OTLP answer. ``/metrics`` merges the workers' registries
with the front's (``collector.daemon.metrics_merge``); ``/debug/services`` merges
their digests; ``/readyz`` is ready while every worker is.

Start order: workers first (they are spawned before any gRPC thread exists), then
admin, then receivers. Shutdown: receivers stop (a quarter of ``shutdown.grace``),
then every worker drains in what is left, as the single-process daemon does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import CollectorRegistry

from collector.config.settings import Config, ConfigError
from collector.core.records import LogRecord, Span
from collector.daemon.admin import AdminServer, Gather
from collector.daemon.forwarder import ShardForwarder
from collector.daemon.frames import Kind
from collector.daemon.metrics_merge import merged, registry_of, unpickled
from collector.daemon.pool import WorkerPool
from collector.processing.wiring import ActiveSpecs, build_telemetry, decoder_selector
from collector.receivers.grpc import GrpcReceiver
from collector.receivers.handoff import ConsumeResult, Overloaded
from collector.receivers.http import HttpReceiver
from collector.receivers.inflight import in_flight_budget
from collector.receivers.security import ReceiverSecurityError, load_security
from collector.sinks.digest import ServiceDigest
from collector.telemetry.registry import Telemetry

log = logging.getLogger(__name__)


class FrontDaemon:
    """The front and its workers, wired from one config; the ``Daemon`` interface
    (``start``, ``shutdown``, ``ready``, ports through ``grpc`` / ``http`` / ``admin``)."""

    def __init__(
        self, config: Config, telemetry: Telemetry | None = None, log_level: int | None = None
    ) -> None:
        self.config = config
        self.telemetry = telemetry or build_telemetry(config)
        # Loaded here too so a broken spec stops the start with its usual message.
        self.specs = ActiveSpecs(config, self.telemetry)
        level = logging.getLogger().getEffectiveLevel() if log_level is None else log_level
        self.pool = WorkerPool(config, self.telemetry, level)
        otlp = config.receivers.otlp
        try:
            security = load_security(otlp, config.base_dir)
        except ReceiverSecurityError as exc:
            raise ConfigError(str(exc)) from None
        selector = decoder_selector(config)
        forward = ShardForwarder(self.pool, selector, self.telemetry, otlp.retry_after)
        in_flight = in_flight_budget(otlp, self.telemetry)
        unused = _Forwarded()
        self.grpc = GrpcReceiver(
            otlp, unused, selector, self.telemetry, security, in_flight=in_flight, forward=forward
        )
        self.http = HttpReceiver(
            otlp, unused, selector, self.telemetry, security, in_flight=in_flight, forward=forward
        )
        gather = Gather(self._metrics, self._services)
        self.admin = AdminServer(config.admin, self.telemetry, lambda: self.ready, gather=gather)
        self._started = False
        self._stopping = False

    @property
    def ready(self) -> bool:
        return self._started and not self._stopping and self.pool.ready

    async def start(self) -> None:
        await self.pool.start()  # before any gRPC server (and its threads) exists
        await self.admin.start()
        if self.config.receivers.otlp.grpc.enabled:
            await self.grpc.start()
        if self.config.receivers.otlp.http.enabled:
            await self.http.start()
        self._started = True

    def reload(self) -> None:
        """Every worker reloads its specs (the front's copy was only the start check)."""
        self.pool.reload()

    async def shutdown(self) -> bool:
        """Stop receiving, then drain every worker within ``shutdown.grace``; False if a
        worker dropped traces or had to be killed. Safe before start and twice."""
        self._stopping = True
        grace = self.config.shutdown.grace
        started = time.monotonic()
        receiver_grace = grace / 4
        await asyncio.gather(self.grpc.shutdown(receiver_grace), self.http.shutdown(receiver_grace))
        clean = await self.pool.drain(max(0.0, started + grace - time.monotonic()))
        await self.admin.shutdown(1.0)
        return clean

    async def _metrics(self) -> CollectorRegistry:
        bodies = await self.pool.ask_bodies(Kind.METRICS)

        def families() -> Iterator[Metric]:  # unpickled and merged while rendering
            workers = [(index, list(unpickled(body))) for index, body in bodies]
            return merged(self.telemetry.registry.collect(), workers)

        return registry_of(families)

    async def _services(self) -> dict[str, Any]:
        digest = ServiceDigest()
        for _, worker_digest in await self.pool.ask(Kind.SERVICES):
            digest.merge(worker_digest)
        return digest.snapshot()


class _Forwarded:
    """The receivers' consumer when they forward: never called."""

    def consume(self, spans: Sequence[Span]) -> ConsumeResult:
        raise Overloaded("the front forwards; it does not consume")

    def consume_logs(self, records: Sequence[LogRecord]) -> ConsumeResult:
        raise Overloaded("the front forwards; it does not consume")
