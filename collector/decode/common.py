"""Shared pieces of the two decoders: the attribute selector, the batch, the error."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from collector.core.records import Span

TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8


_ZERO_TRACE_ID = bytes(TRACE_ID_BYTES)
_ZERO_SPAN_ID = bytes(SPAN_ID_BYTES)


def invalid_ids(trace_id: bytes, span_id: bytes, parent_id: bytes) -> str | None:
    """Why a span's ids make it invalid (it is rejected alone), or None."""
    if len(trace_id) != TRACE_ID_BYTES or trace_id == _ZERO_TRACE_ID:
        return "span with an empty or invalid trace_id"
    if len(span_id) != SPAN_ID_BYTES or span_id == _ZERO_SPAN_ID:
        return "span with an empty or invalid span_id"
    if parent_id and len(parent_id) != SPAN_ID_BYTES:
        return "span with an invalid parent_span_id"
    return None


class DecodeError(ValueError):
    """The payload is not a decodable OTLP request; the message says why."""


class DecodedBatch(NamedTuple):
    """The spans of one request, plus what was refused and why."""

    spans: list[Span]
    rejected: int = 0
    message: str = ""  # why spans were rejected (first reason), for partial success
    truncated_values: int = 0  # attribute values cut to the size limit


class AttributeSelector:
    """Which span/event attributes the decoder converts into Python values.

    Converting an attribute costs about 1 µs; most attributes (logfire schemas,
    tool definitions …) are never read. Keys equal to one of ``keys``, starting
    with one of ``prefixes`` or ending with one of ``suffixes`` (keys a rule looks up
    in a namespace it does not name: ``normalize.evidence``) are kept; ``None`` for
    both keys and prefixes keeps everything.
    String values longer than ``max_value_size`` characters are truncated.
    Resource attributes and the attributes of root spans are always kept whole (one
    set per batch or per trace, not per span): spec matching may read any of them.
    """

    __slots__ = ("keep_all", "keys", "max_value_size", "prefixes", "suffixes")

    def __init__(
        self,
        keys: Iterable[str] | None = None,
        prefixes: Iterable[str] | None = None,
        max_value_size: int = 256 * 1024,
        suffixes: Iterable[str] = (),
    ) -> None:
        self.keep_all = keys is None and prefixes is None
        self.keys = frozenset(keys or ())
        self.prefixes = tuple(prefixes or ())
        self.max_value_size = max_value_size
        self.suffixes = tuple(suffixes)

    def wants(self, key: str) -> bool:
        """True if the attribute ``key`` should be decoded."""
        return (
            self.keep_all
            or key in self.keys
            or key.startswith(self.prefixes)
            or key.endswith(self.suffixes)
        )

    def extended(self, keys: Iterable[str] = (), prefixes: Iterable[str] = ()) -> AttributeSelector:
        """A selector that also keeps ``keys`` and ``prefixes`` (config mappings, spec matches)."""
        if self.keep_all:
            return self
        return AttributeSelector(
            self.keys | frozenset(keys),
            self.prefixes + tuple(prefixes),
            self.max_value_size,
            self.suffixes,
        )


KEEP_ALL = AttributeSelector()
