"""Python ``repr`` text of objects, read back as JSON-like data.

Python instrumentations that ``str()`` what they record write reprs: of containers
(read by ``values.python_literal``) and of objects, such as dataclasses and
pydantic models (``ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[...])``,
``ToolResult(status='error', content='...')``). Here an object becomes a dict of its
keyword fields with ``"__class__"`` naming its type, an enum member
(``<Kind.USER: 'user'>``) its value; anything else (positional fields, expressions)
makes the whole text unreadable. No code is ever evaluated: the text is only parsed.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from collector.normalize.values import INVALID

_MAX_CHARS = 256 * 1024
_MAX_DEPTH = 32
_CLASS = "__class__"
# ``<Enum.MEMBER: 'value'>`` has no Python syntax: replaced by its value first.
_ENUM_MEMBER = re.compile(r"<[A-Za-z_][\w.]*: ('[^'\\]*'|\"[^\"\\]*\"|-?\d+)>")
_CALL_START = re.compile(r"\s*[A-Za-z_][\w.]*\(")


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
