"""Builds the one compiled module, ``collector.decode._wire``; everything else is in pyproject.toml.

The extension is ``optional``: without a C compiler the install still succeeds and
evald decodes through upb alone (correct, slower; logged at start and reported by
``evald_build_info{decoder="upb"}``). ``make test`` requires the compiled module
(tests/test_decode_native.py), so CI always tests what the image ships.
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("collector.decode._wire", ["collector/decode/_wire.pyx"], optional=True)],
        language_level=3,
    )
)
