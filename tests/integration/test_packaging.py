"""`make dist` builds an sdist and a wheel that install into a fresh venv and run.

The build is pure (``EVALD_PURE_PYTHON=1``) to keep the test fast: compiling takes
minutes, and the compiled build is what the rest of the suite runs. It goes through
the in-tree build backend twice (sdist, then the wheel from the sdist), so a file the
sdist misses fails here.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import venv
from importlib import metadata
from pathlib import Path

import pytest
from support.fresh_tree import clean_environment, copy_working_tree
from support.paths import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

COMPILERS_REQUIREMENTS = ("cython", "mypy")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``make dist`` on a copy of this tree: the output directory and the build's log."""
    tree = copy_working_tree(tmp_path_factory.mktemp("tree"))
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        ["make", "dist", f"DIST={out}", f"VENV={sys.prefix}"],
        cwd=tree, env=clean_environment(EVALD_PURE_PYTHON="1"),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc.stdout + proc.stderr


def test_dist_holds_one_sdist_and_one_pure_wheel(dist: tuple[Path, str]) -> None:
    out, log = dist
    version = metadata.version("evald")
    assert sorted(p.name for p in out.iterdir()) == [
        f"evald-{version}-py3-none-any.whl",
        f"evald-{version}.tar.gz",
    ]
    # A pure build installs setuptools alone: neither Cython nor mypy.
    installed = [line for line in log.splitlines() if line.strip().startswith("- ")]
    assert installed, log
    assert not any(name in line.lower() for line in installed for name in COMPILERS_REQUIREMENTS)


def test_sdist_holds_what_a_compiled_wheel_build_needs(dist: tuple[Path, str]) -> None:
    out, _ = dist
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    included = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "collector/decode").glob("*.pxi"))
    assert len(included) >= 2  # _wire_json.pxi, _wire_split.pxi
    for needed in ("setup.py", "pyproject.toml", "MANIFEST.in", "build_backend/evald_build.py",
                   "collector/decode/_wire.pyx", *included, "collector/normalize/build.py",
                   "evaluators/matching.py", "evaluators/py.typed"):  # fmt: skip
        assert needed in names, f"the sdist lacks {needed}"
    assert not [name for name in names if name.endswith((".so", ".c"))]


def test_wheel_installs_into_a_fresh_venv_and_reports_its_version(
    dist: tuple[Path, str], tmp_path: Path
) -> None:
    out, _ = dist
    (wheel,) = out.glob("*.whl")
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        env=clean_environment(), check=True, capture_output=True,
    )  # fmt: skip
    proc = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "evald"), "--version"],
        cwd=tmp_path, env=clean_environment(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    version = metadata.version("evald")
    build = "decoder upb, normalizer interpreted, evaluators interpreted"
    assert proc.stdout == f"evald {version} ({build})\n"
