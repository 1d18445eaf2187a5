"""Running the interpreted code where compiled modules are installed.

``EVALD_INTERPRETED=1`` in the environment (read when ``collector`` is first imported)
makes this process and its children ignore the compiled modules (setup.py): the
normalizer and the evaluators' algorithms are imported from their ``.py`` sources and
the decoder falls back to upb.
Results are the same, only slower. Uses: comparing the two builds, and a local test
run on an edited normalizer before it is rebuilt (``tests/conftest.py`` sets it when a
compiled module is older than its source, rather than testing the old code).

This module imports nothing from ``collector``: it must run before the compiled
modules are first imported.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from pathlib import Path
from types import ModuleType

ENVIRONMENT_VARIABLE = "EVALD_INTERPRETED"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
NORMALIZER = "collector.normalize"
WALKER = "collector.decode._wire"
# Compiled with mypyc as one more library (setup.py: EVALUATOR_MODULES).
EVALUATOR_MODULES = frozenset(
    {"evaluators.matching", "evaluators.match_details", "evaluators.call_identity"}
)


def requested() -> bool:
    """True when the environment asks for the interpreted code."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "") not in ("", "0")


def is_compiled_module(name: str) -> bool:
    """Whether setup.py compiles the module ``name`` (when a C compiler is there)."""
    normalizer = name == NORMALIZER or name.startswith(NORMALIZER + ".")
    return normalizer or name == WALKER or name in EVALUATOR_MODULES


def newer_sources(compiled: Path) -> list[Path]:
    """The sources of the compiled module at ``compiled`` that were edited after it was
    built: its ``.py`` or ``.pyx``, and the ``<stem>_*.pxi`` files a ``.pyx`` includes
    (``_wire_json.pxi``, ``_wire_split.pxi``)."""
    stem = compiled.name.split(".", 1)[0]
    sources = [compiled.with_name(stem + ".py"), compiled.with_name(stem + ".pyx")]
    if sources[1].exists():
        sources.extend(sorted(compiled.parent.glob(stem + "_*.pxi")))
    built = compiled.stat().st_mtime
    return [source for source in sources if source.exists() and source.stat().st_mtime > built]


def stale_sources(
    roots: Sequence[Path] = (PACKAGE_ROOT, PACKAGE_ROOT.parent / "evaluators"),
) -> list[Path]:
    """Sources under ``roots`` (the ``collector`` and ``evaluators`` folders) that are
    newer than the compiled module built from them, found on disk without importing
    anything."""
    compiled = sorted(  # a set: ".so" is a suffix of the other suffixes
        {
            path
            for suffix in EXTENSION_SUFFIXES
            for root in roots
            for path in root.rglob(f"*{suffix}")
        }
    )
    return [source for path in compiled for source in newer_sources(path)]


class SourceFirstFinder(MetaPathFinder):
    """Finds the ``.py`` sources of the normalizer and of the evaluators' algorithms
    before their compiled modules, and refuses the compiled walker (the decoder then
    uses upb, as without a compiler)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname == WALKER:
            raise ModuleNotFoundError(f"{WALKER} disabled by {ENVIRONMENT_VARIABLE}", name=fullname)
        if not is_compiled_module(fullname):
            return None
        location = PACKAGE_ROOT.parent.joinpath(*fullname.split("."))
        if (location / "__init__.py").exists():
            return importlib.util.spec_from_file_location(
                fullname, location / "__init__.py", submodule_search_locations=[str(location)]
            )
        source = location.with_suffix(".py")
        return importlib.util.spec_from_file_location(fullname, source) if source.exists() else None


def install() -> None:
    """Puts ``SourceFirstFinder`` first in ``sys.meta_path`` (once)."""
    import sys  # noqa: PLC0415

    if not any(isinstance(finder, SourceFirstFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, SourceFirstFinder())
