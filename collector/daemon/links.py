"""The front's end of one worker's socket: requests paired with answers, routed turns.

Runs on the front's event loop. A request is a frame with a fresh ``ident``; the
worker answers with the same ``ident``, and the answer resolves the future
``request`` returned. When the worker goes away (it died, or drained and exited),
every unanswered request fails with ``LinkClosed``: the receivers answer those
exports with a retryable refusal, so the sender retries them (ADR 0018).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
from collections.abc import Callable

from collector.daemon.frames import Kind, encode, read_frame

log = logging.getLogger(__name__)

OnTurn = Callable[[int, bytes], None]  # (owner worker, pickled trajectory)


class LinkClosed(Exception):
    """The worker went away before it answered."""


class WorkerLink:
    """One worker's socket, front side. ``open`` first; ``close`` is safe twice."""

    def __init__(self, index: int, sock: socket.socket, on_turn: OnTurn) -> None:
        self.index = index
        self._sock = sock
        self._on_turn = on_turn
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[bytes]] = {}
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._closed = False

    async def open(self) -> None:
        reader, self._writer = await asyncio.open_unix_connection(sock=self._sock)
        self._reader_task = asyncio.get_running_loop().create_task(self._read_forever(reader))

    @property
    def alive(self) -> bool:
        return not self._closed and self._writer is not None

    @property
    def pending(self) -> int:
        """Requests sent and not answered."""
        return len(self._pending)

    def request(self, kind: Kind, body: bytes) -> asyncio.Future[bytes]:
        """Send a request; the future gets the answer's body, or ``LinkClosed``."""
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        if not self.alive:
            future.set_exception(LinkClosed(f"worker {self.index} is not running"))
            return future
        ident = next(self._ids) & 0xFFFFFFFF
        self._pending[ident] = future
        self.send(kind, body, ident)
        return future

    def send(self, kind: Kind, body: bytes = b"", ident: int = 0) -> None:
        """A frame that needs no answer (reload, a routed turn); dropped if closed."""
        if self.alive and self._writer is not None:
            self._writer.write(encode(kind, ident, body))

    async def _read_forever(self, reader: asyncio.StreamReader) -> None:
        try:
            while (frame := await read_frame(reader)) is not None:
                if frame.kind is Kind.TURN:
                    self._on_turn(frame.ident, frame.body)
                    continue
                future = self._pending.pop(frame.ident, None)
                if future is not None and not future.done():
                    future.set_result(frame.body)
        except Exception:  # a bug: the worker is treated as gone (the pool restarts it)
            log.exception("reading from worker %d failed", self.index)
        finally:
            self._fail_pending()

    def _fail_pending(self) -> None:
        self._closed = True
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(LinkClosed(f"worker {self.index} stopped"))

    async def close(self) -> None:
        """Close the socket and fail what is unanswered."""
        self._fail_pending()
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(ConnectionError):
                await self._writer.wait_closed()
        if self._reader_task is not None:
            self._reader_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader_task
