"""Reading spec files (YAML or JSON) while keeping where each value was written.

Validation errors name a field path such as ``evaluators[1].criteria.tool``;
``Document.line_of`` turns that path into the line of the file that holds it,
so a message can point at ``refund.yaml:14``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml

YAML_SUFFIXES = (".yaml", ".yml")
JSON_SUFFIXES = (".json",)

Loc = Sequence[str | int]


class DocumentError(Exception):
    """A file that cannot be read or parsed; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class Document(NamedTuple):
    """A parsed file: its data and, when available, the YAML node tree for line lookups."""

    path: Path
    data: Any
    root: yaml.Node | None

    def line_of(self, loc: Loc) -> int | None:
        """The 1-based line of the deepest node on ``loc`` that exists, or None."""
        node = self.root
        line = _line(node) if node is not None else None
        for part in loc:
            if node is None:
                break
            node, part_line = _child(node, part)
            line = part_line if part_line is not None else line
        return line


def read_document(path: Path) -> Document:
    """Read and parse ``path`` by its suffix. Raises ``DocumentError``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(f"cannot read file: {exc}") from None
    suffix = path.suffix.lower()
    if suffix not in YAML_SUFFIXES + JSON_SUFFIXES:
        raise DocumentError(f"unsupported file type {suffix!r}: use .yaml, .yml or .json")
    # The parsers, the constructor and the duplicate-key walk recurse per level: a file
    # nested thousands deep (a hostile or generated one) must be an error naming the
    # file, not a traceback that stops the loader (or a reload of a running daemon).
    try:
        if suffix in YAML_SUFFIXES:
            data, root = _parse_yaml(text)
        else:
            data, root = _parse_json(text), _json_nodes(text)
            if root is not None:
                _reject_duplicate_keys(root)
    except RecursionError:
        raise DocumentError(TOO_DEEP) from None
    document = Document(path=path, data=data, root=root)
    deep = too_deep(data)
    if deep is not None:
        raise DocumentError(TOO_DEEP, document.line_of(deep))
    return document


MAX_NESTING = 100
"""How deep values may nest in a spec or dataset file. Real ones nest a few levels (a
tool's arguments inside a reference inside a list); validation, serialization and
matching all recurse per level, and pydantic's serializer stops at a few hundred."""

TOO_DEEP = (
    f"values nested more than {MAX_NESTING} levels deep "
    "(far more than any spec, dataset or config needs)"
)


def too_deep(data: Any, limit: int = MAX_NESTING) -> Loc | None:
    """The path of a value nested more than ``limit`` levels deep in ``data`` (mappings
    and lists), or None. Iterative: it must not recurse on what it guards against."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if len(loc) > limit:
            return loc
        if isinstance(value, dict):
            stack.extend((item, (*loc, str(key))) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, (*loc, index)) for index, item in enumerate(value))
    return None


def _parse_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    if FAST_LOADER is not None and "\t" not in text:
        try:
            return _load_yaml(text, FAST_LOADER)
        except yaml.YAMLError:
            pass  # the message comes from the pure-Python parser, below
    try:
        return _load_yaml(text, yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = f"{exc.problem} ({exc.context})" if exc.context else str(exc.problem)
        raise DocumentError(f"YAML syntax error: {problem}", _mark_line(mark)) from None
    except yaml.YAMLError as exc:
        raise DocumentError(f"YAML error: {exc}") from None


# libyaml's parser, when PyYAML was built with it (its wheels are): spec and dataset
# files parse ~10x faster than with the pure-Python parser, which matters for every
# process that loads them (serve's workers, each replay, each reload). Same nodes,
# lines and values (the constructor is the same safe one); a file it refuses is
# parsed again by the pure-Python parser, whose messages say more ("found undefined
# alias 'x'" where libyaml says "found undefined alias"). The one difference found in
# what the two accept: libyaml takes tabs where PyYAML refuses them (after a colon, in
# flow collections, in plain scalars), so a text with a tab goes to PyYAML alone and
# whether a file loads never depends on how PyYAML was built. JSON files keep PyYAML
# for their line numbers (``_json_nodes``): libyaml refuses the surrogate-pair escapes
# ``json.dump`` writes for any character beyond U+FFFF.
FAST_LOADER: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)


def _load_yaml(
    text: str, loader_class: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
) -> tuple[Any, yaml.Node | None]:
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _reject_duplicate_keys(root)
        return (loader.construct_document(root) if root is not None else None), root
    finally:
        loader.dispose()


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"JSON syntax error: {exc.msg}", exc.lineno) from None


def _json_nodes(text: str) -> yaml.Node | None:
    """JSON is (nearly) YAML: compose it for line numbers; best effort only."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None


def _reject_duplicate_keys(node: yaml.Node) -> None:
    """YAML keeps the last of duplicate keys silently; a spec typo deserves an error."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen and name != "<<":
                raise DocumentError(f"duplicate key {name!r}", _line(key))
            seen.add(name)
            _reject_duplicate_keys(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _reject_duplicate_keys(item)


def _child(node: yaml.Node, part: str | int) -> tuple[yaml.Node | None, int | None]:
    """The child node at ``part`` and the line of its key (mappings) or item (sequences)."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if str(key.value) == str(part):
                return value, _line(key)
    elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        item = node.value[part]
        return item, _line(item)
    return None, None


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _mark_line(mark: Any) -> int | None:
    return int(mark.line) + 1 if mark is not None else None
