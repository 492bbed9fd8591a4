"""Algorithm 2 of StatDP: thinning + Fisher's exact test, exact expectation over the thinning."""

import math

import numpy as np
import pytest
from scipy import stats

from privet.stats.hypothesis import approx_pvalue, count_filter, pvalues, thinned_fisher_pvalue


def brute(c1, c2, n1, n2, eps):
    """The definition: sum over every thinned value of the Binomial pmf times the tail."""
    k = np.arange(c1 + 1)
    w = stats.binom.pmf(k, c1, math.exp(-eps))
    return float(np.sum(w * stats.hypergeom.sf(k - 1, n1 + n2, n1, k + c2)))


@pytest.mark.parametrize("c1,c2,n1,n2,eps", [
    (5, 3, 20, 20, 0.5), (300, 100, 1000, 1000, 0.7), (40, 10, 100, 120, 0.0),
    (1000, 1000, 1000, 1000, 0.2), (7, 0, 50, 30, 1.5), (2500, 2000, 10000, 9000, 0.1),
])
def test_matches_definition(c1, c2, n1, n2, eps):
    assert thinned_fisher_pvalue(c1, c2, n1, n2, eps) == pytest.approx(
        brute(c1, c2, n1, n2, eps), rel=1e-9, abs=1e-15)


def test_monte_carlo_average_of_algorithm_2_converges_to_it():
    # Algorithm 2 averages p-values over random thinnings; the exact expectation is its limit
    rng = np.random.default_rng(0)
    c1, c2, n, eps = 420, 300, 1000, 0.2
    draws = rng.binomial(c1, math.exp(-eps), 20000)
    mc = stats.hypergeom.sf(draws - 1, 2 * n, n, draws + c2).mean()
    se = stats.hypergeom.sf(draws - 1, 2 * n, n, draws + c2).std() / math.sqrt(draws.size)
    assert abs(thinned_fisher_pvalue(c1, c2, n, n, eps) - mc) < 4 * se


def test_vectorized_and_both_directions():
    c1 = np.array([0, 10, 500, 90])
    c2 = np.array([5, 10, 100, 30])
    top, bot = pvalues(c1, c2, 1000, 1000, 0.3)
    for i in range(4):
        assert top[i] == pytest.approx(brute(int(c1[i]), int(c2[i]), 1000, 1000, 0.3), abs=1e-12)
        assert bot[i] == pytest.approx(brute(int(c2[i]), int(c1[i]), 1000, 1000, 0.3), abs=1e-12)
    assert top[0] == 1.0  # no event on D1: nothing against H0


def test_monotone_in_epsilon():
    ps = [float(thinned_fisher_pvalue(300, 150, 1000, 1000, e)) for e in np.linspace(0, 1.5, 16)]
    assert all(b >= a - 1e-12 for a, b in zip(ps, ps[1:]))
    assert ps[0] < 1e-6 and ps[-1] > 0.5


def test_size_at_the_border_stays_below_alpha():
    # H0 holds with equality: p1 = e^eps p2. The rejection rate must stay within alpha plus
    # three binomial standard errors of the simulation.
    rng = np.random.default_rng(1)
    reps, n, eps, p2, alpha = 3000, 2000, 0.5, 0.1, 0.05
    c1 = rng.binomial(n, math.exp(eps) * p2, reps)
    c2 = rng.binomial(n, p2, reps)
    rate = float(np.mean(thinned_fisher_pvalue(c1, c2, n, n, eps) < alpha))
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


def test_power_against_a_clear_violation():
    rng = np.random.default_rng(2)
    c1 = rng.binomial(5000, 0.3, 50)
    c2 = rng.binomial(5000, 0.1, 50)  # ratio 3 = e^1.1 > e^0.5
    assert np.all(thinned_fisher_pvalue(c1, c2, 5000, 5000, 0.5) < 1e-6)


def test_approximation_ranks_like_the_exact_test():
    rng = np.random.default_rng(3)
    c1 = rng.integers(200, 3000, 200)
    c2 = rng.integers(200, 3000, 200)
    exact = thinned_fisher_pvalue(c1, c2, 10000, 10000, 0.4)
    approx = approx_pvalue(c1, c2, 10000, 10000, 0.4)
    assert np.max(np.abs(exact - approx)) < 0.05
    # events whose exact p-values differ by more than 0.1 are ordered alike
    i, j = np.triu_indices(len(exact), 1)
    far = np.abs(exact[i] - exact[j]) > 0.1
    assert np.all(np.sign(exact[i] - exact[j])[far] == np.sign(approx[i] - approx[j])[far])


def test_filter_of_footnote_3():
    keep = count_filter([50, 60, 0], [49, 50, 0], 100_000, 0.0)
    assert keep.tolist() == [False, True, False]


def test_bad_counts():
    with pytest.raises(ValueError):
        thinned_fisher_pvalue(11, 0, 10, 10, 0.1)
    with pytest.raises(ValueError):
        thinned_fisher_pvalue(1, 0, 10, 10, -0.1)
