"""The CI gate: does a replay pass? Exit code 0 if every check holds, 1 if any fails.

One check per (spec, evaluator):

- an evaluator **error** fails the check: a threshold that could not be evaluated
  is not shown to hold (a judge that timed out on every trace must not go green);
- without ``--fail-under``, the check fails when **any result** missed the spec's
  threshold (the per-result verdicts of the spec);
- ``--fail-under EVALUATOR=VALUE`` (or ``SPEC/EVALUATOR=VALUE``) replaces that for
  the run with a bound on the **mean score** over the run: the check holds when
  the mean is at least VALUE (at most VALUE for evaluators where lower is better,
  such as ``latency``), and fails when there is no score at all. This is the
  CI-useful reading: agents are not deterministic, so a release is gated on
  "trajectory precision averages at least 0.9 on the eval set", not on every
  single trace; per-result thresholds stay in the spec for monitoring.

A replay that evaluated **no run at all** fails, with one check of its own
(``NOTHING_EVALUATED``): traces were read but none was an agent run evald recognises
(each listed with its reason under "traces skipped"), so nothing was shown to hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from collector.offline.reports.fail_under import FailUnder
from collector.offline.reports.summary import MetricKey, MetricSummary, RunSummary

if TYPE_CHECKING:
    from evaluators.spec import SpecSet
    from evaluators.spec_model import BoundEvaluator


NOTHING_EVALUATED: MetricKey = (None, "evaluated_runs")
"""The gate's check that at least one run was evaluated (module docstring)."""


class MetricInfo(NamedTuple):
    """What the specs say about one (spec, evaluator)."""

    threshold: float | None
    higher_is_better: bool


Catalogue = Mapping[MetricKey, MetricInfo]


def catalogue(specs: SpecSet, always: Sequence[BoundEvaluator]) -> dict[MetricKey, MetricInfo]:
    """Threshold and direction of every evaluator the run may produce."""
    bound = [*always, *(item for spec in specs for item in spec.bound)]
    return {
        (item.spec_id, item.id): MetricInfo(item.threshold, item.evaluator.higher_is_better)
        for item in bound
    }


def unmatched(bounds: Iterable[FailUnder], known: Catalogue) -> list[FailUnder]:
    """Bounds naming no evaluator of the loaded specs: typos, reported as usage errors."""
    return [bound for bound in bounds if not any(bound.applies(key) for key in known)]


class Check(NamedTuple):
    """The gate's verdict on one (spec, evaluator)."""

    key: MetricKey
    ok: bool
    reason: str  # why it failed, or "" when it held


class GateVerdict(NamedTuple):
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if not check.ok)


def judge(summary: RunSummary, known: Catalogue, bounds: Sequence[FailUnder] = ()) -> GateVerdict:
    """One check per metric seen in the run or named by a bound, in report order."""
    keys = set(summary.metrics) | {key for key in known if any(b.applies(key) for b in bounds)}
    checks = []
    for key in sorted(keys, key=lambda key: (key[0] or "", key[1])):
        metric = summary.metrics.get(key, MetricSummary())
        info = known.get(key, MetricInfo(None, True))
        bound = next((b for b in reversed(bounds) if b.applies(key)), None)
        checks.append(Check(key, *_check(metric, info, bound)))
    if not summary.metrics:
        checks.insert(0, Check(NOTHING_EVALUATED, False, _nothing_evaluated(summary)))
    return GateVerdict(tuple(checks))


def _nothing_evaluated(summary: RunSummary) -> str:
    reason = f"no run evaluated: {summary.traces} trace(s) read"
    if summary.skipped:
        reason += (
            f", {summary.skipped} no agent run evald recognises (see 'traces skipped'; "
            "an in-house convention is read with normalization.mappings)"
        )
    if summary.untraceable:
        reason += f", {summary.untraceable} without a trajectory"
    unjudged = summary.traces - summary.skipped - summary.untraceable
    if unjudged > 0:
        reason += f", {unjudged} run(s) no evaluator ran on (no spec matched, no always-on)"
    return reason


def _check(metric: MetricSummary, info: MetricInfo, bound: FailUnder | None) -> tuple[bool, str]:
    if metric.errors:
        return False, f"{metric.errors} evaluator error(s)"
    if bound is not None:
        return _mean_check(metric, info, bound.bound)
    if metric.failed:
        limit = "its threshold" if info.threshold is None else f"threshold {info.threshold:g}"
        return False, f"{metric.failed} of {metric.count} result(s) missed {limit}"
    return True, ""


def _mean_check(metric: MetricSummary, info: MetricInfo, bound: float) -> tuple[bool, str]:
    if metric.scores.count == 0:
        return False, f"no scores to compare with --fail-under {bound:g}"
    mean = metric.scores.mean
    ok = mean >= bound if info.higher_is_better else mean <= bound
    sign = "<" if info.higher_is_better else ">"
    return ok, "" if ok else f"mean {mean:.4g} {sign} {bound:g} (--fail-under)"
