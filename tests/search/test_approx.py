"""search on (ε, δ) claims: certified δ at ε, ε at δ and the lower curve ε(δ)."""

import numpy as np

import privet
import privet.mechanisms as lib
from privet.stats.profiles import analytic_sigma, gaussian_epsilon

SMALL = dict(n_select=20_000, n_final=100_000, n_max=3_000_000, seed=1)


def test_certified_delta_above_the_claim_for_a_broken_gaussian():
    r = privet.search(lib.get("gaussian.wrong_neighbors"), **SMALL)
    # true δ(0.5) = 0.034 against a claimed 1e-3 (sum calibrated for Δ = 1, replace-one Δ = 2)
    assert r.violates and 1e-3 < r.delta_lower < 0.034
    assert r.witness is not None and r.witness.counts[0] > r.witness.counts[1]


def test_the_certified_curve_of_the_sound_gaussian_stays_below_the_truth():
    r = privet.search(lib.get("gaussian.analytic"), **SMALL)
    mu = 1 / analytic_sigma(1.0, 1e-5)
    truth = np.array([gaussian_epsilon(d, mu) for d in r.curve_delta])
    assert not r.violates
    assert np.all(np.asarray(r.curve_epsilon) <= truth)
    assert r.epsilon_lower > 0.5          # ε(1e-5) = 1 exactly; 3e6 runs certify more than half


def test_white_box_exact_pair_for_enumerable_noise():
    r = privet.search(lib.get("gaussian.discrete"), n_select=20_000, seed=0)
    assert r.confidence == 1.0 and r.method.startswith("exact enumeration")
    assert 0 < r.delta_lower <= 1e-5        # the exact δ(1) of one pair, ≤ the claim
