"""Builds evald's compiled modules; everything else is in pyproject.toml.

* ``collector.decode._wire`` (Cython, ``_wire.pyx``): the binary OTLP walker;
* ``collector.normalize`` (mypyc, the same ``.py`` files mypy --strict checks): the
  normalizer, every module but ``mappings`` (pydantic).

Both are optional extensions: without a C compiler the install still succeeds and
evald runs the same code interpreted (slower; logged at start, and reported by
``evald_build_info``). ``EVALD_PURE_PYTHON=1`` skips compiling altogether. ``make
test`` requires the compiled modules (tests/test_native.py), so CI tests what the
image ships. Why and what was measured: docs/adr/0011-compiled-hot-path.md.
"""

import os
from pathlib import Path

from setuptools import Extension, setup


def _decoder() -> list[Extension]:
    from Cython.Build import cythonize

    walker = Extension("collector.decode._wire", ["collector/decode/_wire.pyx"], optional=True)
    return cythonize([walker], language_level=3)


def _normalizer() -> list[Extension]:
    from mypyc.build import mypycify

    sources = sorted(
        str(path)
        for path in Path("collector/normalize").rglob("*.py")
        if path.name != "mappings.py"  # pydantic models: interpreted
    )
    extensions = mypycify(sources, opt_level="3", separate=True)
    for extension in extensions:
        extension.optional = True
    return extensions


pure = os.environ.get("EVALD_PURE_PYTHON", "") not in ("", "0")
setup(
    ext_modules=[] if pure else [*_decoder(), *_normalizer()],
    options={"build_ext": {"parallel": os.cpu_count() or 1}},  # ~25 C files
)
