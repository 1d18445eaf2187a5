"""What still holds a request's bytes after the request was answered.

Reference cycles keep objects alive until the cyclic collector runs, which evald's
processes space out (``collector.core.gc_settings``). A receiver that leaves a request's
bytes in a cycle grows by a request per call between collections (ADR 0027).
"""

from __future__ import annotations

import gc
from collections.abc import Callable


def holders_after(payload: bytes, send: Callable[[], object], calls: int = 3) -> list[str]:
    """Run ``send`` ``calls`` times with the cyclic collector off, then name the types of
    the objects that still hold a copy of ``payload`` (not ``payload`` itself: the
    caller's). Empty when reference counting alone freed every copy the server made."""
    gc.collect()
    gc.disable()
    try:
        for _ in range(calls):
            send()
        return [
            type(holder).__qualname__
            for holder in gc.get_objects()
            for held in gc.get_referents(holder)
            if type(held) is bytes and held is not payload and held == payload
        ]
    finally:
        gc.enable()
