"""Spec and dataset files parse the same with libyaml's parser as with PyYAML's own."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.paths import ROOT

from collector.config.settings import ConfigError, load_config
from evaluators import documents
from evaluators.documents import MAX_NESTING, TOO_DEEP, DocumentError, read_document, too_deep
from evaluators.spec import SpecError, load_spec

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


def _nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 300, 1_000, 100_000])
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_file_nested_too_deep_is_an_error_naming_it(
    tmp_path: Path, depth: int, suffix: str
) -> None:
    # Parsers, validation and serialization recurse per level: thousands of levels
    # raised RecursionError (or pydantic's "Maximum serialization depth") from inside
    # the loader instead of a problem naming the file.
    path = tmp_path / f"spec{suffix}"
    path.write_text('{"id": "x", "evaluators": ' + _nested_list(depth) + "}\n")
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    (problem,) = raised.value.problems
    assert (problem.path, problem.message) == (path, TOO_DEEP)


def test_too_deep_names_the_first_path_past_the_limit() -> None:
    data: Any = {"a": [1, {"b": "leaf"}]}
    assert too_deep(data) is None
    assert too_deep(data, limit=2) == ("a", 1, "b")
    assert too_deep(json.loads(_nested_list(MAX_NESTING))) is None


def test_a_dataset_line_nested_too_deep_is_an_error_naming_it(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "input": "x"}\n{"id": "b", "q": ' + _nested_list(5_000) + "}\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "id: s\ndataset: items.jsonl\nreference: {trajectory: [refund]}\n"
        "evaluators: [trajectory_in_order_match]\n"
    )
    with pytest.raises(SpecError) as raised:
        load_spec(spec)
    (problem,) = raised.value.problems
    assert (problem.path, problem.line, problem.message) == (items, 2, TOO_DEEP)


def test_a_config_nested_too_deep_is_an_error_naming_it(tmp_path: Path) -> None:
    for depth in (MAX_NESTING + 1, 100_000):
        path = tmp_path / "evald.yaml"
        path.write_text("specs: " + _nested_list(depth) + "\n")
        with pytest.raises(ConfigError, match=r"evald\.yaml: values nested more than"):
            load_config(path)
