"""Spec and dataset files parse the same with libyaml's parser as with PyYAML's own."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.paths import ROOT

from evaluators import documents
from evaluators.documents import DocumentError, read_document

# Every YAML file of the repository evald could be given: specs, datasets, configs,
# deployment files, test fixtures.
YAML_FILES = sorted(
    path
    for pattern in ("*.yaml", "*.yml")
    for path in ROOT.rglob(pattern)
    if not {".venv", ".venv-pure", "build", "node_modules"} & set(path.relative_to(ROOT).parts)
)


def _lines(node: yaml.Node | None) -> list[tuple[str, int]]:
    """Every node's tag and 1-based line, depth first."""
    if node is None:
        return []
    found = [(node.tag, node.start_mark.line + 1)]
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            found += _lines(key) + _lines(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found += _lines(item)
    return found


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool) -> Any:
    monkeypatch.setattr(documents, "FAST_LOADER", yaml.CSafeLoader if fast else None)
    try:
        document = read_document(path)
    except DocumentError as exc:
        return ("error", exc.message, exc.line)
    return document.data, _lines(document.root)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
def test_both_parsers_read_every_yaml_file_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(YAML_FILES) >= 20  # specs, datasets, config, deploy, fixtures
    for path in YAML_FILES:
        pure = _read(path, monkeypatch, fast=False)
        assert _read(path, monkeypatch, fast=True) == pure, path


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("a: *unknown\n", "YAML syntax error: found undefined alias 'unknown'", 1),
        ("id: x\nx: [1, 2\n", "YAML syntax error: expected ',' or ']', but got '<stream end>'", 3),
        ("\t- tab\n", "YAML syntax error: found character '\\t' that cannot start any token", 1),
        ("id: a\nid: b\n", "duplicate key 'id'", 2),
    ],
)
def test_a_refused_file_gets_the_pure_parsers_message(
    tmp_path: Path, text: str, message: str, line: int
) -> None:
    # libyaml's messages say less ("found undefined alias"): the pure parser explains.
    assert documents.FAST_LOADER is yaml.CSafeLoader
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    with pytest.raises(DocumentError) as raised:
        read_document(path)
    assert raised.value.message.startswith(message)
    assert raised.value.line == line


def _random_value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([None, True, False, 0, -7, 3.25, 1e-9, "", "yes", "~", "null"])
    if kind == 1:
        return rng.randrange(-(10**12), 10**12)
    if kind == 2:
        alphabet = "ab :#-'\"\\\n\té€𝄞{}[],&*!|>%@`"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if kind in (3, 4):
        return rng.choice(["search_web", "lookup order", "a: b", "- x", "0x1F", "2026-11-27"])
    if kind in (5, 6):
        keys = {f"k{rng.randrange(50)}" for _ in range(rng.randrange(5))}
        return {key: _random_value(rng, depth + 1) for key in sorted(keys)}
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
def test_both_parsers_read_random_documents_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(11)
    path = tmp_path / "doc.yaml"
    for n in range(300):
        value = {"id": f"doc-{n}", "items": _random_value(rng, 0)}
        path.write_text(yaml.safe_dump(value, default_flow_style=rng.choice([None, True, False])))
        pure = _read(path, monkeypatch, fast=False)
        assert pure[0] == value
        assert _read(path, monkeypatch, fast=True) == pure


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
@pytest.mark.parametrize(
    "text",
    ["a:\tb\n", "a: [1,\t2]\n", "a: b\t# note\n", "a: b\t\n", "a: b\tc\n", "id: x\n\tb: 1\n"],
)
def test_a_tab_is_read_as_pyyaml_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    # libyaml takes tabs PyYAML refuses: whether a file loads must not depend on the build.
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    assert _read(path, monkeypatch, fast=True) == _read(path, monkeypatch, fast=False)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{\n  "id": "a",\n  "note": "\\ud83d\\udc00",\n  "id": "b"\n}\n', 4),
        ('{\n\t"id": "a",\n\t"id": "b"\n}\n', None),  # PyYAML cannot compose tabs: no check
    ],
)
def test_json_specs_keep_their_duplicate_key_check(
    tmp_path: Path, text: str, line: int | None
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(text)
    if line is None:
        assert read_document(path).data == {"id": "b"}
        return
    with pytest.raises(DocumentError) as raised:
        read_document(path)
    assert (raised.value.message, raised.value.line) == ("duplicate key 'id'", line)
