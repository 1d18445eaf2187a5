"""Python ``repr`` text of objects, read back as JSON-like data.

Python instrumentations that ``str()`` what they record write reprs: of containers
(read by ``values.python_literal``) and of objects, such as dataclasses and
pydantic models (``ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[...])``,
``ToolResult(status='error', content='...')``). Here an object becomes a dict of its
keyword fields with ``"__class__"`` naming its type, an enum member
(``<Kind.USER: 'user'>``) its value; anything else (positional fields, expressions)
makes the whole text unreadable. pydantic's ``str()`` of a model drops the class and
the parentheses (``content='…' name='refund' status='error'``): two or more such
fields, and nothing else, are read as a dict of them (``fields_repr``). No code is
ever evaluated: the text is only parsed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Any

from collector.normalize.values import INVALID

_MAX_CHARS = 256 * 1024
_MAX_DEPTH = 32
_CLASS = "__class__"
# ``<Enum.MEMBER: 'value'>`` has no Python syntax: replaced by its value first.
_ENUM_MEMBER = re.compile(r"<[A-Za-z_][\w.]*: ('[^'\\]*'|\"[^\"\\]*\"|-?\d+)>")
_CALL_START = re.compile(r"\s*[A-Za-z_][\w.]*\(")
_FIELD_START = re.compile(r"\s*[A-Za-z_]\w*=[^=]")
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")


def looks_like_object_repr(raw: str) -> bool:
    """True when ``raw`` starts like ``Name(``: cheap, before any parsing."""
    return _CALL_START.match(raw) is not None


def object_repr(raw: str) -> Any:
    """The data of an object (or container of objects) ``repr``; ``INVALID`` otherwise."""
    if len(raw) > _MAX_CHARS:
        return INVALID
    try:
        tree = ast.parse(_ENUM_MEMBER.sub(r"\1", raw.strip()), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return INVALID
    return _value(tree.body, 0)


def looks_like_fields_repr(raw: str) -> bool:
    """True when ``raw`` starts like ``name=`` (pydantic's ``str()``): cheap, first."""
    return _FIELD_START.match(raw) is not None


def fields_repr(raw: str) -> Any:
    """The fields of a pydantic model's ``str()`` (module docstring) as a dict, or
    ``INVALID``: at least two ``name=<repr>`` fields separated by whitespace, each value
    a literal or object repr, nothing else."""
    if len(raw) > _MAX_CHARS:
        return INVALID
    text = _ENUM_MEMBER.sub(r"\1", raw.strip())
    fields = _field_starts(text)
    if fields is None:
        return INVALID
    out: dict[str, Any] = {}
    ends = [start for _, start in fields[1:]] + [len(text)]
    for (name, start), end in zip(fields, ends, strict=True):
        try:
            tree = ast.parse(text[start + len(name) + 1 : end].strip(), mode="eval")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return INVALID
        value = _value(tree.body, 0)
        if value is INVALID:
            return INVALID
        out[name] = value
    return out


def _field_starts(text: str) -> list[tuple[str, int]] | None:
    """Each top-level ``name=`` of ``text`` with where it starts; None unless the text is
    two or more of them, the first at its start, separated by whitespace, no commas
    between them (a tuple, keyword arguments) and no name twice."""
    if "\n" in text:
        return None  # reprs are one line; tokenize would read several as statements
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    found: list[tuple[str, int]] = []
    depth, previous_end = 0, -1
    for i, token in enumerate(tokens):
        kind, string = token.type, token.string
        if kind == tokenize.OP and string in _OPEN:
            depth += 1
        elif kind == tokenize.OP and string in _CLOSE:
            depth -= 1
        elif depth == 0 and kind == tokenize.OP and string == ",":
            return None
        elif depth == 0 and kind == tokenize.NAME and _is_assignment(tokens, i):
            if found and token.start[1] == previous_end:
                return None  # fields are separated by whitespace
            found.append((string, token.start[1]))
        if kind not in (tokenize.NEWLINE, tokenize.ENDMARKER):
            previous_end = token.end[1]
    names = {name for name, _ in found}
    if len(found) < 2 or found[0][1] != 0 or len(names) != len(found):
        return None
    return found


def _is_assignment(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    return after is not None and after.type == tokenize.OP and after.string == "="


def _value(node: ast.expr, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return INVALID
    if isinstance(node, ast.Constant):
        value = node.value
        return value if value is None or isinstance(value, str | int | float) else INVALID
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(node.operand, depth + 1)
        return -inner if isinstance(inner, int | float) and not isinstance(inner, bool) else INVALID
    if isinstance(node, ast.List | ast.Tuple):
        return _all([_value(item, depth + 1) for item in node.elts])
    if isinstance(node, ast.Dict):
        return _mapping(node, depth)
    if isinstance(node, ast.Call) and not node.args:
        return _object(node, depth)
    return INVALID


def _all(items: list[Any]) -> Any:
    return INVALID if any(item is INVALID for item in items) else items


def _mapping(node: ast.Dict, depth: int) -> Any:
    out: dict[str, Any] = {}
    for key, item in zip(node.keys, node.values, strict=True):
        name = _value(key, depth + 1) if key is not None else INVALID
        value = _value(item, depth + 1)
        if not isinstance(name, str) or value is INVALID:
            return INVALID
        out[name] = value
    return out


def _object(node: ast.Call, depth: int) -> Any:
    out: dict[str, Any] = {_CLASS: ast.unparse(node.func)}
    for keyword in node.keywords:
        value = _value(keyword.value, depth + 1)
        if keyword.arg is None or value is INVALID:
            return INVALID
        out[keyword.arg] = value
    return out
