"""Exact enumeration of the discrete library mechanisms (WMC and FAIER)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from scipy.stats import binom

import privet.mechanisms as lib

from ._helpers import output_keys

DISCRETE = [n for n in lib.names() if n.split(".")[0] in ("wmc", "faier")]
# Inputs small enough for exact (Fraction) enumeration in well under a second each.
SMALL = {
    "wmc.randomized_response": [0, 1, 1],
    "wmc.rr_count": [0, 1, 1, 0],
    "wmc.geometric_above_threshold": [2, 0, 1],
    "faier.truncated_geometric": [1, 2],
    "faier.discrete_noisy_max": [0, 1, 1],
    "faier.discrete_above_threshold": [1, 1, 2],
}
N_SAMPLES = 100_000
ALPHA = 1e-6  # total false-alarm budget of the Sampler-vs-Enumerate comparison


def test_the_discrete_mechanisms_are_the_wmc_and_faier_ones():
    assert DISCRETE == list(SMALL)


@pytest.mark.parametrize("name", DISCRETE)
def test_exact_probabilities_sum_to_one(name):
    dist = lib.get(name).distribution(SMALL[name], exact=True)
    assert dist.exact and all(isinstance(p, Fraction) and p > 0 for p in dist.probs)
    assert dist.total() == 1


@pytest.mark.parametrize("name", DISCRETE)
def test_enumeration_agrees_with_sampling(name):
    """Sampler frequencies lie in the exact binomial acceptance interval of every cell.

    Each cell's count is Binomial(n, p) with p from Enumerate. We accept it inside the
    central interval of probability 1 - ALPHA / cells (Bonferroni over the cells of all six
    mechanisms, at most 6 * 64), so the whole test fails by chance with probability at most
    ALPHA. An output that sampling produces but enumeration does not is always a failure.
    """
    m = lib.get(name)
    x = lib.example_input(name)
    dist = m.distribution(x)
    assert dist.total() == pytest.approx(1.0, abs=1e-12)
    exact = dist.as_dict()
    assert len(exact) <= 64
    keys, counts = output_keys(m.sample(x, N_SAMPLES, seed=2024))
    observed = dict(zip(keys, counts.tolist()))
    assert set(observed) <= set(exact), set(observed) - set(exact)
    level = ALPHA / (6 * 64)
    for y, p in exact.items():
        lo, hi = binom.ppf(level / 2, N_SAMPLES, p), binom.isf(level / 2, N_SAMPLES, p)
        assert lo <= observed.get(y, 0) <= hi, (y, p, observed.get(y, 0))


def test_truncated_half_geometric_is_faier_fig_1a():
    m = lib.get("faier.truncated_geometric")
    table = {
        0: (Fraction(2, 3), Fraction(1, 6), Fraction(1, 6)),
        1: (Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)),
        2: (Fraction(1, 6), Fraction(1, 6), Fraction(2, 3)),
    }
    for x, row in table.items():
        dist = m.distribution([x], exact=True)
        assert tuple(dist.prob([y]) for y in range(3)) == row
    # the ratio of neighboring rows is at most 2: ln 2-DP (Example 1)
    worst = max(table[i][j] / table[i2][j] for i in range(3) for i2 in range(3)
                if abs(i - i2) == 1 for j in range(3))
    assert worst == 2 and math.log(worst) == pytest.approx(m.true_epsilon)


def test_randomized_response_worst_case_is_four():
    """WMC Sec. IV: for n = 2 and lam = 0.2, e^eps = 4 at ([0,0], [1,0], [0,0])."""
    m = lib.get("wmc.randomized_response")
    p = m.distribution([0, 0], exact=True)
    q = m.distribution([1, 0], exact=True)
    assert p.prob([0, 0]) / q.prob([0, 0]) == 4
    counts = lib.get("wmc.rr_count")
    # RRcount^2 with alpha = 1 (Sec. III): the count is within 1 of the truth with
    # probability 1 - lam^2 = 0.96 on [0, 0], and always on [1, 0]; 0.96 is the tight 1 - beta
    d00 = counts.distribution([0, 0], exact=True)
    assert d00.prob(0) + d00.prob(1) == Fraction(96, 100)
    d10 = counts.distribution([1, 0], exact=True)
    assert d10.total() == 1 and d10.prob(0) + d10.prob(1) + d10.prob(2) == 1


NOISY_MAX_PAIR = ([1, 1, 1, 1, 1], [0, 2, 2, 2, 2])


def test_discrete_noisy_max_on_five_queries_is_ln_288_over_73():
    """FAIER Sec. 7.1: the exact epsilon of Algorithm 2 on 5 queries is 1.372 (= ln 288/73).

    The worst pair of {0,1,2}^5 under all_differ(1) is 'one below rest above' with output 0
    (found by the exhaustive scan in the slow test below). Here: that pair, both orders,
    every output, in float enumeration (1 s each); the Fraction check is the slow test.
    """
    m = lib.get("faier.discrete_noisy_max")
    a, b = (m.distribution(x).as_dict() for x in NOISY_MAX_PAIR)
    ratios = [math.log(a[y] / b[y]) for y in a] + [math.log(b[y] / a[y]) for y in b]
    assert max(ratios) == pytest.approx(math.log(288 / 73), rel=1e-12)
    assert a[0] / b[0] == pytest.approx(288 / 73, rel=1e-12)
    assert m.true_epsilon == pytest.approx(math.log(288 / 73))


@pytest.mark.slow
def test_discrete_noisy_max_exact_fraction_and_exhaustive_scan():
    m = lib.get("faier.discrete_noisy_max")
    a, b = (m.distribution(x, exact=True) for x in NOISY_MAX_PAIR)
    assert a.prob(0) / b.prob(0) == Fraction(288, 73)
    inputs = list(itertools.product(range(3), repeat=5))
    dists = {x: m.distribution(list(x)).as_dict() for x in inputs}
    best = 0.0
    for x in inputs:
        for x2 in inputs:
            if x != x2 and max(abs(u - v) for u, v in zip(x, x2)) <= 1:
                best = max(best, max(math.log(p / dists[x2][y]) for y, p in dists[x].items()))
    assert best == pytest.approx(math.log(288 / 73), rel=1e-12)


def test_discrete_above_threshold_matches_faier_closed_form():
    """FAIER Sec. 6.3: for t = 2, d = 1^n 2 and d' = 2^n 1, the probabilities of
    bottom^n top are (3/20)(1/3)^n(5/6) + (4/5)(2/3)^n(2/3) and
    (3/20)(1/6)^n(2/3) + (4/5)(1/3)^n(1/3), exactly."""
    m = lib.get("faier.discrete_above_threshold")
    for n in (1, 2, 3):
        d = [1] * n + [2]
        d2 = [2] * n + [1]
        y = [0] * n + [1]
        p = m.distribution(d, exact=True).prob(y)
        q = m.distribution(d2, exact=True).prob(y)
        f = Fraction
        assert p == f(3, 20) * f(1, 3) ** n * f(5, 6) + f(4, 5) * f(2, 3) ** n * f(2, 3)
        assert q == f(3, 20) * f(1, 6) ** n * f(2, 3) + f(4, 5) * f(1, 3) ** n * f(1, 3)
        assert p / q > f(16, 11) * 2**n


def test_geometric_above_threshold_uses_the_truncated_mechanism():
    """Algorithm 5 with k = 2, T = 1 and lam = 1/2 on one entry: the index is 0 when
    clip(x + Z, 0, 2) >= clip(1 + Z', 0, 2), else 1 (none)."""
    m = lib.get("wmc.geometric_above_threshold")
    rows = {0: (Fraction(2, 3), Fraction(1, 6), Fraction(1, 6)),
            1: (Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)),
            2: (Fraction(1, 6), Fraction(1, 6), Fraction(2, 3))}
    for x in range(3):
        want = sum(rows[x][v] * rows[1][t] for v in range(3) for t in range(3) if v >= t)
        assert m.distribution([x], exact=True).prob(0) == want
