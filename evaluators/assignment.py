"""Maximum-weight bipartite matching (the assignment problem), for partial credit.

``evaluators.matching.maximum_matching`` pairs reference items with calls when
the question is yes/no. When each pair has a *score* (the share of matching
arguments), the pairing that gives the best total is a maximum-weight matching:
a greedy "best pair first" can take the pair that blocks two better ones. The
Hungarian algorithm (Kuhn-Munkres with potentials, O(n²·m)) finds it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Weights = Sequence[Sequence[float | None]]
"""``weights[i][j]``: the value of pairing row *i* with column *j*; None: not allowed."""

_EPSILON = 1e-9  # pairs allowed at weight 0 still pair when nothing better needs them


def best_assignment(weights: Weights) -> list[tuple[int, int]]:
    """A matching of rows to columns with the largest total weight, each used once.

    Pairs whose weight is None are never returned. Returns (row, column) pairs
    sorted by row. Weights should lie in [0, 1]; ties are broken arbitrarily but
    deterministically.
    """
    rows = len(weights)
    cols = len(weights[0]) if rows else 0
    if not rows or not cols:
        return []
    transposed = rows > cols
    cost = _costs(weights, transposed)
    assigned = _hungarian(cost)
    pairs = [(j, i) if transposed else (i, j) for i, j in enumerate(assigned)]
    return sorted((i, j) for i, j in pairs if weights[i][j] is not None)


def _costs(weights: Weights, transposed: bool) -> list[list[float]]:
    """Costs to minimise, rows ≤ columns; a forbidden pair costs as much as no pair."""
    table = [list(row) for row in weights]
    if transposed:
        table = [list(column) for column in zip(*table, strict=True)]
    return [[0.0 if w is None else -(w + _EPSILON) for w in row] for row in table]


def _hungarian(cost: list[list[float]]) -> list[int]:
    """The column of each row in a minimum-cost assignment (``len(cost) <= len(cost[0])``)."""
    n, m = len(cost), len(cost[0])
    potentials = ([0.0] * (n + 1), [0.0] * (m + 1))
    owner = [0] * (m + 1)  # owner[j]: the row (1-based) holding column j (1-based); 0: none
    for row in range(1, n + 1):
        owner[0] = row
        way, free = _shortest_augmenting_path(cost, potentials, owner)
        while free:  # shift the rows along the path; the new row gets the first column
            previous = way[free]
            owner[free] = owner[previous]
            free = previous
    result = [0] * n
    for column in range(1, m + 1):
        if owner[column]:
            result[owner[column] - 1] = column - 1
    return result


def _shortest_augmenting_path(
    cost: list[list[float]], potentials: tuple[list[float], list[float]], owner: list[int]
) -> tuple[list[int], int]:
    """Dijkstra-like search from ``owner[0]``'s row to a free column, updating potentials.

    Returns ``way`` (the previous column of each column on the path) and the free
    column reached.
    """
    u, v = potentials
    m = len(v) - 1
    slack, way, used = [math.inf] * (m + 1), [0] * (m + 1), [False] * (m + 1)
    column = 0
    while True:
        used[column] = True
        row, delta, nearest = owner[column], math.inf, 0
        for j in range(1, m + 1):
            if used[j]:
                continue
            reduced = cost[row - 1][j - 1] - u[row] - v[j]
            if reduced < slack[j]:
                slack[j], way[j] = reduced, column
            if slack[j] < delta:
                delta, nearest = slack[j], j
        for j in range(m + 1):
            if used[j]:
                u[owner[j]] += delta
                v[j] -= delta
            else:
                slack[j] -= delta
        column = nearest
        if owner[column] == 0:
            return way, column
