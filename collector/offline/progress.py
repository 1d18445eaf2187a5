"""A one-line progress display for long replays: traces, traces/s, elapsed time.

Drawn on a terminal only (``stream.isatty()``), rewritten in place at most every
``interval`` seconds, and erased at the end; silent when stderr is a file or a
pipe (CI logs), where a carriage-return animation would be noise.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO


class ProgressLine:
    """Call ``update(traces)`` as often as you like; ``close()`` erases the line."""

    def __init__(
        self,
        stream: TextIO,
        *,
        interval: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        enabled: bool | None = None,
    ) -> None:
        self._stream = stream
        self._interval = interval
        self._clock = clock
        self.enabled = stream.isatty() if enabled is None else enabled
        self._started = clock()
        self._next_draw = self._started + interval
        self._width = 0

    def update(self, traces: int) -> None:
        """Redraw if ``interval`` has passed since the last drawing."""
        if not self.enabled:
            return
        now = self._clock()
        if now < self._next_draw:
            return
        self._next_draw = now + self._interval
        self._draw(self.text(traces, now - self._started))

    @staticmethod
    def text(traces: int, elapsed: float) -> str:
        rate = traces / elapsed if elapsed > 0 else 0.0
        minutes, seconds = divmod(int(elapsed), 60)
        return f"replay: {traces:,} traces  {rate:,.0f} traces/s  {minutes}:{seconds:02d}"

    def close(self) -> None:
        """Erase the line so the report starts on a clean one."""
        if self.enabled and self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
            self._width = 0

    def _draw(self, text: str) -> None:
        padding = " " * max(self._width - len(text), 0)
        self._stream.write("\r" + text + padding)
        self._stream.flush()
        self._width = len(text)
