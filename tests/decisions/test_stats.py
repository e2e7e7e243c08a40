"""Interval statistics (``ecp_core.stats``) against references and their own documented rules.

- Wilson and Newcombe (method 10) agree with statsmodels to 1e-9 on thousands of counts and
  confidence levels: a deterministic grid plus Hypothesis draws. statsmodels is a test-only
  dependency, imported here and nowhere in the packages.
- Every interval holds its point estimate, stays inside its domain and widens as the confidence
  level rises; the degenerate inputs the module docstring names behave as documented.
- The cost-per-accepted-outcome ratio agrees with an independent numpy delta-method computation
  and covers the true ratio about 95 percent of the time in a seeded simulation.
"""

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from ecp_core.stats import (
    cost_per_accepted,
    critical_value,
    log_ratio_interval,
    newcombe_interval,
    wilson_interval,
)

pytestmark = [pytest.mark.unit, pytest.mark.spec("§4.4 interval-constraints")]

TOLERANCE = 1e-9
REFERENCE_EXAMPLES = 2000

levels = st.floats(min_value=0.001, max_value=0.999_999, allow_nan=False)
trial_counts = st.one_of(st.integers(1, 60), st.integers(1, 1_000_000))


@st.composite
def counts(draw, trials=trial_counts):
    """(successes, trials) with the edges (none, all) drawn often."""
    n = draw(trials)
    x = draw(st.one_of(st.integers(0, n), st.sampled_from([0, 1, n - 1, n])))
    return x, n


def close(ours, theirs, tolerance=TOLERANCE):
    return all(abs(a - float(b)) <= tolerance for a, b in zip(ours, theirs, strict=True))


# --- agreement with statsmodels -------------------------------------------------------------


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_wilson_agrees_with_statsmodels_on_every_count_up_to_80_trials(level):
    pairs = [(x, n) for n in range(1, 81) for x in range(n + 1)]
    xs, ns = np.array(pairs).T
    low, high = proportion_confint(xs, ns, alpha=1 - level, method="wilson")
    for index, (x, n) in enumerate(pairs):
        assert close(wilson_interval(x, n, level), (low[index], high[index])), (x, n, level)


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_newcombe_agrees_with_statsmodels_on_every_pair_of_counts_up_to_16_trials(level):
    sides = [(x, n) for n in range(1, 17) for x in range(n + 1)]
    pairs = [(a, b) for a in sides for b in sides]
    x1, n1, x2, n2 = np.array([(*a, *b) for a, b in pairs]).T
    low, high = confint_proportions_2indep(
        x1, n1, x2, n2, method="newcomb", compare="diff", alpha=1 - level
    )
    for index, ((xa, na), (xb, nb)) in enumerate(pairs):
        ours = newcombe_interval(xa, na, xb, nb, level)
        assert close(ours, (low[index], high[index])), (xa, na, xb, nb, level)


@settings(max_examples=REFERENCE_EXAMPLES)
@given(counts(), levels)
def test_wilson_agrees_with_statsmodels(count, level):
    x, n = count
    reference = proportion_confint(x, n, alpha=1 - level, method="wilson")
    assert close(wilson_interval(x, n, level), reference)


@settings(max_examples=REFERENCE_EXAMPLES)
@given(counts(), counts(), levels)
def test_newcombe_agrees_with_statsmodels(a, b, level):
    reference = confint_proportions_2indep(
        *a, *b, method="newcomb", compare="diff", alpha=1 - level
    )
    assert close(newcombe_interval(*a, *b, level), reference)


# --- properties -----------------------------------------------------------------------------


@given(counts(), levels)
def test_wilson_holds_the_estimate_inside_zero_to_one(count, level):
    x, n = count
    low, high = wilson_interval(x, n, level)
    assert 0.0 <= low <= x / n <= high <= 1.0
    assert (low == 0.0) == (x == 0)  # only "no successes" reaches 0
    assert (high == 1.0) == (x == n)  # only "all successes" reaches 1


@given(counts(), counts(), levels)
def test_newcombe_holds_the_difference_inside_minus_one_to_one(a, b, level):
    low, high = newcombe_interval(*a, *b, level)
    difference = a[0] / a[1] - b[0] / b[1]
    assert -1.0 <= low <= difference <= high <= 1.0


@given(counts(), counts(), levels, levels)
def test_intervals_widen_as_the_confidence_level_rises(a, b, first, second):
    lower, higher = sorted((first, second))
    slack = 1e-12
    narrow, wide = wilson_interval(*a, lower), wilson_interval(*a, higher)
    assert wide[0] <= narrow[0] + slack
    assert narrow[1] <= wide[1] + slack
    narrow, wide = newcombe_interval(*a, *b, lower), newcombe_interval(*a, *b, higher)
    assert wide[0] <= narrow[0] + slack
    assert narrow[1] <= wide[1] + slack


def test_wilson_widens_strictly_between_typical_levels():
    widths = [wilson_interval(7, 20, level) for level in (0.8, 0.9, 0.95, 0.99)]
    assert all(b[0] < a[0] and a[1] < b[1] for a, b in itertools.pairwise(widths))


costs = st.floats(min_value=0, max_value=1000, allow_nan=False, allow_infinity=False)


@st.composite
def sides(draw, min_size=2):
    """(per-run costs, accepted flags) with a positive total cost and one accepted run."""
    n = draw(st.integers(min_size, 40))
    runs = draw(st.lists(st.tuples(costs, st.booleans()), min_size=n, max_size=n))
    spent, accepted = [c for c, _ in runs], [a for _, a in runs]
    accepted[draw(st.integers(0, n - 1))] = True
    spent[draw(st.integers(0, n - 1))] += draw(st.floats(0.01, 100))
    return spent, accepted


@given(sides(), sides(), levels, levels)
def test_the_cost_ratio_interval_is_positive_holds_the_ratio_and_widens(cand, base, first, second):
    lower, higher = sorted((first, second))
    found = log_ratio_interval(cand, base, lower)
    wider = log_ratio_interval(cand, base, higher)
    assert found is not None
    assert wider is not None
    ratio, (low, high) = found
    expected = cost_per_accepted(*cand) / cost_per_accepted(*base)
    assert math.isclose(ratio, expected, rel_tol=1e-9)
    assert 0 < low <= ratio * (1 + 1e-12)
    assert ratio <= high * (1 + 1e-12)
    assert wider[1][0] <= low * (1 + 1e-12)
    assert high <= wider[1][1] * (1 + 1e-12)


def delta_method_reference(cand, base, level):
    """The same interval written independently: a gradient and numpy's covariance matrix."""

    def log_value_and_variance(side):
        data = np.array([side[0], [float(a) for a in side[1]]])
        means = data.mean(axis=1)
        gradient = np.array([1 / means[0], -1 / means[1]])
        return math.log(means[0] / means[1]), gradient @ np.cov(
            data, ddof=1
        ) @ gradient / data.shape[1]

    (log_c, var_c), (log_b, var_b) = log_value_and_variance(cand), log_value_and_variance(base)
    z = math.sqrt(2) * float(_erfinv(level))
    centre, spread = log_c - log_b, z * math.sqrt(max(var_c + var_b, 0.0))
    return centre, (centre - spread, centre + spread)


def _erfinv(y):
    """The inverse error function by Newton's method on math.erf (no shared code with stats)."""
    x = 0.0
    for _ in range(100):
        step = (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) < 1e-15:
            break
    return x


@given(sides(), sides(), st.floats(0.5, 0.999))
def test_the_cost_ratio_agrees_with_an_independent_delta_method(cand, base, level):
    ratio, (low, high) = log_ratio_interval(cand, base, level)
    centre, (ref_low, ref_high) = delta_method_reference(cand, base, level)
    # On the log scale, where the interval is symmetric; a variance that is zero up to rounding
    # becomes a spread of about sqrt(1e-16), hence the absolute tolerance.
    assert math.isclose(math.log(ratio), centre, abs_tol=1e-9)
    assert math.isclose(math.log(low), ref_low, abs_tol=1e-7)
    assert math.isclose(math.log(high), ref_high, abs_tol=1e-7)


def test_the_cost_ratio_covers_the_true_ratio_about_95_percent_of_the_time():
    # Costs are gamma distributed, failures cost more (so cost and acceptance correlate), and
    # the true cost per accepted outcome is E[cost] / P(accepted) on each side.
    rng = random.Random(20261101)
    runs, pairs, level = 150, 400, 0.95

    def side(p, shape, scale, failure_extra):
        accepted = [rng.random() < p for _ in range(runs)]
        spent = [rng.gammavariate(shape, scale) + (0 if ok else failure_extra) for ok in accepted]
        truth = (shape * scale + (1 - p) * failure_extra) / p
        return (spent, accepted), truth

    covered = 0
    for _ in range(pairs):
        cand, cand_truth = side(0.7, 2.0, 0.05, 0.08)
        base, base_truth = side(0.6, 3.0, 0.04, 0.02)
        found = log_ratio_interval(cand, base, level)
        assert found is not None
        low, high = found[1]
        covered += low <= cand_truth / base_truth <= high
    assert 0.91 <= covered / pairs <= 0.98


# --- degenerate inputs, as documented ---------------------------------------------------------


@pytest.mark.parametrize("level", [0.5, 0.95, 0.999])
def test_zero_trials_give_the_whole_domain(level):
    assert wilson_interval(0, 0, level) == (0.0, 1.0)
    assert newcombe_interval(0, 0, 3, 5, level) == (-1.0, 1.0)
    assert newcombe_interval(3, 5, 0, 0, level) == (-1.0, 1.0)
    assert newcombe_interval(0, 0, 0, 0, level) == (-1.0, 1.0)


@given(st.integers(1, 10_000), levels)
def test_all_or_no_successes_touch_the_bound_they_must(n, level):
    none_low, none_high = wilson_interval(0, n, level)
    all_low, all_high = wilson_interval(n, n, level)
    assert none_low == 0.0
    assert 0.0 < none_high < 1.0
    assert all_high == 1.0
    assert 0.0 < all_low < 1.0
    assert math.isclose(none_high, 1 - all_low, abs_tol=1e-12)  # the two are mirror images


@pytest.mark.parametrize(("successes", "trials"), [(-1, 5), (6, 5), (0, -1), (1, 0)])
def test_impossible_counts_are_refused(successes, trials):
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(successes, trials, 0.95)


ONE_RUN = ([1.0], [True])
TWO_RUNS = ([1.0, 2.0], [True, False])


@pytest.mark.parametrize(
    ("candidate", "baseline", "why"),
    [
        (ONE_RUN, TWO_RUNS, "one candidate run"),
        (TWO_RUNS, ONE_RUN, "one baseline run"),
        (([1.0, 2.0], [False, False]), TWO_RUNS, "no accepted candidate outcome"),
        (TWO_RUNS, ([1.0, 2.0], [False, False]), "no accepted baseline outcome"),
        (TWO_RUNS, ([0.0, 0.0], [True, True]), "zero baseline cost"),
        (([], []), TWO_RUNS, "no candidate runs"),
    ],
)
def test_an_undefined_cost_ratio_is_none(candidate, baseline, why):
    assert log_ratio_interval(candidate, baseline, 0.95) is None, why


def test_a_candidate_that_cost_nothing_has_ratio_zero_and_interval_zero():
    assert log_ratio_interval(([0.0, 0.0, 0.0], [True, False, True]), TWO_RUNS, 0.95) == (
        0.0,
        (0.0, 0.0),
    )


def test_cost_per_accepted_is_none_without_an_accepted_outcome():
    assert cost_per_accepted([1.0, 2.0], [False, False]) is None
    assert cost_per_accepted([1.0, 2.0], [True, False]) == 3.0


@pytest.mark.parametrize("level", [0.0, 1.0, -0.1, 1.5, float("nan"), float("inf")])
def test_the_critical_value_refuses_levels_outside_zero_to_one(level):
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        critical_value(level)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        wilson_interval(1, 2, level)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        log_ratio_interval(TWO_RUNS, TWO_RUNS, level)


def test_the_critical_value_is_the_two_sided_normal_quantile():
    assert math.isclose(critical_value(0.95), 1.959963984540054, abs_tol=1e-12)
    assert math.isclose(critical_value(0.99), 2.5758293035489004, abs_tol=1e-12)
    assert math.isclose(critical_value(0.6826894921370859), 1.0, abs_tol=1e-9)


def test_the_critical_value_answers_every_level_strictly_inside_zero_to_one():
    level = 1 - 2**-53  # the largest float below 1
    assert math.isclose(critical_value(level), 8.292361075813597, rel_tol=1e-12)  # scipy isf
