"""The compiled modules are built, reported, and a stale build is noticed."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType

import pytest
from support.paths import ROOT

import collector
from collector.core import build_info as native
from collector.core import interpreted
from collector.telemetry.registry import Telemetry

# `make pure` runs these tests on a pure-Python install (EVALD_PURE_PYTHON=1).
EXPECTED_BUILD = os.environ.get("EVALD_EXPECT_BUILD", "compiled")


@pytest.mark.skipif(
    interpreted.requested(), reason="EVALD_INTERPRETED: stale compiled modules, see the header"
)
@pytest.mark.skipif(EXPECTED_BUILD != "compiled", reason="testing the pure-Python install")
def test_the_hot_path_is_compiled() -> None:
    # `make test` installs with a C compiler: CI must test the modules users run.
    assert native.build_labels() == {
        "decoder": "native",
        "normalizer": "compiled",
        "evaluators": "compiled",
    }, (
        "the compiled modules were not built: reinstall with a C compiler "
        "(`make`, or `pip install -e .` with gcc and the Python headers)"
    )


@pytest.mark.skipif(EXPECTED_BUILD != "pure", reason="testing the compiled install")
def test_the_pure_install_is_interpreted_and_not_this_tree() -> None:
    # The pure run must test the installed package: the source tree holds the
    # compiled modules of the editable dev install.
    assert native.build_labels() == {
        "decoder": "upb",
        "normalizer": "interpreted",
        "evaluators": "interpreted",
    }
    assert not Path(collector.__file__).resolve().is_relative_to(ROOT / "collector")


def test_build_info_reports_the_build() -> None:
    value = Telemetry().registry.get_sample_value(
        "evald_build_info", {**native.build_labels(), "version": "0.1.0"}
    )
    assert value == 1.0


def _fake_module(directory: Path, stem: str, source_newer: bool) -> ModuleType:
    compiled = directory / f"{stem}{EXTENSION_SUFFIXES[0]}"
    source = directory / f"{stem}.py"
    compiled.write_bytes(b"")
    source.write_text("")
    older, newer = 1_000_000_000, 1_000_000_100
    os.utime(compiled, (older, newer if not source_newer else older))
    os.utime(source, (older, newer if source_newer else older))
    module = ModuleType(stem)
    module.__file__ = str(compiled)
    return module


def test_a_source_edited_after_compiling_is_reported(tmp_path: Path) -> None:
    modules = {
        "collector.normalize.edited": _fake_module(tmp_path, "edited", source_newer=True),
        "collector.normalize.fresh": _fake_module(tmp_path, "fresh", source_newer=False),
        "other.package.edited": _fake_module(tmp_path, "other", source_newer=True),
    }
    assert native.stale_extensions(modules) == [str(tmp_path / "edited.py")]
    assert native.stale_extensions() == []  # this checkout: built after its last edit


def test_interpreted_fallback_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(native, "NATIVE_DECODER", False)
    native.warn_if_interpreted()
    assert "decoder=upb" in caplog.text


def test_an_included_file_edited_after_compiling_makes_the_walker_stale(tmp_path: Path) -> None:
    # _wire.pyx includes _wire_json.pxi and _wire_split.pxi: editing one must count.
    compiled = tmp_path / f"_walker{EXTENSION_SUFFIXES[0]}"
    for name in ("_walker.pyx", "_walker_part.pxi", f"_walker{EXTENSION_SUFFIXES[0]}"):
        (tmp_path / name).write_text("")
    built = compiled.stat().st_mtime
    os.utime(tmp_path / "_walker.pyx", (built - 10, built - 10))
    os.utime(tmp_path / "_walker_part.pxi", (built - 10, built - 10))
    assert interpreted.stale_sources([tmp_path]) == []
    os.utime(tmp_path / "_walker_part.pxi", (built + 10, built + 10))
    assert interpreted.stale_sources([tmp_path]) == [tmp_path / "_walker_part.pxi"]


def test_interpreted_request_loads_every_compiled_module_from_its_source() -> None:
    # EVALD_INTERPRETED must cover each compiled group, the evaluators' algorithms too.
    code = (
        "import collector, sys\n"
        "from collector.core.build_info import build_labels\n"
        "labels = build_labels()\n"
        "import evaluators.matching, evaluators.match_details, evaluators.call_identity\n"
        "import collector.normalize.build\n"
        "names = ['evaluators.matching', 'evaluators.match_details',\n"
        "         'evaluators.call_identity', 'collector.normalize.build']\n"
        "sources = [sys.modules[n].__file__.endswith('.py') for n in names]\n"
        "print(*sorted(labels.items()), *sources)\n"
    )
    env = {**os.environ, interpreted.ENVIRONMENT_VARIABLE: "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [
        "('decoder',", "'upb')", "('evaluators',", "'interpreted')",
        "('normalizer',", "'interpreted')", "True", "True", "True", "True",
    ]  # fmt: skip


def test_the_compiled_evaluator_modules_are_named_alike_everywhere() -> None:
    # setup.py (what is compiled), interpreted.py (what EVALD_INTERPRETED and the stale
    # check cover) and the Makefile (what triggers a rebuild) each list them: a module
    # added to one list only would be compiled yet never rebuilt, or the reverse.
    tree = ast.parse((ROOT / "setup.py").read_text())
    (listed,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "EVALUATOR_MODULES" for t in node.targets)
    ]
    in_setup = set(ast.literal_eval(listed))
    makefile = (ROOT / "Makefile").read_text()
    compiled = makefile[makefile.index("COMPILED =") : makefile.index("BUILD    =")]
    in_makefile = {
        word.removesuffix(".py").replace("/", ".")
        for word in compiled.split()
        if word.startswith("evaluators/")
    }
    assert in_setup == set(interpreted.EVALUATOR_MODULES) == in_makefile
    assert all((ROOT / f"{name.replace('.', '/')}.py").exists() for name in in_setup)
