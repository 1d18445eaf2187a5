"""An append-only file that rotates by size, for the live result files.

``FILE`` is renamed ``FILE.1`` (``FILE.1`` → ``FILE.2`` …, the oldest beyond
``max_backups`` deleted) before a write that would take it past ``max_size``.
Rotation happens between writes, never inside one: the lines of one trace stay in
one file, so a reader of any file sees whole records.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import BinaryIO


class RotatingFile:
    """Appends UTF-8 text to ``path``; ``max_size`` None never rotates.

    Thread-safe. A single write larger than ``max_size`` goes alone into a fresh
    file (records are never cut). ``close`` is safe to call twice; ``write`` after
    it raises ``ValueError``.
    """

    def __init__(self, path: Path, max_size: int | None = None, max_backups: int = 0) -> None:
        self.path = path
        self._max_size = max_size
        self._max_backups = max_backups
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO | None = path.open("ab")
        self._size = self._file.tell()

    def write(self, text: str) -> None:
        """Append ``text`` and flush it, rotating first if it would not fit."""
        # Lone surrogates (legal in OTLP/JSON escapes) cannot be UTF-8 encoded; written
        # as \uXXXX they stay valid JSON that reads back to the same string.
        data = text.encode("utf-8", "backslashreplace")
        with self._lock:
            if self._file is None:
                raise ValueError(f"{self.path} is closed")
            if self._would_overflow(len(data)):
                self._rotate()
            self._file.write(data)
            self._file.flush()  # a reader tailing the file sees the trace's lines now
            self._size += len(data)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _would_overflow(self, incoming: int) -> bool:
        limit = self._max_size
        return limit is not None and self._size > 0 and self._size + incoming > limit

    def _rotate(self) -> None:
        assert self._file is not None
        self._file.close()
        for index in range(self._max_backups - 1, 0, -1):
            older = self._backup(index)
            if older.exists():
                older.replace(self._backup(index + 1))
        if self._max_backups:
            self.path.replace(self._backup(1))
        else:
            self.path.unlink(missing_ok=True)
        self._file = self.path.open("ab")
        self._size = 0

    def _backup(self, index: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{index}")
