"""``LazyValue``: a JSON value read from its recorded text only when someone reads it.

Tool arguments and results are most of what a trace carries, and most evaluators
never look at them (latency, failure, tool names and order, error rates). The
normalizer therefore stores them in ``Step.args`` / ``Step.result`` as a
``LazyValue`` holding the recorded text and how to read it; the first read parses
it and keeps the value (docs/adr/0019-lazy-values-and-normalization-depth.md).

Reading through ``Step.args`` / ``Step.result`` always gives the plain value (the
properties materialise it), so ``isinstance(step.args, dict)`` keeps working. A
``LazyValue`` itself is only met where a ``Step`` is taken apart as a tuple
(unpacking, ``step[6]``, ``_asdict()`` of the base record): there it behaves as the
value for every read — item access, iteration, ``len``, ``in``, truth, equality
and ordering, ``hash``, ``repr``/``str``/``format``, the value's own methods
(``get``, ``items``, ``startswith`` …), ``copy``/``deepcopy``/``pickle`` (which
give the plain value) and ``plain``. What it cannot do is pass ``isinstance``
checks for ``dict``/``list``/``str``: call ``plain(value)`` first.

Materialising is idempotent and needs no lock: two threads reading at once may both
parse, and both get equal values.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any, Final

UNREAD: Final = object()
"""``LazyValue._value`` before the first read. Public for code that builds
``LazyValue``s without calling the class (the compiled normalizer,
``collector.normalize.step_records.new_lazy``): it must start them at this."""


class LazyValue:
    """A value computed by ``load(source)`` on first read, then kept.

    ``maybe_none`` is False when it is known without parsing that the value is not
    None (the normalizer's gap detection asks, so that it need not parse). It may be
    given as a check of the source (``Callable[[source], bool]``), run when
    ``maybe_none`` is first read: most values are never asked.
    """

    __slots__ = ("_load", "_maybe_none", "_source", "_value")

    def __init__(
        self,
        load: Callable[[Any], Any],
        source: Any,
        maybe_none: bool | Callable[[Any], bool] = True,
    ) -> None:
        self._load = load
        self._source = source
        self._value: Any = UNREAD
        self._maybe_none = maybe_none

    @property
    def maybe_none(self) -> bool:
        """Whether the value may be None (the check, if one was given, runs once)."""
        found = self._maybe_none
        if type(found) is bool:
            return found
        if not callable(found):
            return bool(found)
        known = self._maybe_none = bool(found(self._source))
        return known

    @maybe_none.setter
    def maybe_none(self, maybe_none: bool | Callable[[Any], bool]) -> None:
        self._maybe_none = maybe_none

    @classmethod
    def of_json(cls, text: str) -> LazyValue:
        """A lazily parsed JSON document (``json.loads``); for tests and plug-ins."""
        import json  # noqa: PLC0415 - only this constructor needs it

        return cls(json.loads, text, maybe_none=text.strip() == "null")

    @property
    def value(self) -> Any:
        """The plain value (parsed on the first read)."""
        found = self._value
        if found is UNREAD:
            found = self._value = self._load(self._source)
        return found

    @property
    def loaded(self) -> bool:
        """Whether the value has been read already (for tests and benchmarks)."""
        return self._value is not UNREAD

    # Reads, delegated to the value.
    def __getitem__(self, key: Any) -> Any:
        return self.value[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.value)

    def __reversed__(self) -> Iterator[Any]:
        found: Iterator[Any] = reversed(self.value)
        return found

    def __len__(self) -> int:
        return len(self.value)

    def __contains__(self, item: object) -> bool:
        return item in self.value

    def __bool__(self) -> bool:
        return bool(self.value)

    def __eq__(self, other: object) -> bool:
        return bool(self.value == plain(other))

    def __ne__(self, other: object) -> bool:
        return bool(self.value != plain(other))

    def __lt__(self, other: object) -> bool:
        return bool(self.value < plain(other))

    def __le__(self, other: object) -> bool:
        return bool(self.value <= plain(other))

    def __gt__(self, other: object) -> bool:
        return bool(self.value > plain(other))

    def __ge__(self, other: object) -> bool:
        return bool(self.value >= plain(other))

    def __hash__(self) -> int:
        return hash(self.value)  # a dict or list value raises, as the value itself would

    def __repr__(self) -> str:
        return repr(self.value)

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __add__(self, other: Any) -> Any:
        return self.value + plain(other)

    def __radd__(self, other: Any) -> Any:
        return plain(other) + self.value

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the class lacks: the value's own methods (``get``,
        # ``items``, ``startswith`` …). Protocol names are not delegated.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.value, name)

    # Copies and pickles are of the plain value: nothing lazy crosses a process.
    def __reduce__(self) -> tuple[Callable[[Any], Any], tuple[Any]]:
        return _identity, (self.value,)

    def __copy__(self) -> Any:
        return self.value

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return copy.deepcopy(self.value, memo)


def plain(value: Any) -> Any:
    """``value`` itself, or the plain value of a ``LazyValue`` (parsing it if needed)."""
    return value.value if type(value) is LazyValue else value


def _identity(value: Any) -> Any:
    return value
