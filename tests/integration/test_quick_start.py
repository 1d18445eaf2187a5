"""The README's quick start, run as written from a fresh copy of the tree, on a machine
without a C compiler: it prints a verdict table with passing and failing specs, the
same one as the compiled build, and `make install-runtime` (`make run`'s install step)
installs no test or lint tool.

The commands are read from the README (the fenced block after the quick-start marker),
never copied here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support.fresh_tree import clean_environment, copy_working_tree, path_without_compiler
from support.paths import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

MARKER = "<!-- quick-start:"
DEV_TOOLS = ("pytest", "ruff", "mypy", "langchain_classic", "xmlschema")


def quick_start_block(readme: str) -> str:
    """The shell block that follows the quick-start marker."""
    _, found, after = readme.partition(MARKER)
    assert found, "README.md has no quick-start marker"
    block = re.match(r"[^\n]*\n```(?:sh|bash)\n(.*?)```", after, re.DOTALL)
    assert block, "the quick-start marker must be followed by a ```sh block"
    return block.group(1)


class QuickStart:
    def __init__(self, tree: Path, proc: subprocess.CompletedProcess[str], env: dict[str, str]):
        self.tree, self.proc, self.env = tree, proc, env

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.tree / ".venv" / "bin" / "python"), "-c", code],
            cwd=self.tree, env=self.env, capture_output=True, text=True, check=False,
        )  # fmt: skip


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory: pytest.TempPathFactory) -> QuickStart:
    block = quick_start_block((ROOT / "README.md").read_text())
    tree = copy_working_tree(tmp_path_factory.mktemp("clone"))
    env = clean_environment(PATH=path_without_compiler(tmp_path_factory.mktemp("bin")))
    proc = subprocess.run(
        ["bash", "-c", block], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    return QuickStart(tree, proc, env)


def report_of(stdout: str) -> str:
    """The replay's report: stdout from the table's header on (make's lines come first)."""
    start = re.search(r"^spec +evaluator ", stdout, re.MULTILINE)
    assert start, stdout
    return stdout[start.start() :]


def test_the_quick_start_prints_passing_and_failing_verdicts(quick_start: QuickStart) -> None:
    proc = quick_start.proc
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the README: 1, a check failed
    table = report_of(proc.stdout).split("\n\n", 1)[0].splitlines()[1:]
    gates = {row.split()[-1] for row in table}
    assert {"ok", "FAIL"} <= gates, proc.stdout
    assert "gate: FAIL" in proc.stdout


def test_the_uncompiled_install_gives_the_compiled_builds_verdicts(
    quick_start: QuickStart,
) -> None:
    """The pinned report of tests/golden/test_demo_golden.py, which the compiled suite
    and `make pure` also match."""
    golden = (ROOT / "tests" / "golden" / "reports" / "demo.txt").read_text()
    assert report_of(quick_start.proc.stdout) == golden
    version = quick_start.python(
        "from collector.core.build_info import build_labels; print(build_labels())"
    )
    assert version.stdout.strip() == (
        "{'decoder': 'upb', 'normalizer': 'interpreted', 'evaluators': 'interpreted'}"
    )


def test_make_install_runtime_installs_no_dev_tool(quick_start: QuickStart) -> None:
    found = quick_start.python(
        "import importlib.util as u; "
        f"print([m for m in {DEV_TOOLS!r} if u.find_spec(m) is not None])"
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"
