"""``evald compare``: which of two agent versions does better, item by item (seed 002).

The two sides are two result files (``evald replay --results-out``), or the two
groups of one file split by a field or resource attribute (``service.version``).
Results are aligned by *item*: the user input by default (the same dataset item
replayed against both versions), or the trace id (the same traces re-scored after
a spec change), the session id, or any resource attribute (a dataset case id).

For every (spec, evaluator) and every item present on both sides, the item's
score on each side (the mean when an item ran several times) decides a
preference: A, B, or a tie. The tally gives preference ratios, a Wilson 95 %
interval of P(A preferred | not a tie), and the two-sided exact binomial p-value
of the non-tied preferences against "no preference" (p = 0.5).

Pairwise LLM judges plug in at ``Tally``; per-item scores are one source of
preferences, a judge is another, and everything after the tally (statistics,
reports) is shared. ``evald compare --judge NAME --seed S`` (``collector.offline.compare_judge``)
reads the two runs' ``--trajectories-out`` files, aligned the same way; for each
item ``evaluators.judges.pairwise.prefer(runner, input, trajectory_a,
trajectory_b, seed=position_seed(str(S), item))`` shows the two in a seeded random
order and maps the answer back to a / b (``None`` → tie), ``Tally.add`` counts it,
and the output records S so a rerun shows the judge the same orders (and hits
its cache).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from collector.offline.stats import binomial_test, wilson_interval

MetricKey = tuple[str | None, str]
Preference = Literal["a", "b", "tie"]
TIE_TOLERANCE = 1e-9
RECORD_FIELDS = (
    "item",
    "input",
    "trace_id",
    "span_id",
    "session_id",
    "service",
    "agent",
    "spec",
    "evaluator",
)


class CompareInputError(Exception):
    """A results file that cannot be compared; the message names file and line."""


@dataclass
class Side:
    """The per-item scores of one side: metric → item → [sum, count]."""

    label: str
    scores: dict[MetricKey, dict[str, list[float]]] = field(default_factory=dict)
    records: int = 0
    unaligned: int = 0  # scored records without an alignment key

    def add(self, record: dict[str, Any], item: str | None) -> None:
        self.records += 1
        score = record.get("score")
        if not isinstance(score, int | float) or isinstance(score, bool):
            return  # an evaluator error: no score to compare
        if not math.isfinite(score):
            return  # NaN / Infinity (json.loads accepts them): no preference can come of it
        if item is None:
            self.unaligned += 1
            return
        key = (record.get("spec"), str(record.get("evaluator")))
        total = self.scores.setdefault(key, {}).setdefault(item, [0.0, 0])
        total[0] += float(score)
        total[1] += 1


def field_value(record: dict[str, Any], name: str) -> str | None:
    """A record field (``input``, ``trace_id``, ``service`` …) or else a resource attribute."""
    value = record.get(name) if name in RECORD_FIELDS else None
    if value is None:
        resource = record.get("resource")
        value = resource.get(name) if isinstance(resource, dict) else None
    return None if value is None else str(value)


def json_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` for every non-blank line of a JSON-lines file, streamed
    (``where``: ``path:line``); ``CompareInputError`` naming the line that is not
    JSON, or the file that cannot be read."""
    try:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except ValueError as exc:
                    raise CompareInputError(f"{path}:{number}: not JSON: {exc}") from None
                yield f"{path}:{number}", value
    except OSError as exc:
        raise CompareInputError(f"{path}: {exc.strerror or exc}") from None


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a results file, streamed; ``CompareInputError`` on a bad line."""
    for where, record in json_lines(path):
        if not isinstance(record, dict) or "evaluator" not in record:
            trajectories = isinstance(record, dict) and "steps" in record
            hint = " (trajectories? compare those with --judge NAME)" if trajectories else ""
            raise CompareInputError(f"{where}: not an evald result record{hint}")
        yield record


def load_side(path: Path, align_by: str, label: str) -> Side:
    side = Side(label)
    for record in read_records(path):
        side.add(record, field_value(record, align_by))
    return side


def load_split(
    path: Path, split_by: str, align_by: str, groups: Sequence[str] | None = None
) -> tuple[Side, Side]:
    """The two groups of one file; without ``groups`` the file must hold exactly two."""
    sides: dict[str, Side] = {}
    for record in read_records(path):
        group = field_value(record, split_by)
        if group is not None:
            side = sides.setdefault(group, Side(f"{split_by}={group}"))
            side.add(record, field_value(record, align_by))
    chosen = list(groups) if groups else sorted(sides)
    found = ", ".join(sorted(sides)) or "none"
    if len(chosen) != 2 or any(group not in sides for group in chosen):
        raise CompareInputError(
            f"{path}: --split-by {split_by} needs exactly two groups (found: {found}); "
            "choose them with --groups A B"
        )
    return sides[chosen[0]], sides[chosen[1]]


@dataclass
class Tally:
    """Preferences counted over aligned items: the input of every statistic."""

    a: int = 0
    b: int = 0
    ties: int = 0

    def add(self, preference: Preference) -> None:
        if preference == "a":
            self.a += 1
        elif preference == "b":
            self.b += 1
        else:
            self.ties += 1

    @property
    def pairs(self) -> int:
        return self.a + self.b + self.ties


class Comparison(NamedTuple):
    """One (spec, evaluator) compared across the two sides."""

    key: MetricKey
    tally: Tally
    only_a: int  # items scored on one side only
    only_b: int
    mean_a: float | None  # over the paired items
    mean_b: float | None

    def ratio(self, who: Preference) -> float | None:
        """Share of all pairs (ties included) where ``who`` won, as seed 002 reports it."""
        count = {"a": self.tally.a, "b": self.tally.b, "tie": self.tally.ties}[who]
        return count / self.tally.pairs if self.tally.pairs else None

    def interval(self, who: Literal["a", "b"]) -> tuple[float, float] | None:
        """Wilson 95 % interval of P(``who`` preferred | not a tie)."""
        wins = self.tally.a if who == "a" else self.tally.b
        return wilson_interval(wins, self.tally.a + self.tally.b)

    @property
    def p_value(self) -> float:
        """Two-sided exact binomial test of the non-tied preferences against p = 0.5."""
        return binomial_test(self.tally.a, self.tally.a + self.tally.b)


def prefer(score_a: float, score_b: float, higher_is_better: bool) -> Preference:
    """Which side's score is better; a tie within ``TIE_TOLERANCE``."""
    if abs(score_a - score_b) <= TIE_TOLERANCE:
        return "tie"
    return "a" if (score_a > score_b) == higher_is_better else "b"


def compare(a: Side, b: Side, lower_is_better: frozenset[str] = frozenset()) -> list[Comparison]:
    """Compare every metric present on both sides, ordered by spec then evaluator."""
    shared = sorted(set(a.scores) & set(b.scores), key=lambda key: (key[0] or "", key[1]))
    return [_compare_metric(key, a.scores[key], b.scores[key], key[1] not in lower_is_better)
            for key in shared]  # fmt: skip


def _compare_metric(
    key: MetricKey,
    a: dict[str, list[float]],
    b: dict[str, list[float]],
    higher_is_better: bool,
) -> Comparison:
    tally = Tally()
    sum_a = sum_b = 0.0
    for item in sorted(a.keys() & b.keys()):  # sorted: sums identical run to run
        mean_a, mean_b = a[item][0] / a[item][1], b[item][0] / b[item][1]
        tally.add(prefer(mean_a, mean_b, higher_is_better))
        sum_a, sum_b = sum_a + mean_a, sum_b + mean_b
    n = tally.pairs
    return Comparison(
        key, tally, len(a.keys() - b.keys()), len(b.keys() - a.keys()),
        sum_a / n if n else None, sum_b / n if n else None,
    )  # fmt: skip
