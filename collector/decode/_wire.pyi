from collections.abc import Callable

from collector.core.records import Span

class Unusual(Exception): ...

def walk(
    data: bytes,
    keep_all: bool,
    keys: frozenset[str],
    prefixes: tuple[str, ...],
    max_value_size: int,
    keep: Callable[[bytes], bool] | None,
    suffixes: tuple[str, ...] = (),
) -> tuple[list[Span], int, str, int]: ...
def walk_json(
    data: bytes | bytearray | memoryview,
    keep_all: bool,
    keys: frozenset[str],
    prefixes: tuple[str, ...],
    max_value_size: int,
    keep: Callable[[bytes], bool] | None,
    suffixes: tuple[str, ...] = (),
) -> tuple[list[Span], int, str, int]: ...
def split_walk(
    data: bytes, count: int, trace_field: int
) -> tuple[list[bytes | None], list[int]]: ...
def crc32(data: bytes) -> int: ...

SPAN_FIELDS: tuple[str, ...]
EVENT_FIELDS: tuple[str, ...]
RESOURCE_FIELDS: tuple[str, ...]
