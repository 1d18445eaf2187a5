"""Config value types: durations, sizes, and the strict base of every section.

Durations accept ``500ms``, ``5s``, ``2m``, ``1h`` or a number of seconds; sizes
accept ``64MiB``, ``512KiB``, ``1GB`` or a number of bytes.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_SIZE = re.compile(r"^\s*(\d+)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$")
_SIZE_UNITS = {
    None: 1, "B": 1, "KB": 1000, "KiB": 1024, "MB": 1000**2,
    "MiB": 1024**2, "GB": 1000**3, "GiB": 1024**3,
}  # fmt: skip


def parse_duration(value: object) -> float:
    """Seconds from ``500ms`` / ``5s`` / ``2m`` / ``1h`` / a number."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 500ms, 5s or 2m")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ValueError(f"invalid duration {value!r}: use e.g. 500ms, 5s, 2m")
        seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    return seconds


def parse_size(value: object) -> int:
    """Bytes from ``64MiB`` / ``512KiB`` / a number."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as 4MiB")
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(str(value))
        if not match:
            raise ValueError(f"invalid size {value!r}: use e.g. 512KiB, 64MiB")
        size = int(match.group(1)) * _SIZE_UNITS[match.group(2)]
    if size <= 0:
        raise ValueError("a size must be positive")
    return size


Duration = Annotated[float, BeforeValidator(parse_duration)]
Size = Annotated[int, BeforeValidator(parse_size)]


class Section(BaseModel):
    """A config section: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)
