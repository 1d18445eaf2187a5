"""A fresh copy of this working tree, and a PATH without a C compiler.

Tests that install evald (the README's quick start, ``make install-runtime``,
``make dist``) work on a copy: what a clone would hold (the files git tracks or
would track, so uncommitted edits are tested too), without this tree's venvs,
builds and compiled modules, and where a build cannot touch this tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT

# What a C build needs to find on PATH: compilers and their drivers.
COMPILER = re.compile(r"^(cc|c\+\+|c89|c99|cpp|gcc|g\+\+|clang|tcc)([-.\d].*)?$|-(gcc|g\+\+)")


def copy_working_tree(destination: Path) -> Path:
    """Copy the tracked and untracked-but-not-ignored files of the working tree."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted but not yet staged is listed too
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def base_python() -> Path:
    """The interpreter this test venv was made from (what ``python3`` is to a user)."""
    return Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))


def path_without_compiler(bin_dir: Path) -> str:
    """A PATH holding every program of the system's bin directories but C compilers,
    and ``python3`` (``base_python()``); a build finds no compiler at all."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for directory in ("/usr/local/bin", "/usr/bin", "/bin"):
        for program in sorted(Path(directory).glob("*")) if Path(directory).is_dir() else []:
            link = bin_dir / program.name
            if COMPILER.search(program.name) or link.exists() or link.is_symlink():
                continue
            link.symlink_to(program)
    for name in ("python3", "python"):
        (bin_dir / name).unlink(missing_ok=True)
        (bin_dir / name).symlink_to(base_python())
    return str(bin_dir)


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without the test venv and evald's own switches."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("EVALD_", "PYTEST_", "VIRTUAL_ENV")) and key not in ("CC", "CXX")
    }
    env.update(extra)
    return env
