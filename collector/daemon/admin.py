"""The admin endpoint: ``/metrics``, ``/healthz``, ``/readyz``, ``/debug/services``
(default port 9464).

``/metrics`` serves the Prometheus text format, or OpenMetrics when the scraper's
``Accept`` asks for it (exemplars need OpenMetrics), gzip-compressed when the
scraper accepts it. It is rendered on a worker thread, one render at a time, so a
large exposition never stalls the receivers that share the event loop.
``/healthz`` answers 200 while the process serves at all; ``/readyz`` answers 200
only while ``ready()`` is true (the daemon flips it after start-up and before
shutdown) and the last ``/metrics`` rendered, else 503: a daemon whose metrics
cannot be scraped is restarted, not left blind.
``/debug/services`` answers the per-service digest of what the traces carry
(``evald doctor --live``), JSON.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client.registry import CollectorRegistry

from collector.config.settings import Admin
from collector.daemon.exposition import Exposition
from collector.receivers.common import RateLimitedLog
from collector.receivers.lifecycle import Limits, WebServer, WebService
from collector.sinks.digest import ServiceDigest
from collector.telemetry.registry import Telemetry

_log = RateLimitedLog(logging.getLogger(__name__))


class Gather:
    """What the admin endpoints show when it comes from other processes too."""

    def __init__(
        self,
        metrics: Callable[[], Awaitable[CollectorRegistry]],
        services: Callable[[], Awaitable[dict[str, Any]]],
    ) -> None:
        self.metrics = metrics
        self.services = services


class AdminServer(WebService):
    """Serves the admin endpoints on ``config.endpoint`` in the running event loop.

    Lifecycle: ``start`` binds (port 0 allowed, see ``port``); ``shutdown(grace)``
    stops accepting and drains in-flight requests; safe before ``start`` and twice.
    ``ready`` is called on every ``/readyz`` request and must be cheap and thread-safe.
    """

    def __init__(
        self,
        config: Admin,
        telemetry: Telemetry,
        ready: Callable[[], bool],
        digest: ServiceDigest | None = None,
        *,
        gather: Gather | None = None,
    ) -> None:
        """``gather``, when given, supplies what ``/metrics`` and ``/debug/services``
        show (a daemon with workers: theirs merged) instead of this process's."""
        self._registry = telemetry.registry
        self._ready = ready
        self._digest = digest or ServiceDigest()
        self._gather = gather
        self._render_error: str | None = None  # why the last /metrics failed
        self._render_lock = asyncio.Lock()  # one render at a time: scrapes queue
        refused = telemetry.ingest.connections_refused.labels(server="admin")
        limits = Limits(config.max_connections, config.idle_timeout, refused.inc)
        self._server = WebServer("admin", config.host_port, self._make_app, limits)

    def _make_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/debug/services", self._services)
        return app

    async def _metrics(self, request: web.Request) -> web.Response:
        exposition = Exposition(request.headers.get("Accept", ""))
        try:
            async with self._render_lock:
                registry = self._registry if self._gather is None else await self._gather.metrics()
                body = await asyncio.to_thread(exposition.render, registry)
        except Exception as exc:  # a collector that cannot render: say so, turn unready
            self._render_error = f"{type(exc).__name__}: {exc}"
            _log.log("render", logging.ERROR, f"/metrics cannot render: {exc!r}", exc_info=exc)
            return web.Response(status=500, text=f"cannot render metrics: {self._render_error}\n")
        self._render_error = None
        response = web.Response(body=body)
        # Set verbatim: the OpenMetrics type carries version/escaping parameters.
        response.headers["Content-Type"] = exposition.content_type
        response.enable_compression()  # only if Accept-Encoding allows it
        return response

    async def _services(self, request: web.Request) -> web.Response:
        if self._gather is not None:
            return web.json_response(await self._gather.services())
        return web.json_response(self._digest.snapshot())

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self._render_error is not None:
            return web.Response(
                status=503, text=f"not ready: /metrics fails: {self._render_error}\n"
            )
        if self._ready():
            return web.Response(text="ready\n")
        return web.Response(status=503, text="not ready\n")
