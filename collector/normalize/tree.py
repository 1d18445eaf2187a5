"""The span tree of one trace, and the order of its spans.

Order is start time, ties broken by tree order: a depth-first pre-order whose
siblings are sorted by (start time, arrival). Arrival breaks sibling ties because
SDKs export a span when it *ends*, so among siblings that started in the same
tick (Vercel AI SDK start times have millisecond resolution) arrival order is
execution order; span ids are random and would not be.

Never trusts the data: duplicate span ids keep the first copy (OTLP is
at-least-once), missing parents make orphans top-level, and parent cycles are cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from collector.core.records import Span
from collector.normalize.roles import Role

_NO_CHILDREN: Final[list[int]] = []


class SpanTree:
    """Indices into ``spans`` (deduplicated, arrival order) with parents and children.

    ``root`` is the trace root: the earliest span without a parent id, else (a
    partial trace) the earliest top-level span; ``has_root`` tells which.
    """

    __slots__ = ("_children", "_tops", "has_root", "parent", "root", "spans")

    def __init__(self, trace_spans: Sequence[Span]) -> None:
        spans = list(trace_spans)
        index = {span.span_id: i for i, span in enumerate(spans)}
        if len(index) != len(spans):
            spans = _first_copies(spans)
            index = {span.span_id: i for i, span in enumerate(spans)}
        self.spans = spans
        self.parent = parent = [index.get(span.parent_span_id, -1) for span in spans]
        children: dict[int, list[int]] = {}
        tops: list[int] = []
        for i, p in enumerate(parent):
            if p < 0 or p == i:
                parent[i] = -1
                tops.append(i)
            else:
                children.setdefault(p, []).append(i)
        start = [span.start_unix_nano for span in spans].__getitem__
        for kids in children.values():
            kids.sort(key=start)  # stable: equal starts keep arrival order
        tops.sort(key=start)
        self._children, self._tops = children, tops
        if not tops and spans:  # every span is in a parent cycle
            tops.append(self._cut_cycle(set()))
        true_roots = [i for i in tops if not spans[i].parent_span_id]
        self.has_root = bool(true_roots)
        self.root = true_roots[0] if true_roots else (tops[0] if tops else 0)

    def adopt(self, spans: Sequence[int], parent: int) -> None:
        """Make ``spans`` (none the root, none an ancestor of ``parent``) children of span
        ``parent``, in start order among its children (``detached_calls``: calls cut off
        from their agent). Linear in the spans moved and the lists they leave."""
        moved = set(spans)
        olds = {self.parent[i] for i in moved}
        for old in olds:
            siblings = self._children.get(old, []) if old >= 0 else self._tops
            siblings[:] = [k for k in siblings if k not in moved]
        for i in moved:
            self.parent[i] = parent
        start = [span.start_unix_nano for span in self.spans].__getitem__
        kids = self._children.setdefault(parent, [])
        kids.extend(sorted(moved))  # (index order is arrival order: the sort below is stable)
        kids.sort(key=start)

    def tops(self) -> list[int]:
        """The spans without a parent in the trace, in (start, arrival) order."""
        return self._tops

    def children(self, i: int) -> list[int]:
        """Span ``i``'s children in (start, arrival) order."""
        return self._children.get(i, _NO_CHILDREN)

    def preorder(self) -> list[int]:
        """Every span index once, parents before children (cycles cut, see ``_cut_cycle``)."""
        order: list[int] = []
        seen: set[int] = set()
        self._visit(self._tops, order, seen)
        while len(order) < len(self.spans):
            self._visit([self._cut_cycle(seen)], order, seen)
        return order

    def _visit(self, tops: list[int], order: list[int], seen: set[int]) -> None:
        children = self._children
        stack = tops[::-1]
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            order.append(i)
            kids = children.get(i)
            if kids:
                stack.extend(reversed(kids))

    def _cut_cycle(self, seen: set[int]) -> int:
        """Detach the earliest span only reachable through a parent cycle; return it."""
        left = min(
            (i for i in range(len(self.spans)) if i not in seen),
            key=lambda i: self.spans[i].start_unix_nano,
        )
        self._children[self.parent[left]].remove(left)
        self.parent[left] = -1
        return left

    def __len__(self) -> int:
        return len(self.spans)


def _first_copies(spans: list[Span]) -> list[Span]:
    seen: set[bytes] = set()
    kept: list[Span] = []
    for span in spans:
        if span.span_id not in seen:
            seen.add(span.span_id)
            kept.append(span)
    return kept


def role_below(
    tree: SpanTree,
    roles: Sequence[Role],
    i: int,
    wanted: frozenset[Role],
    *,
    stop: frozenset[Role] = frozenset(),
    max_depth: int = 16,
) -> bool:
    """Whether a span with a role in ``wanted`` runs below span ``i`` (``i`` itself not
    counted), looking through spans whose role is not in ``stop``, at most ``max_depth``
    levels down."""
    level = [i]
    for _ in range(max_depth):
        level = [kid for j in level for kid in tree.children(j) if roles[kid] not in stop]
        if not level:
            return False
        if any(roles[kid] in wanted for kid in level):
            return True
    return False
