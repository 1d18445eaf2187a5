"""Which build of evald runs: its version and which compiled modules are in use (setup.py,
docs/adr/0011-compiled-hot-path.md).

Three parts of the per-trace hot path are compiled at install: the binary OTLP walker
(``collector.decode._wire``, Cython), the normalizer (``collector.normalize``,
mypyc) and the algorithms of the built-in evaluators (``evaluators.matching``,
``match_details``, ``call_identity``: mypyc). Each is optional: without a C compiler
the same results come from the interpreted code, slower. This module says which is
which, for the startup warning, ``evald_build_info`` and the test that CI runs on what
it ships.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Mapping
from importlib import metadata
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType

from collector.core import interpreted
from collector.decode.protobuf import NATIVE_DECODER

log = logging.getLogger(__name__)

EVALUATOR_MODULES = interpreted.EVALUATOR_MODULES


def installed_version() -> str:
    """evald's version as installed (``0+unknown`` from a source tree never installed)."""
    try:
        return metadata.version("evald")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _is_extension(module_name: str) -> bool:
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None) or ""
    return path.endswith(tuple(EXTENSION_SUFFIXES))


def compiled_normalizer() -> bool:
    """True when the normalizer's modules are the mypyc-compiled ones."""
    import collector.normalize.build  # noqa: F401, PLC0415  (imports the whole package)

    return _is_extension("collector.normalize.build")


def compiled_evaluators() -> bool:
    """True when the evaluators' algorithms are the mypyc-compiled modules."""
    for name in EVALUATOR_MODULES:
        importlib.import_module(name)
    return all(_is_extension(name) for name in EVALUATOR_MODULES)


def build_labels() -> dict[str, str]:
    """``decoder`` (native | upb), ``normalizer`` and ``evaluators`` (compiled |
    interpreted)."""
    return {
        "decoder": "native" if NATIVE_DECODER else "upb",
        "normalizer": "compiled" if compiled_normalizer() else "interpreted",
        "evaluators": "compiled" if compiled_evaluators() else "interpreted",
    }


def stale_extensions(modules: Mapping[str, ModuleType] | None = None) -> list[str]:
    """Sources of loaded compiled modules (of ``sys.modules`` by default) that are newer
    than the compiled module: an edit not rebuilt yet.

    With an editable install (``make``), a compiled module shadows its ``.py``: an
    edited source runs only after ``pip install -e .`` rebuilds it.
    """
    stale: list[str] = []
    for name, module in sorted((sys.modules if modules is None else modules).items()):
        path = Path(getattr(module, "__file__", None) or "")
        if interpreted.is_compiled_module(name) and path.name.endswith(tuple(EXTENSION_SUFFIXES)):
            stale.extend(str(source) for source in interpreted.newer_sources(path))
    return stale


def warn_if_interpreted() -> None:
    """Logs what is not compiled, or compiled from an older source (serve, replay)."""
    labels = build_labels()
    if labels["decoder"] != "native" or "interpreted" in labels.values():
        log.warning(
            "evald runs partly interpreted (%s): same results, slower. It was installed "
            "without a C compiler or with EVALD_PURE_PYTHON=1; reinstall with gcc and the "
            "Python headers",
            ", ".join(f"{key}={value}" for key, value in labels.items()),
        )
    for source in stale_extensions():
        log.warning("%s changed after it was compiled: reinstall (pip install -e .)", source)
