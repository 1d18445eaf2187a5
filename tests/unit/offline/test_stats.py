"""Statistics of reports and comparisons against independently computed references.

The reference p-values and Wilson intervals below were computed with SciPy 1.17.1
(``scipy.stats.binomtest(k, n, p).pvalue`` and
``binomtest(k, n).proportion_ci(0.95, method="wilson")``), outside this project;
they are hard-coded so that the test suite needs no SciPy.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from collector.offline.stats import RunningStats, binomial_test, wilson_interval

# (successes, trials, p) -> (p-value, Wilson low, Wilson high), from SciPy 1.17.1.
SCIPY = {
    (19, 19, 0.5): (3.814697265625e-06, 0.8318207759473838, 1.0),
    (0, 19, 0.5): (3.814697265625e-06, 0.0, 0.16817922405261626),
    (10, 20, 0.5): (1.0, 0.2992980081982124, 0.7007019918017876),
    (7, 20, 0.5): (0.26317596435546875, 0.1811918241010821, 0.5671457233147637),
    (3, 10, 0.3): (1.0, 0.10779126740630102, 0.6032218525388546),
    (60, 100, 0.5): (0.05688793364098089, 0.5020025867910618, 0.6905987135675411),
    (1, 1, 0.5): (1.0, 0.20654931437723745, 1.0),
    (0, 1, 0.5): (1.0, 0.0, 0.7934506856227626),
    (30, 1000, 0.02): (0.030933066833002756, 0.021093738828834696, 0.042503414147587126),
    (412, 800, 0.5): (0.41613552853961644, 0.4803790919344114, 0.5494775417794183),
    (5, 12, 0.25): (0.18932002782821655, 0.1932603136587566, 0.6804886874504502),
}


@pytest.mark.parametrize(("k", "n", "p"), list(SCIPY))
def test_binomial_test_matches_scipy(k: int, n: int, p: float) -> None:
    assert binomial_test(k, n, p) == pytest.approx(SCIPY[(k, n, p)][0], rel=1e-9)


@pytest.mark.parametrize(("k", "n", "p"), list(SCIPY))
def test_wilson_interval_matches_scipy(k: int, n: int, p: float) -> None:
    interval = wilson_interval(k, n)
    assert interval is not None
    assert interval == pytest.approx(SCIPY[(k, n, p)][1:], rel=1e-9, abs=1e-12)


def seed_002_wilson(preferences: list[str], which: str, z: float = 1.96) -> tuple[float, float]:
    """The function of shared/seeds/002, transcribed, as the independent reference."""
    total = preferences.count("a") + preferences.count("b")
    n_s = preferences.count(which)
    p_hat = n_s / total
    denominator = 1 + (z**2) / total
    adjustment = (z / denominator) * math.sqrt(
        p_hat * (1 - p_hat) / total + (z**2) / (4 * total * total)
    )
    center = (p_hat + (z**2) / (2 * total)) / denominator
    return min(max(center - adjustment, 0.0), 1.0), min(max(center + adjustment, 0.0), 1.0)


def test_seed_002_example_19_of_19() -> None:
    # The seed: 19 preferences for A, none for B, one tie out of 20 pairs.
    preferences = ["a"] * 19 + [None]  # type: ignore[list-item]
    interval = wilson_interval(19, 19, z=1.96)
    assert interval == pytest.approx(seed_002_wilson(preferences, "a"), rel=1e-12)
    assert f"{interval[0]:.2%} {interval[1]:.2%}" == "83.18% 100.00%"  # type: ignore[index]
    assert wilson_interval(0, 19, z=1.96) == pytest.approx(seed_002_wilson(preferences, "b"))
    assert f"{binomial_test(19, 19):.1e}" == "3.8e-06"


def test_seed_002_function_agrees_on_unbalanced_preferences() -> None:
    rng = random.Random(2)
    preferences = [rng.choice("aab") for _ in range(57)]
    a, b = preferences.count("a"), preferences.count("b")
    assert wilson_interval(a, a + b, z=1.96) == pytest.approx(seed_002_wilson(preferences, "a"))


def test_degenerate_inputs() -> None:
    assert wilson_interval(0, 0) is None
    assert binomial_test(0, 0) == 1.0
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(3, 2)
    with pytest.raises(ValueError, match="successes"):
        binomial_test(-1, 2)
    with pytest.raises(ValueError, match="p must be"):
        binomial_test(1, 2, p=1.0)


def test_binomial_test_on_large_samples_matches_scipy() -> None:
    # SciPy 1.17.1 references; probabilities near 1e-300 are summed in log space.
    assert binomial_test(700, 1000) == pytest.approx(1.7665678007949568e-37, rel=1e-9)
    assert binomial_test(5200, 10000) == pytest.approx(6.593515598672343e-05, rel=1e-9)


def test_running_stats_match_the_statistics_module() -> None:
    rng = random.Random(7)
    values = [rng.uniform(-3, 10) for _ in range(1001)]
    stats = RunningStats()
    for value in values:
        stats.add(value)
    assert stats.count == len(values)
    assert stats.mean == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert stats.std == pytest.approx(statistics.stdev(values), rel=1e-10)
    assert (stats.minimum, stats.maximum) == (min(values), max(values))


def test_merged_running_stats_equal_one_pass() -> None:
    rng = random.Random(11)
    values = [rng.gauss(1e6, 0.5) for _ in range(500)]  # large mean: naive sums would lose it
    whole, left, right = RunningStats(), RunningStats(), RunningStats()
    for index, value in enumerate(values):
        whole.add(value)
        (left if index % 3 else right).add(value)
    left.merge(right)
    left.merge(RunningStats())
    assert left.count == whole.count
    assert left.mean == pytest.approx(whole.mean, rel=1e-14)
    assert left.std == pytest.approx(whole.std, rel=1e-9)
    assert left.std == pytest.approx(statistics.stdev(values), rel=1e-6)
    assert (left.minimum, left.maximum) == (whole.minimum, whole.maximum)


def test_std_needs_two_values() -> None:
    stats = RunningStats()
    assert stats.std is None
    stats.add(4.0)
    assert stats.std is None and stats.mean == 4.0
    stats.add(4.0)
    assert stats.std == 0.0
