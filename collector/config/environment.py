"""``${env:VAR}`` references in the config file, as the OpenTelemetry Collector writes them.

Every string value of the parsed YAML may hold references:

* ``${env:NAME}``: the variable's value; a variable that is not set is an error
  naming the key (the Collector substitutes an empty string and logs; a daemon that
  starts with an empty endpoint or token is worse than one that does not start);
* ``${env:NAME:-default}``: the default when ``NAME`` is not set (a set but empty
  variable stays empty, as in the Collector);
* ``$$``: a literal ``$`` (so ``$${env:X}`` is the text ``${env:X}``).

A value that is one reference and nothing else takes the type its text has in YAML
(``${env:MAX_TRACES:-50000}`` is the number 50000, ``true`` a boolean), as in the
Collector; a reference inside a longer string is pasted as text. Keys are never
substituted. Any other ``${…}`` is an error: it is almost always a typo.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import yaml

_TOKEN = re.compile(r"\$\$|\$\{([^}]*)\}")
_REFERENCE = re.compile(r"^env:([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$", re.DOTALL)
_SCALARS = (str, int, float, bool, type(None))


class EnvironmentReferenceError(ValueError):
    """A reference that cannot be resolved; ``key`` is the dotted path of its value."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


def substitute(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """``value`` (parsed YAML) with every reference in its strings resolved.

    Raises ``EnvironmentReferenceError`` for an unset variable without default or a
    malformed reference.
    """
    return _walk(value, os.environ if environ is None else environ, ())


def _walk(value: Any, environ: Mapping[str, str], path: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {key: _walk(item, environ, (*path, str(key))) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, environ, (*path, str(index))) for index, item in enumerate(value)]
    if isinstance(value, str) and "$" in value:
        return _string(value, environ, ".".join(path) or "(top level)")
    return value


def _string(text: str, environ: Mapping[str, str], key: str) -> Any:
    whole = _TOKEN.fullmatch(text)
    if whole is not None and whole.group(0) != "$$":
        resolved = _resolve(whole.group(1), environ, key)
        typed = yaml.safe_load(resolved) if resolved.strip() else resolved
        return typed if isinstance(typed, _SCALARS) else resolved
    return _TOKEN.sub(
        lambda match: "$" if match.group(0) == "$$" else _resolve(match.group(1), environ, key),
        text,
    )


def _resolve(reference: str, environ: Mapping[str, str], key: str) -> str:
    match = _REFERENCE.match(reference)
    if match is None:
        raise EnvironmentReferenceError(
            key, f"unsupported reference ${{{reference}}}: use ${{env:NAME}} or "
            "${env:NAME:-default} (write $$ for a literal $)",
        )  # fmt: skip
    name, default = match.group(1), match.group(2)
    if name in environ:
        return environ[name]
    if default is not None:
        return default
    unset = f"environment variable {name} is not set (${{env:{name}}}, no default)"
    raise EnvironmentReferenceError(key, unset)
