"""Small, exact statistics for reports and comparisons; pure Python, no SciPy at runtime.

- ``RunningStats``: count, mean, standard deviation, min and max in constant
  memory (Welford's update), mergeable across workers (Chan et al.'s pairwise
  combination), so a replay of any length keeps one small record per metric.
- ``wilson_interval``: the Wilson score interval of a binomial proportion, the
  formula of seed 002 (LangChain's pairwise-comparison guide), clamped to [0, 1].
- ``binomial_test``: the two-sided exact binomial test p-value, defined as SciPy's
  ``binomtest(k, n, p).pvalue`` is (sum of the probabilities of every outcome no
  more likely than the observed one), so results match SciPy's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z_95 = 1.959963984540054  # the 97.5 % standard normal quantile: a two-sided 95 % interval
_RELATIVE_ERROR = 1 + 1e-7  # SciPy's tolerance for "as likely as the observed outcome"


@dataclass(slots=True)
class RunningStats:
    """Streaming mean / variance / extremes of a series of floats (Welford)."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0  # sum of squared deviations from the running mean
    minimum: float = math.inf
    maximum: float = -math.inf

    def add(self, value: float) -> None:
        """Account for one value; O(1) time and memory."""
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (value - self.mean)
        self.minimum = min(self.minimum, value)
        self.maximum = max(self.maximum, value)

    def merge(self, other: RunningStats) -> None:
        """Fold ``other`` in, as if its values had been added here (parallel workers)."""
        if other.count == 0:
            return
        total = self.count + other.count
        delta = other.mean - self.mean
        self.mean += delta * other.count / total
        self.m2 += other.m2 + delta * delta * self.count * other.count / total
        self.count = total
        self.minimum = min(self.minimum, other.minimum)
        self.maximum = max(self.maximum, other.maximum)

    @property
    def std(self) -> float | None:
        """Sample standard deviation (n - 1 denominator); None below two values."""
        if self.count < 2:
            return None
        return math.sqrt(max(self.m2, 0.0) / (self.count - 1))


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval for ``successes`` out of ``trials``; None when trials is 0.

    With ``z = 1.96`` this is seed 002's ``wilson_score_interval`` (19 of 19 gives
    [0.8318, 1.0]). The default ``z`` is the exact 95 % quantile (1.95996…).
    """
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in [0, {trials}], got {successes}")
    p_hat = successes / trials
    denominator = 1 + z * z / trials
    centre = (p_hat + z * z / (2 * trials)) / denominator
    spread = (z / denominator) * math.sqrt(
        p_hat * (1 - p_hat) / trials + z * z / (4 * trials * trials)
    )
    return max(centre - spread, 0.0), min(centre + spread, 1.0)


def binomial_test(successes: int, trials: int, p: float = 0.5) -> float:
    """Two-sided exact binomial test p-value of ``successes`` in ``trials`` under ``p``.

    Sums the probabilities of all outcomes whose probability does not exceed the
    observed one's (times 1 + 1e-7, as SciPy does). 1.0 when ``trials`` is 0.
    """
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in [0, {trials}], got {successes}")
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if trials == 0:
        return 1.0
    limit = _log_pmf(successes, trials, p) + math.log(_RELATIVE_ERROR)
    logs = [_log_pmf(k, trials, p) for k in range(trials + 1)]
    tail = [value for value in logs if value <= limit]
    return min(1.0, _sum_exp(tail))


def _log_pmf(k: int, n: int, p: float) -> float:
    log_comb = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return log_comb + k * math.log(p) + (n - k) * math.log1p(-p)


def _sum_exp(logs: list[float]) -> float:
    # Factor out the largest term so tiny probabilities (1e-300) do not underflow
    # to 0 before they are added; fsum keeps the sum exact to the last bit.
    if not logs:
        return 0.0
    top = max(logs)
    return math.exp(top) * math.fsum(math.exp(value - top) for value in logs)
