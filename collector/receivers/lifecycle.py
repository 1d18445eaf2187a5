"""An aiohttp application on one TCP endpoint with evald's component lifecycle.

Shared by the OTLP/HTTP receiver and the admin endpoint. aiohttp's own
``AppRunner.cleanup`` takes its drain timeout at construction; here the deadline is
an argument of ``shutdown``, so the same steps run with the caller's ``grace``.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from typing import Any

from aiohttp import web


class WebServer:
    """Serves the application built by ``make_app`` on ``host:port`` (port 0 allowed).

    ``runner_options`` go to ``aiohttp.web.AppRunner`` (e.g. ``auto_decompress``);
    with ``ssl_context`` it serves HTTPS.
    The access log is off: no per-request logging.
    """

    def __init__(
        self,
        name: str,
        host_port: tuple[str, int],
        make_app: Callable[[], web.Application],
        ssl_context: ssl.SSLContext | None = None,
        **runner_options: Any,
    ) -> None:
        self._name = name
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
        runner = web.AppRunner(
            self._make_app(), access_log=None, handle_signals=False, **self._runner_options
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
