"""Problems found in a spec, as (field path, message), and their readable forms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from pydantic import ValidationError

Loc = tuple[str | int, ...]


class Problem(NamedTuple):
    """What is wrong (``message``) and where (``loc``, a field path into the file)."""

    loc: Loc
    message: str


def format_loc(loc: Loc) -> str:
    """``("evaluators", 1, "criteria", "tool")`` → ``evaluators[1].criteria.tool``.

    Keys that contain dots (attribute names) are quoted: ``attributes["a.b"]``.
    """
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif "." in part or not part:
            text += f"[{part!r}]"
        else:
            text += f".{part}" if text else part
    return text


def from_validation_error(
    exc: ValidationError, place: Callable[[Loc], Loc] = lambda loc: loc
) -> list[Problem]:
    """One problem per pydantic error, its location passed through ``place``."""
    return [Problem(place(tuple(error["loc"])), _message(error)) for error in exc.errors()]


def _message(error: Any) -> str:
    """Pydantic's message, reworded where the default reads poorly in a config file."""
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key missing"
    message = str(error["msg"])
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
