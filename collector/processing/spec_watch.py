"""Reload specs when their files change: a cheap stat poll, no inotify dependency.

Polling a handful of files every ``specs_watch_interval`` costs a few ``stat``
calls and works on every filesystem (network mounts and Kubernetes ConfigMap
symlink swaps included, where inotify is unreliable). A file is *changed* when
its (mtime, size, inode) differ, or it appeared or vanished; for a directory in
``specs`` its spec files count, so a new file is picked up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from evaluators.spec import SPEC_SUFFIXES

log = logging.getLogger(__name__)

FileState = tuple[int, int, int] | None  # (mtime_ns, size, inode); None: missing
Fingerprint = dict[Path, FileState]


def fingerprint(paths: Iterable[Path]) -> Fingerprint:
    """The state of every file in ``paths`` (directories: their spec files)."""
    states: Fingerprint = {}
    for path in paths:
        if path.is_dir():
            states.update(_directory_states(path))
        else:
            states[path] = _state(path)
    return states


def _directory_states(path: Path) -> Fingerprint:
    # Listing can fail after is_dir() said yes (directory removed or remounted
    # meanwhile, no permission): that is a change to report, not a reason for the
    # watch, which runs this every poll, to stop for good.
    try:
        children = sorted(path.iterdir())
    except OSError:
        return {path: None}
    return {child: _state(child) for child in children if child.suffix.lower() in SPEC_SUFFIXES}


def _state(path: Path) -> FileState:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


class SpecWatcher:
    """Calls ``reload_if_changed`` (in a worker thread) every ``interval`` seconds.

    ``start`` / ``shutdown`` follow the daemon's component lifecycle: shutdown is
    safe before start and twice. An interval of 0 disables the watch.
    """

    def __init__(self, reload_if_changed: Callable[[], bool | None], interval: float) -> None:
        self._reload_if_changed = reload_if_changed
        self._interval = interval
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._interval > 0 and self._task is None:
            self._task = asyncio.create_task(self._run(), name="evald-spec-watch")
            self._task.add_done_callback(_log_crash)

    async def shutdown(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)  # the poll period, not a synchronisation
            await asyncio.to_thread(self._reload_if_changed)


def _log_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("spec file watch stopped; SIGHUP still reloads", exc_info=task.exception())
