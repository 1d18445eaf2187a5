"""Builds evald's compiled modules; everything else is in pyproject.toml.

* ``collector.decode._wire`` (Cython, ``_wire.pyx`` and the ``_wire_json.pxi`` it
  includes): the binary and OTLP/JSON walkers;
* ``collector.normalize`` (mypyc, the same ``.py`` files mypy --strict checks): the
  normalizer, every module but ``mappings`` (pydantic), compiled as one library
  (``evald_normalizer__mypyc``, top level beside the packages: where mypyc's runtime
  expects a library that holds several modules) with a small importable module for
  each source;
* ``evaluators.matching``, ``evaluators.match_details`` and
  ``evaluators.call_identity`` (mypyc, likewise, as ``evald_evaluators__mypyc``):
  the algorithms the built-in reference and budget evaluators run on every trace of
  their specs. Pure functions over steps; the evaluator classes, their pydantic
  models and the plug-in API stay interpreted.

Both are optional extensions: without a C compiler the install still succeeds and
evald runs the same code interpreted (slower; logged at start, and reported by
``evald_build_info``). ``EVALD_PURE_PYTHON=1`` skips compiling altogether, and the
build backend (``build_backend/evald_build.py``) then installs neither Cython nor
mypy. ``make test`` requires the compiled modules (tests/unit/core/test_native.py), so
CI tests what the image ships, and also tests a pure install
(tests/integration/test_packaging.py, ``.venv-pure``). Why and what was measured:
docs/adr/0011-compiled-hot-path.md, docs/adr/0015-first-hour.md.
"""

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NORMALIZER = "collector.normalize"  # its modules
# The one library mypyc compiles them into. One library, not one per module: calls
# between the normalizer's modules are then plain C calls that the compiler can
# inline, ~8-10 % of normalize time (docs/adr/0011-compiled-hot-path.md).
NORMALIZER_LIBRARY = "evald_normalizer"
# The evaluators' algorithms, and their library (same reasons).
EVALUATOR_MODULES = ("evaluators.matching", "evaluators.match_details", "evaluators.call_identity")
EVALUATOR_LIBRARY = "evald_evaluators"
# Each mypyc group: (its library, the names of its modules or their package).
GROUPS = {
    "the normalizer": (NORMALIZER_LIBRARY, (NORMALIZER,)),
    "the evaluators' algorithms": (EVALUATOR_LIBRARY, EVALUATOR_MODULES),
}


class BuildExt(build_ext):
    """The optional extensions, with each mypyc group all or nothing.

    mypyc makes a small module for each source and one library; if the library (or a
    module) fails to build (a compiler killed for memory on a small builder), the
    modules would be installed without it and importing them would fail. So one
    failure drops every extension of its group, including stale ones from an earlier
    build at the same place: that group then runs interpreted, as without a compiler.
    """

    def build_extension(self, ext: Any) -> None:
        try:
            super().build_extension(ext)
        except Exception:
            group = _group_of(ext.name)
            if group is not None:
                self.failed_groups.add(group)
            raise

    def build_extensions(self) -> None:
        self.failed_groups: set[str] = set()
        super().build_extensions()
        for group in sorted(self.failed_groups):
            dropped = [ext for ext in self.extensions if _group_of(ext.name) == group]
            # Where this build puts them: the source tree (editable) or the build
            # directory (a wheel). Never the other one: a wheel built without a compiler
            # must not delete the modules of an editable install in the same tree.
            for ext in dropped:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            self.extensions = [ext for ext in self.extensions if ext not in dropped]
            self.warn(f"a module of {group} failed to compile: {group} runs interpreted")


def _group_of(extension: str) -> str | None:
    """The mypyc group ``extension`` (a module or a library) belongs to, if any."""
    for group, (library, modules) in GROUPS.items():
        if extension.startswith(library) or any(
            extension == module or extension.startswith(module + ".") for module in modules
        ):
            return group
    return None


def _available(module: str, compiles: str) -> bool:
    """Whether ``module`` is importable; if not, say that ``compiles`` stays interpreted.

    The build backend installs Cython and mypy for every build that is not pure; they
    are missing only in a build without isolation (``--no-build-isolation``).
    """
    if importlib.util.find_spec(module) is not None:
        return True
    print(f"evald: {module} is not installed: {compiles} runs interpreted", file=sys.stderr)
    return False


def _decoder() -> list[Extension]:
    if not _available("Cython", "the OTLP walker"):
        return []
    from Cython.Build import cythonize  # noqa: PLC0415 - a build requirement unless pure

    walker = Extension("collector.decode._wire", ["collector/decode/_wire.pyx"])
    extensions = cythonize([walker], language_level=3)
    # cythonize() returns new Extension objects: `optional` must be set on those, or
    # a missing compiler fails the whole install instead of leaving the walker out.
    for extension in extensions:
        extension.optional = True
    return extensions


def _normalizer() -> list[Extension]:
    if not _available("mypyc", "the normalizer"):
        return []
    sources = sorted(
        str(path)
        for path in Path("collector/normalize").rglob("*.py")
        if path.name != "mappings.py"  # pydantic models: interpreted
    )
    return _mypycify(sources, NORMALIZER_LIBRARY)


def _evaluators() -> list[Extension]:
    if not _available("mypyc", "the evaluators' algorithms"):
        return []
    sources = [module.replace(".", "/") + ".py" for module in EVALUATOR_MODULES]
    return _mypycify(sources, EVALUATOR_LIBRARY)


def _mypycify(sources: list[str], library: str) -> list[Extension]:
    from mypyc.build import mypycify  # noqa: PLC0415 - a build requirement unless pure

    extensions = mypycify(sources, opt_level="3", separate=[(sources, library)])
    for extension in extensions:
        extension.optional = True
    return extensions


pure = os.environ.get("EVALD_PURE_PYTHON", "") not in ("", "0")
setup(
    ext_modules=[] if pure else [*_decoder(), *_normalizer(), *_evaluators()],
    cmdclass={"build_ext": BuildExt},
    options={"build_ext": {"parallel": os.cpu_count() or 1}},  # ~25 C files
)
