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
from typing import Any, Final

from collector.normalize.values import INVALID

_MAX_CHARS: Final = 256 * 1024
# pydantic's str() of a model has few tokens (a long text value is one). Tokenizing is
# pure Python: text with more tokens is not tried (it stays text).
_MAX_FIELDS_TOKENS: Final = 2048
_MAX_DEPTH: Final = 32
_CLASS: Final = "__class__"
# ``<Enum.MEMBER: 'value'>`` has no Python syntax: replaced by its value first.
_ENUM_MEMBER: Final = re.compile(r"<[A-Za-z_][\w.]*: ('[^'\\]*'|\"[^\"\\]*\"|-?\d+)>")
_CALL_START: Final = re.compile(r"\s*[A-Za-z_][\w.]*\(")
_FIELD_START: Final = re.compile(r"\s*[A-Za-z_]\w*=[^=]")
_OPEN: Final = frozenset("([{")
_CLOSE: Final = frozenset(")]}")


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
    between them (a tuple, keyword arguments) and no name twice. Stops at the first
    token that rules the form out, and after ``_MAX_FIELDS_TOKENS``."""
    if "\n" in text:
        return None  # reprs are one line; tokenize would read several as statements
    scan = _FieldScan()
    try:
        for count, token in enumerate(tokenize.generate_tokens(io.StringIO(text).readline)):
            if count > _MAX_FIELDS_TOKENS or not scan.step(token):
                return None
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return scan.fields()


class _FieldScan:
    """``_field_starts``' state over the tokens of one text."""

    def __init__(self) -> None:
        self.found: list[tuple[str, int]] = []
        self.depth = 0
        self.end = -1  # where the previous token ended
        self.pending: tokenize.TokenInfo | None = None  # a name: a field if "=" follows

    def step(self, token: tokenize.TokenInfo) -> bool:
        """Take one token; False when the text cannot be this form."""
        kind, string = token.type, token.string
        if self.pending is not None:
            if kind != tokenize.OP or string != "=":
                return False  # a bare name at the top level
            if self.found and self.pending.start[1] == self.end:
                return False  # fields are separated by whitespace
            self.found.append((self.pending.string, self.pending.start[1]))
            self.pending = None
        elif kind == tokenize.OP and string in _OPEN:
            self.depth += 1
        elif kind == tokenize.OP and string in _CLOSE:
            self.depth -= 1
        elif self.depth == 0 and kind == tokenize.OP and string in ",=":
            return False  # a tuple, keyword arguments, or "=" inside a value
        elif self.depth == 0 and kind == tokenize.NAME and token.start[1] > self.end:
            self.pending = token  # (the first token starts at 0, after end = -1)
        elif not self.found:
            return False  # the text does not open with a field
        if kind not in (tokenize.NEWLINE, tokenize.ENDMARKER):
            self.end = token.end[1]
        return self.depth <= _MAX_DEPTH

    def fields(self) -> list[tuple[str, int]] | None:
        found = self.found
        names = {name for name, _ in found}
        if self.pending is not None or len(found) < 2 or found[0][1] != 0:
            return None
        return found if len(names) == len(found) else None


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
    name = _dotted(node.func)
    if name is None:
        return INVALID
    out: dict[str, Any] = {_CLASS: name}
    for keyword in node.keywords:
        value = _value(keyword.value, depth + 1)
        if keyword.arg is None or value is INVALID:
            return INVALID
        out[keyword.arg] = value
    return out


def _dotted(node: ast.expr) -> str | None:
    """``a.b.C`` of a class named by names and attributes only (iteratively: a hostile
    ``f[0][0]…()`` must not recurse); None for anything else."""
    parts: list[str] = []
    for _ in range(_MAX_DEPTH):
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        if not isinstance(node, ast.Attribute):
            return None
        parts.append(node.attr)
        node = node.value
    return None
