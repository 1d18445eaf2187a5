"""Shared test helpers (moved from conftest.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
CALL_TIMEOUT_S = 10.0


class LoopThread:
    """An asyncio loop running in a daemon thread; ``run`` waits for a coroutine."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="test-loop")
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = CALL_TIMEOUT_S) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Tear down like ``asyncio.run``: cancel what is left, then close the loop."""
        self.run(_cancel_other_tasks())
        self.run(self.loop.shutdown_asyncgens())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(CALL_TIMEOUT_S)
        self.loop.run_until_complete(self.loop.shutdown_default_executor())
        self.loop.close()


async def _cancel_other_tasks() -> None:
    # E.g. a connection accepted while its server shut down: cancelling its task closes it.
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
