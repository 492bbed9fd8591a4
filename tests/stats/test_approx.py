"""The (ε, δ) p-value and the certified bounds: validity at the boundary, power, curves."""

import math

import numpy as np
import pytest

from privet.core.claims import Claim
from privet.stats.approx import (
    approx_pvalue,
    cp_upper,
    delta_lower_bound,
    epsilon_lower_bound,
    simultaneous_bounds,
)


def test_pvalue_is_valid_on_the_boundary_of_the_null():
    # p1 = e^ε p2 + δ exactly (the worst case of H0). M = 3000 replicates: if the size at
    # α = 0.1 were 0.1, rejections ~ Bin(3000, 0.1) (mean 300, sd 16.4); we allow the size
    # up to 0.1 + 3.5 sd/M = 0.119 -- the test is conservative, so this margin can only fail
    # for an invalid p-value
    rng = np.random.default_rng(1)
    eps, d, p2, n, m = 0.5, 0.01, 0.02, 20_000, 3000
    p1 = math.exp(eps) * p2 + d
    p = approx_pvalue(rng.binomial(n, p1, m), n, rng.binomial(n, p2, m), n, eps, d)
    assert np.mean(p <= 0.1) <= 0.119
    assert np.all((p > 0) & (p <= 1))


def test_pvalue_power_and_monotonicity():
    # 3,000 vs 100 of 100,000: p1 = 0.03 > e^0.5 0.001 + 0.01 = 0.0116 by 75 standard errors
    assert approx_pvalue(3000, 100_000, 100, 100_000, 0.5, 0.01) < 1e-60
    ps = approx_pvalue(np.arange(1000, 3000, 200), 100_000, 100, 100_000, 0.5, 0.01)
    assert np.all(np.diff(ps) <= 0)
    assert approx_pvalue(0, 100, 0, 100, 0.5, 0.01) == 1.0


def test_pvalue_with_a_claim_envelope():
    c = Claim.make(rho=0.125)
    # 800 vs 100 of 100,000: p1 = 0.008 while f(p2 ≈ 0.001) ≈ 0.0057
    assert approx_pvalue(800, 100_000, 100, 100_000, envelope=c.envelope) < 0.05
    assert approx_pvalue(500, 100_000, 100, 100_000, envelope=c.envelope) > 0.5


def test_single_event_bounds():
    lo = delta_lower_bound(3000, 100_000, 100, 100_000, 0.5, 0.9)
    assert 0 < lo < 0.03 - math.exp(0.5) * 0.001
    assert epsilon_lower_bound(3000, 100_000, 100, 100_000, 0.01, 0.9) < math.log(0.02 / 0.001)
    assert epsilon_lower_bound(10, 100_000, 100, 100_000, 0.01, 0.9) == -math.inf
    assert cp_upper(0, 10**8, 0.05) == pytest.approx(-math.log(0.05) / 1e8, rel=1e-3)


def test_simultaneous_curve_stays_below_the_truth():
    # two threshold events of a known pair of distributions; 200 repetitions at 90%:
    # the curve must lie below the truth at every δ in all but about 10% of them (Bin(200,
    # 0.1) has mean 20 and sd 4.2; the union bound makes the true rate far lower), we allow 33
    rng = np.random.default_rng(2)
    p1 = np.array([0.05, 0.01])
    p2 = np.array([0.02, 0.002])
    deltas = np.array([1e-3, 5e-3, 2e-2])
    truth = np.array([max(math.log((a - d) / b) if a > d else 0.0 for a, b in zip(p1, p2))
                      for d in deltas])
    n, bad = 50_000, 0
    for _ in range(200):
        b = simultaneous_bounds(rng.binomial(n, p1), n, rng.binomial(n, p2), n, 0.9)
        bad += bool(np.any(b.epsilon_at(deltas) > truth + 1e-12))
    assert bad <= 33
    b = simultaneous_bounds(p1 * 10**7, 10**7, p2 * 10**7, 10**7, 0.9)
    assert b.epsilon_at(1e-3) > 0.95 * truth[0]
    assert b.delta_at(0.0) == pytest.approx(0.03, rel=0.05)
