"""When two tool calls are the same call: same tool, same arguments as canonical JSON.

``repeated_calls`` and ``tool_loops`` (``evaluators.builtin.limits``) count calls by
these identities on every trace of their specs. Compiled with mypyc when evald is
installed with a C compiler, like ``matching`` (setup.py,
docs/adr/0011-compiled-hot-path.md).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any, Final

from evaluators.trajectory import Step


def call_key(step: Step) -> str:
    """A step's identity as a call: its name and canonical JSON arguments."""
    return f"{step.name}({json.dumps(step.args, sort_keys=True, default=str)})"


def call_identities(steps: Sequence[Step]) -> Sequence[Hashable]:
    """One key per step, equal exactly when ``call_key`` is: the same call.

    ``call_key`` costs a ``json.dumps`` per call (~10 µs for a few hundred bytes of
    arguments), so it is computed only where two steps could be the same call: for a
    tool called more than once, and then only for the calls whose arguments are not
    provably different from those of every other call of that tool
    (``surely_different``, which usually decides at the first differing value). The
    other steps get ``(name, position)``: unique, and never equal to a string. A tool
    called more than ``PAIRWISE_LIMIT`` times gets ``call_key`` for every call: the
    pairwise comparison grows with the square of the calls, ``call_key`` linearly.
    """
    counts = Counter(step.name for step in steps)
    keys: list[Hashable] = [(step.name, at) for at, step in enumerate(steps)]
    groups: dict[str, list[int]] = {}
    for at, step in enumerate(steps):
        if counts[step.name] > PAIRWISE_LIMIT:
            keys[at] = call_key(step)
        elif counts[step.name] > 1:
            groups.setdefault(step.name, []).append(at)
    for positions in groups.values():
        values = [steps[at].args for at in positions]
        for k, at in enumerate(positions):
            mine = values[k]
            if not all(_apart(mine, values[o]) for o in range(len(values)) if o != k):
                keys[at] = call_key(steps[at])
    return keys


def _apart(a: Any, b: Any) -> bool:
    """``surely_different``, False where it cannot recurse (called deep in a stack
    already: ``json.dumps``, in C, nests deeper)."""
    try:
        return surely_different(a, b)
    except RecursionError:
        return False


PAIRWISE_LIMIT: Final = 8
"""The most calls of one tool whose arguments ``call_identities`` compares pairwise."""

_SCALARS: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None)})
_ARRAYS: Final[frozenset[type]] = frozenset({list, tuple})  # json.dumps writes both as arrays
_JSON_TYPES: Final = _SCALARS | _ARRAYS | {dict}


MAX_DEPTH: Final = 200
"""How deep ``surely_different`` looks into nested values before it answers False (may
be the same: ``call_key`` then decides). Real arguments are a few levels deep; the
bound keeps the recursion far from the interpreter's limit, and from the C stack's in
the compiled build, which recurses in C and does not raise ``RecursionError``."""


def surely_different(a: Any, b: Any, depth: int = 0) -> bool:
    """True only if ``a`` and ``b`` certainly have different canonical JSON (the
    ``json.dumps(..., sort_keys=True, default=str)`` of ``call_key``); False when they
    may have the same (equal values, ``-0.0`` and ``0.0``, two NaNs, or anything
    outside JSON's types, which ``default=str`` writes as text; a string outside ASCII
    is compared as written, since ``json.dumps`` writes a character beyond U+FFFF and
    its two surrogates alike, or values nested deeper than ``MAX_DEPTH``)."""
    if depth > MAX_DEPTH:
        return False
    ta, tb = type(a), type(b)
    if ta is not tb:
        if ta in _ARRAYS and tb in _ARRAYS:
            return _arrays_differ(a, b, depth)
        # Two different JSON types never write alike (true / 1 / 1.0 / "1" / null).
        return ta in _JSON_TYPES and tb in _JSON_TYPES
    if ta is str:
        if a.isascii() and b.isascii():
            return bool(a != b)
        return bool(encode_basestring_ascii(a) != encode_basestring_ascii(b))
    if ta is int or ta is bool:
        return bool(a != b)
    if ta is float:
        nan_a, nan_b = math.isnan(a), math.isnan(b)
        if nan_a or nan_b:  # NaN writes "NaN" whichever NaN it is
            return nan_a is not nan_b
        return bool(a != b)  # repr round-trips: unequal floats write apart
    if ta in _ARRAYS:
        return _arrays_differ(a, b, depth)
    if ta is dict:
        if not _plain_keys(a) or not _plain_keys(b):
            return False  # json.dumps writes 1 and "1" (or a character and its surrogates) alike
        if a.keys() != b.keys():
            return True
        return any(surely_different(value, b[key], depth + 1) for key, value in a.items())
    return False


def _plain_keys(mapping: dict[Any, Any]) -> bool:
    """Whether every key is an ASCII ``str``: written as itself, so distinct keys write apart."""
    return all(type(key) is str and key.isascii() for key in mapping)


def _arrays_differ(a: Sequence[Any], b: Sequence[Any], depth: int) -> bool:
    if len(a) != len(b):
        return True
    return any(surely_different(x, y, depth + 1) for x, y in zip(a, b, strict=True))
