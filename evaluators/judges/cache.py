"""Judge replies kept by (judge, prompt hash), so the same question is never paid twice.

The key hashes the judge's identity (name, model, temperature, …) and the exact
messages and schema; the value is the model's reply text, re-interpreted on every
hit, so a fix in a verdict parser needs no cache purge. With ``path`` set the
cache is a JSON-lines file loaded at start and appended to on every new entry:
a second replay, in another process, answers from it without a single call.

Memory is bounded (least recently used entries leave first); the file is not —
delete it to start afresh. Unreadable lines are skipped. Use from one thread.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from evaluators.judges.protocol import ChatReply, ChatRequest, canonical

log = logging.getLogger(__name__)

_FORMAT_VERSION = 1


def cache_key(identity: Mapping[str, Any], request: ChatRequest) -> str:
    """The hex SHA-256 of the judge identity and the request (messages + schema)."""
    extra = {**identity, "schema_name": request.schema_name, "schema": request.schema}
    return hashlib.sha256(canonical(request.messages, extra)).hexdigest()


class ResultCache:
    """An LRU map key → ``ChatReply``, optionally persisted to a JSON-lines file."""

    def __init__(self, max_entries: int = 100_000, path: Path | None = None) -> None:
        self._max = max_entries
        self._entries: OrderedDict[str, ChatReply] = OrderedDict()
        self._file: IO[str] | None = None
        if path is not None:
            self._load(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("a", encoding="utf-8")

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> ChatReply | None:
        reply = self._entries.get(key)
        if reply is not None:
            self._entries.move_to_end(key)
        return reply

    def put(self, key: str, reply: ChatReply) -> None:
        """Remember ``reply``; appended to the file (flushed) if it is new."""
        if key in self._entries:
            return
        self._remember(key, reply)
        if self._file is not None:
            record = {"v": _FORMAT_VERSION, "key": key, **reply._asdict()}
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._file.flush()

    def close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()

    def _remember(self, key: str, reply: ChatReply) -> None:
        self._entries[key] = reply
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def _load(self, path: Path) -> None:
        if not path.exists():
            return
        skipped = 0
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                entry = _parse_line(line)
                if entry is None:
                    skipped += 1
                else:
                    self._remember(*entry)
        if skipped:
            log.warning("judge cache %s: skipped %d unreadable line(s)", path, skipped)


def _parse_line(line: str) -> tuple[str, ChatReply] | None:
    try:
        record = json.loads(line)
        if record.get("v") != _FORMAT_VERSION:
            return None
        reply = ChatReply(
            str(record["content"]),
            int(record["prompt_tokens"]),
            int(record["completion_tokens"]),
            str(record["model"]),
        )
        return str(record["key"]), reply
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
