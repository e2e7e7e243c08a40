"""Tests of counts against expected proportions, in the standard library only (ADR 0089).

- :func:`chi_square_sf`: the chi-square distribution's survival function (the regularized upper
  incomplete gamma function, by series or continued fraction).
- :func:`goodness_of_fit`: Pearson's chi-square test of counts against proportions.
- :func:`binomial_two_sided`: the exact two-sided binomial test (the p-value sums every outcome
  no more likely than the one observed, with scipy's relative tolerance of 1e-7).
- :func:`independence`: Pearson's chi-square test of independence of a table's rows and columns
  (no continuity correction); rows or columns that are all zero are left out.
"""

import math
from collections.abc import Sequence

_EPSILON = 1e-16
_TINY = 1e-300
_MAX_ITERATIONS = 100_000
_RELATIVE_TOLERANCE = 1 + 1e-7
"""Outcomes this close in probability to the observed one count as equally likely (scipy's)."""


def _lower_series(a: float, x: float) -> float:
    """P(a, x) by its power series (converges fast for x < a + 1)."""
    term = total = 1.0 / a
    denominator = a
    for _ in range(_MAX_ITERATIONS):
        denominator += 1
        term *= x / denominator
        total += term
        if abs(term) < abs(total) * _EPSILON:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _upper_fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction, modified Lentz (converges fast for x >= a + 1)."""
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, _MAX_ITERATIONS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPSILON:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi_square_sf(statistic: float, df: int) -> float:
    """``P(X >= statistic)`` for X chi-square with ``df`` degrees of freedom (df >= 1)."""
    if df < 1:
        msg = f"degrees of freedom must be at least 1, not {df}"
        raise ValueError(msg)
    a, x = df / 2, statistic / 2
    if x <= 0:  # a subnormal statistic halves to zero
        return 1.0
    if x < a + 1:
        return max(0.0, 1.0 - _lower_series(a, x))
    return min(1.0, _upper_fraction(a, x))


def goodness_of_fit(observed: Sequence[int], proportions: Sequence[float]) -> tuple[float, float]:
    """Pearson's statistic and p-value of ``observed`` against ``proportions`` (summing to 1)."""
    total = sum(observed)
    statistic = sum(
        (o - total * p) ** 2 / (total * p) for o, p in zip(observed, proportions, strict=True)
    )
    return statistic, chi_square_sf(statistic, len(observed) - 1)


def _log_binomial_pmf(k: int, n: int, p: float) -> float:
    if p in (0.0, 1.0):
        return 0.0 if k == n * p else -math.inf
    log_choose = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return log_choose + k * math.log(p) + (n - k) * math.log1p(-p)


def binomial_two_sided(successes: int, trials: int, p: float) -> float:
    """The exact two-sided p-value of ``successes`` in ``trials`` at probability ``p``."""
    if trials == 0:
        return 1.0
    observed = _log_binomial_pmf(successes, trials, p)
    bound = observed + math.log(_RELATIVE_TOLERANCE)
    total = math.fsum(
        math.exp(logged)
        for k in range(trials + 1)
        if (logged := _log_binomial_pmf(k, trials, p)) <= bound
    )
    return min(1.0, total)


def independence(table: Sequence[Sequence[int]]) -> tuple[float, int, float] | None:
    """Pearson's statistic, degrees of freedom and p-value for ``table``'s rows x columns.

    None when fewer than two rows or two columns have any count.
    """
    rows = [list(row) for row in table if sum(row)]
    columns = [j for j in range(len(rows[0]) if rows else 0) if any(row[j] for row in rows)]
    if len(rows) < 2 or len(columns) < 2:  # noqa: PLR2004
        return None
    total = sum(sum(row) for row in rows)
    column_sums = {j: sum(row[j] for row in rows) for j in columns}
    statistic = 0.0
    for row in rows:
        row_sum = sum(row)
        for j in columns:
            expected = row_sum * column_sums[j] / total
            statistic += (row[j] - expected) ** 2 / expected
    df = (len(rows) - 1) * (len(columns) - 1)
    return statistic, df, chi_square_sf(statistic, df)


__all__ = ["binomial_two_sided", "chi_square_sf", "goodness_of_fit", "independence"]
