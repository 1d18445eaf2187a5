"""evald's PEP 517 build backend: setuptools, with build requirements that follow the build.

setuptools' own backend takes the requirements of every build from
``[build-system] requires``, so a pure-Python build would still download Cython and
mypy. This wrapper adds them only when ``setup.py`` will compile:

* ``EVALD_PURE_PYTHON=1``: nothing beyond setuptools (no extension is built);
* otherwise Cython (``collector/decode/_wire.pyx``) and mypy with the packages
  mypyc needs to type-check ``collector/normalize`` as ``mypy --strict`` does.

Only the hooks that build a wheel compile. The others run ``setup.py`` as a pure
build: listing requirements (Cython is not installed yet), writing metadata (which
does not depend on the extensions) and the sdist (sources only; its wheel compiles,
or not, when it is built in turn). mypyc's translation then runs once per build.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import build_editable, build_wheel  # noqa: F401 - compile

PURE_ENVIRONMENT_VARIABLE = "EVALD_PURE_PYTHON"

COMPILE_REQUIRES = (
    "Cython>=3.1",
    "mypy>=2.4,<3",
    "pydantic>=2.6",
    "msgspec>=0.22",
    "types-protobuf",
)

ConfigSettings = dict[str, Any] | None


def pure() -> bool:
    """Whether this build compiles nothing (``EVALD_PURE_PYTHON`` set, not ``0``)."""
    return os.environ.get(PURE_ENVIRONMENT_VARIABLE, "") not in ("", "0")


def compile_requires() -> list[str]:
    """What compiling needs on top of setuptools: nothing for a pure build."""
    return [] if pure() else list(COMPILE_REQUIRES)


@contextlib.contextmanager
def _setup_prepares_no_extension() -> Iterator[None]:
    saved = os.environ.get(PURE_ENVIRONMENT_VARIABLE)
    os.environ[PURE_ENVIRONMENT_VARIABLE] = "1"
    try:
        yield
    finally:
        if saved is None:
            del os.environ[PURE_ENVIRONMENT_VARIABLE]
        else:
            os.environ[PURE_ENVIRONMENT_VARIABLE] = saved


def get_requires_for_build_wheel(config_settings: ConfigSettings = None) -> list[str]:
    """setuptools' requirements, plus the compilers' unless the build is pure."""
    extra = compile_requires()
    with _setup_prepares_no_extension():
        return [*_setuptools.get_requires_for_build_wheel(config_settings), *extra]


def get_requires_for_build_editable(config_settings: ConfigSettings = None) -> list[str]:
    """As for a wheel: an editable install compiles in place."""
    extra = compile_requires()
    with _setup_prepares_no_extension():
        return [*_setuptools.get_requires_for_build_editable(config_settings), *extra]


def get_requires_for_build_sdist(config_settings: ConfigSettings = None) -> list[str]:
    """setuptools only: an sdist compiles nothing."""
    with _setup_prepares_no_extension():
        return list(_setuptools.get_requires_for_build_sdist(config_settings))


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: ConfigSettings = None
) -> str:
    """setuptools' metadata, which the extensions do not change."""
    with _setup_prepares_no_extension():
        return str(
            _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)
        )


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: ConfigSettings = None
) -> str:
    """As for a wheel."""
    with _setup_prepares_no_extension():
        return str(
            _setuptools.prepare_metadata_for_build_editable(metadata_directory, config_settings)
        )


def build_sdist(sdist_directory: str, config_settings: ConfigSettings = None) -> str:
    """setuptools' sdist: sources only (``MANIFEST.in`` lists what the extensions need)."""
    with _setup_prepares_no_extension():
        return str(_setuptools.build_sdist(sdist_directory, config_settings))
