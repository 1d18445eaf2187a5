"""``--fail-under [SPEC/]EVALUATOR=VALUE``: the parsed bound (see ``reports.gate``)."""

from __future__ import annotations

from typing import NamedTuple

MetricKey = tuple[
    str | None, str
]  # as in collector.offline.reports.summary (not imported: stays light)


class FailUnder(NamedTuple):
    """A ``--fail-under`` bound on the mean score of one evaluator (in one spec or all)."""

    spec: str | None  # None: the evaluator in every spec (and in evaluation.always)
    evaluator: str
    bound: float

    @classmethod
    def parse(cls, text: str) -> FailUnder:
        """``EVALUATOR=VALUE`` or ``SPEC/EVALUATOR=VALUE``; ``ValueError`` otherwise."""
        name, sep, value = text.rpartition("=")
        spec, slash, evaluator = name.partition("/")
        if not slash:
            spec, evaluator = "", name
        try:
            bound = float(value)
        except ValueError:
            bound = float("nan")
        if not sep or not evaluator or bound != bound:  # noqa: PLR0124 - NaN check
            raise ValueError(
                f"--fail-under {text!r}: expected EVALUATOR=NUMBER or SPEC/EVALUATOR=NUMBER"
            )
        return cls(spec or None, evaluator, bound)

    def applies(self, key: MetricKey) -> bool:
        return key[1] == self.evaluator and (self.spec is None or key[0] == self.spec)
