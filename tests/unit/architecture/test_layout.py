"""The shape the code keeps (docs/adr/0013-package-layout.md): small modules and classes,
no import cycle, a plug-in API that never imports the daemon, tests that never import
each other, and documentation links that resolve."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.paths import ROOT, TESTS

PACKAGES = ("collector", "evaluators")
MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 300
PIPELINE = ("receivers", "decode", "assembly", "normalize", "processing", "sinks")
HOSTS = ("daemon", "offline", "cli")
CROSS_CUTTING = ("core", "config", "telemetry")


def sources() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Absolute module names ``path`` imports at module level or in functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_collector_lists_the_pipeline_its_hosts_and_cross_cutting_parts() -> None:
    packages = {p.name for p in (ROOT / "collector").iterdir() if (p / "__init__.py").exists()}
    assert packages == {*PIPELINE, *HOSTS, *CROSS_CUTTING}
    loose = {p.name for p in (ROOT / "collector").glob("*.py")}
    assert loose == {"__init__.py", "__main__.py"}


@pytest.mark.parametrize("path", list(sources()), ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_and_classes_stay_small(path: Path) -> None:
    text = path.read_text()
    assert text.count("\n") <= MAX_MODULE_LINES, f"{path} is over {MAX_MODULE_LINES} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            assert length <= MAX_CLASS_LINES, f"{path}: class {node.name} has {length} lines"


def test_no_import_cycle_between_modules() -> None:
    """Module-level imports only (imports inside functions are how a cycle is broken
    on purpose, and are visible where they are); importing a module also runs its
    package's ``__init__``."""
    names = {module_name(path): path for path in sources()}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        tree = ast.parse(path.read_text())
        edges: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # ``from package import submodule`` depends on the submodule only
                submodules = {f"{node.module}.{alias.name}" for alias in node.names}
                edges.update(submodules & names.keys() or {node.module})
        # Importing a.b.c from outside a.b runs a/b/__init__ first: a dependency too.
        own = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for edge in list(edges):
            package = edge.rpartition(".")[0]
            while package and not (own == package or own.startswith(package + ".")):
                edges.add(package)
                package = package.rpartition(".")[0]
        graph[name] = {edge for edge in edges if edge in names and edge != name}
    state: dict[str, int] = {}

    def visit(name: str, stack: list[str]) -> None:
        state[name] = 1
        for edge in sorted(graph[name]):
            if state.get(edge) == 1:
                cycle = [*stack[stack.index(edge) :], edge] if edge in stack else [name, edge]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if edge not in state:
                visit(edge, [*stack, edge])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_evaluators_never_import_collector() -> None:
    """Also a ruff rule (evaluators/ruff.toml, TID251); this catches a disabled rule."""
    for path in sorted((ROOT / "evaluators").rglob("*.py")):
        offending = {m for m in imported_modules(path) if m.split(".")[0] == "collector"}
        assert not offending, f"{path} imports {sorted(offending)}"


def test_tests_never_import_other_test_modules() -> None:
    for path in sorted(TESTS.rglob("*.py")):
        if "capture" in path.parts:
            continue
        offending = {
            m for m in imported_modules(path) if m.split(".")[0].startswith(("test_", "conftest"))
        }
        assert not offending, f"{path} imports {sorted(offending)}: move it to tests/support"


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CODE_PATH = re.compile(
    r"`((?:collector|evaluators|docs|config|deploy|benchmarks|tests|examples|build_backend)/[\w./-]+)`"
    r"|\b(docs/adr/[\w.-]+\.md)\b"
)


def documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("document", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_documentation_links_resolve(document: Path) -> None:
    text = document.read_text()
    missing = [
        target
        for target in LINK.findall(text)
        if "://" not in target
        and not target.startswith("mailto:")
        and not (document.parent / target).exists()
    ]
    assert not missing, f"{document.name} links to missing files: {missing}"


@pytest.mark.parametrize("path", [*documents(), *sources()], ids=lambda p: str(p.relative_to(ROOT)))
def test_paths_named_in_prose_exist(path: Path) -> None:
    """A file path in backticks (``collector/x.py``, ``docs/adr/...``) names a real file
    or folder; globs and placeholders (``*``, ``<``) are not checked."""
    if path.name == "CHANGELOG.md":
        return  # history names files as they were then
    named = [quoted or bare for quoted, bare in CODE_PATH.findall(path.read_text())]
    missing = [
        name
        for name in named
        if not any(c in name for c in "*<{") and not (ROOT / name.rstrip(".")).exists()
    ]
    assert not missing, f"{path.relative_to(ROOT)} names missing paths: {missing}"
