"""An aiohttp application on one TCP endpoint with evald's component lifecycle.

Shared by the OTLP/HTTP receiver and the admin endpoint. aiohttp's own
``AppRunner.cleanup`` takes its drain timeout at construction; here the deadline is
an argument of ``shutdown``, so the same steps run with the caller's ``grace``.

Connections are bounded (issue 14): at most ``max_connections`` are open at once (a
new one beyond gets a 503 with ``Retry-After`` and is closed, never queued), and one
that has not sent a complete request header within ``idle_timeout`` (since it
opened or since its last answer) is closed, which also ends slow-header
(slowloris) and half-open connections.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from typing import Any, cast

from aiohttp import web
from aiohttp.web_server import Server

# The answer to a connection over the limit: an OTLP client retries a 503.
_BUSY_TEXT = b"too many open connections\n"
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
    b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT)
)


class Limits:
    """Connection limits of one ``WebServer``; ``on_refused`` counts refusals."""

    def __init__(
        self,
        max_connections: int,
        idle_timeout: float,
        on_refused: Callable[[], None] | None = None,
    ) -> None:
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self.on_refused = on_refused


class _Busy(asyncio.Protocol):
    """Answers 503 and closes: the connection beyond ``max_connections``."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        cast(asyncio.Transport, transport).write(_BUSY)
        transport.close()


class _LimitedServer:
    """aiohttp's ``Server`` as protocol factory, refusing past ``limits.max_connections``.

    Everything else is the wrapped server's. Its open connections are counted as
    aiohttp counts them (made, not yet lost): a burst accepted in one loop turn may
    pass the limit by what the listen backlog holds.
    """

    def __init__(self, server: Server, limits: Limits) -> None:
        self._server = server
        self._limits = limits

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)

    def __call__(self) -> asyncio.Protocol:
        if len(self._server.connections) >= self._limits.max_connections:
            if self._limits.on_refused is not None:
                self._limits.on_refused()
            return _Busy()
        return self._server()


class _Runner(web.AppRunner):
    """``AppRunner`` whose server refuses connections past the limit."""

    def __init__(self, app: web.Application, limits: Limits, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._limits = limits

    async def _make_server(self) -> Server:
        server = await super()._make_server()
        return cast(Server, _LimitedServer(server, self._limits))


class WebServer:
    """Serves the application built by ``make_app`` on ``host:port`` (port 0 allowed).

    ``runner_options`` go to ``aiohttp.web.AppRunner`` (e.g. ``auto_decompress``);
    with ``ssl_context`` it serves HTTPS. ``limits`` bound its connections (see the
    module docstring). The access log is off: no per-request logging.
    """

    def __init__(
        self,
        name: str,
        host_port: tuple[str, int],
        make_app: Callable[[], web.Application],
        limits: Limits,
        ssl_context: ssl.SSLContext | None = None,
        **runner_options: Any,
    ) -> None:
        self._name = name
        self._limits = limits
        self._ssl_context = ssl_context
        self._host, self._requested_port = host_port
        self._make_app = make_app
        self._runner_options = runner_options
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The bound TCP port; ``RuntimeError`` unless serving."""
        if self._port is None:
            raise RuntimeError(f"the {self._name} server is not started")
        return self._port

    async def start(self) -> None:
        """Bind and serve; ``OSError`` naming the endpoint if the port cannot be bound."""
        if self._runner is not None:
            raise RuntimeError(f"the {self._name} server is already started")
        runner = _Runner(
            self._make_app(),
            self._limits,
            access_log=None,
            handle_signals=False,
            keepalive_timeout=self._limits.idle_timeout,
            **self._runner_options,
        )
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._requested_port, ssl_context=self._ssl_context)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            where = f"{self._host}:{self._requested_port}"
            raise OSError(exc.errno, f"{self._name}: cannot listen on {where}: {exc}") from exc
        self._runner, self._port = runner, site.port

    async def shutdown(self, grace: float) -> None:
        """Stop accepting, let in-flight requests finish within ``grace`` s, cancel the rest.

        Safe before ``start`` and twice.
        """
        runner, self._runner, self._port = self._runner, None, None
        if runner is None:
            return
        # A connection accepted in this loop iteration is set up by a task not yet run;
        # closing the listener first makes CPython 3.11 leak its socket (assert in
        # Server._attach). One turn of the loop lets it attach, so it is drained below.
        await asyncio.sleep(0)
        for site in list(runner.sites):
            await site.stop()  # closes the listening socket
        server = runner.server
        if server is not None:
            # Let requests that were just accepted reach their handler (as aiohttp does).
            await asyncio.sleep(0)
            server.pre_shutdown()  # idle keep-alive connections close now
            await server.shutdown(grace)  # busy ones get ``grace`` seconds, then cancelled
        await runner.cleanup()


class WebService:
    """An HTTP service whose lifecycle is its ``WebServer``'s (subclasses set ``_server``)."""

    _server: WebServer

    @property
    def port(self) -> int:
        """The bound TCP port; ``RuntimeError`` unless serving."""
        return self._server.port

    async def start(self) -> None:
        """Bind and start serving; ``OSError`` naming the endpoint if it cannot bind."""
        await self._server.start()

    async def shutdown(self, grace: float) -> None:
        """Stop accepting, give in-flight requests ``grace`` seconds, then cancel them."""
        await self._server.shutdown(grace)
