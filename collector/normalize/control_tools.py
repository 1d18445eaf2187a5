"""Which tool names are framework-internal (``Mappings.internal_tools`` globs), fast.

(Not ``internal_tools.py``: mypyc's generated header for it would collide with the
one it writes for ``tools.py``.)

Asked for every tool step: exact names and ``prefix*`` globs are answered without
``fnmatch``; other globs fall back to it. One matcher per pattern tuple, cached.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Final

_GLOB_CHARS: Final = frozenset("*?[")


class InternalTools:
    """A matcher for a tuple of glob patterns."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.exact: frozenset[str] = frozenset(p for p in patterns if not _GLOB_CHARS & set(p))
        prefixes = [p[:-1] for p in patterns if p.endswith("*") and not _GLOB_CHARS & set(p[:-1])]
        self.prefixes: tuple[str, ...] = tuple(prefixes)
        self.others: tuple[str, ...] = tuple(
            p for p in patterns if p not in self.exact and p[:-1] not in prefixes
        )

    def matches(self, name: str) -> bool:
        if name in self.exact:
            return True
        if self.prefixes and name.startswith(self.prefixes):
            return True
        if not self.others:
            return False
        return any(fnmatchcase(name, pattern) for pattern in self.others)


_CACHE: Final[dict[tuple[str, ...], InternalTools]] = {}


def internal_tools(patterns: tuple[str, ...]) -> InternalTools:
    """The (cached) matcher of ``patterns``."""
    found = _CACHE.get(patterns)
    if found is None:
        if len(_CACHE) > 64:  # patterns come from configs: a handful; never grow unbounded
            _CACHE.clear()
        found = _CACHE[patterns] = InternalTools(patterns)
    return found
