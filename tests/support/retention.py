"""What still holds a request's bytes after the request was answered.

Reference cycles keep objects alive until the cyclic collector runs, which evald's
processes space out (``collector.core.gc_settings``). A receiver that leaves a request's
bytes in a cycle grows by a request per call between collections (ADR 0027).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

# A server thread may still drop its last reference after the client has its answer
# (aiohttp's request object); a copy held by a cycle stays, however long.
SETTLE_S = 1.0


def holders_after(payload: bytes, send: Callable[[], object], calls: int = 3) -> list[str]:
    """Run ``send`` ``calls`` times with the cyclic collector off, then name the types of
    the objects that still hold a copy of ``payload`` (not ``payload`` itself: the
    caller's), once none is left or ``SETTLE_S`` has passed. Empty when reference
    counting alone freed every copy the server made."""

    def holders() -> list[str]:
        return [
            type(holder).__qualname__
            for holder in gc.get_objects()
            for held in gc.get_referents(holder)
            if type(held) in (bytes, bytearray) and held is not payload and held == payload
        ]

    return _left_after(send, calls, lambda: holders)


def buffers_after(size: int, send: Callable[[], object], calls: int = 3) -> list[str]:
    """``holders_after`` for requests the server never read whole (refused over the size
    limit, or left mid-body): the types of the objects holding a ``bytes`` or
    ``bytearray`` of at least ``size`` bytes that did not exist before ``send`` ran."""

    def new_buffers_since_now() -> Callable[[], list[str]]:
        before = {id(held) for _, held in _big_buffers(size)}
        return lambda: [
            type(holder).__qualname__
            for holder, held in _big_buffers(size)
            if id(held) not in before
        ]

    return _left_after(send, calls, new_buffers_since_now)


def _left_after(
    send: Callable[[], object], calls: int, finder: Callable[[], Callable[[], list[str]]]
) -> list[str]:
    """What ``finder()``'s finder names after ``send`` ran ``calls`` times with the cyclic
    collector off, once it names nothing or ``SETTLE_S`` has passed. ``finder`` runs
    with the collector off, before the first send (to note what exists already)."""
    gc.collect()
    gc.disable()
    try:
        find = finder()
        for _ in range(calls):
            send()
        deadline = time.monotonic() + SETTLE_S
        while (found := find()) and time.monotonic() < deadline:
            time.sleep(0.02)
        return found
    finally:
        gc.enable()


def _big_buffers(size: int) -> list[tuple[object, bytes | bytearray]]:
    return [
        (holder, held)
        for holder in gc.get_objects()
        for held in gc.get_referents(holder)
        if type(held) in (bytes, bytearray) and len(held) >= size
    ]
