"""The build backend asks for Cython and mypy only for a build that compiles."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

import pytest
from support.paths import ROOT


def backend() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "evald_build", ROOT / "build_backend" / "evald_build.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("value", ["1", "yes"])
def test_a_pure_build_requires_no_compiler_package(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("EVALD_PURE_PYTHON", value)
    assert backend().compile_requires() == []


@pytest.mark.parametrize("value", [None, "", "0"])
def test_a_compiled_build_requires_cython_and_mypy(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("EVALD_PURE_PYTHON", raising=False)
    else:
        monkeypatch.setenv("EVALD_PURE_PYTHON", value)
    names = {re.split(r"[<>=]", requirement)[0] for requirement in backend().compile_requires()}
    assert {"Cython", "mypy"} <= names


def test_setup_runs_pure_while_listing_requirements(monkeypatch: pytest.MonkeyPatch) -> None:
    """setup.py runs to list requirements before Cython is installed: it must not try to
    prepare the extensions then, and the caller's setting comes back afterwards."""
    module = backend()
    monkeypatch.setenv("EVALD_PURE_PYTHON", "0")
    seen = []
    monkeypatch.setattr(
        module._setuptools, "get_requires_for_build_wheel",
        lambda settings: seen.append(module.pure()) or ["setuptools"],
    )  # fmt: skip
    assert module.get_requires_for_build_wheel() == ["setuptools", *module.COMPILE_REQUIRES]
    assert seen == [True]
    assert not module.pure()
