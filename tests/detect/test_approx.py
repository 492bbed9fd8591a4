"""detect on (ε, δ) and zCDP claims: the valid approximate-DP test over tail events."""

import math

import numpy as np
import pytest
from scipy.stats import norm

import privet
import privet.mechanisms as lib
from privet.core.errors import ParameterError
from privet.core.noise import Sampler
from privet.detect.approx import affine_gaussian
from privet.mechanisms import gaussian as gauss

SMALL = dict(n_select=20_000, n_final=100_000, n_max=2_000_000, seed=0)


def black_box(name: str) -> privet.Mechanism:
    """The library mechanism behind a vectorized black box: detect/search must sample it."""
    m = lib.get(name)

    def run(a, n, rng):
        return m.run(Sampler(rng, n), a)

    claim = dict(rho=m.rho) if m.rho is not None else dict(epsilon=m.epsilon, delta=m.delta)
    return privet.from_vectorized(run, name=f"{name} (black box)", neighbors=m.neighbors,
                                  domain=m.domain, output=m.output, **claim)


def test_a_broken_gaussian_is_caught_with_its_counts():
    # mean of [-1, 1] values with sensitivity 1/n: true δ(1) = 0.0104 against a claimed 1e-5
    r = privet.detect(black_box("gaussian.mean_sens"), **SMALL)
    assert r.violation and r.p_value < 1e-10
    cx = r.counterexample
    assert cx.counts[0] > cx.counts[1] and cx.n[1] >= cx.n[0] >= 100_000
    assert r.test_delta == pytest.approx(1e-5) and r.test_epsilon == 1.0
    assert r.claim == "(ε, δ) = (1, 1e-05)" and "δ" not in r.verdict
    # the witness really shows c1/n1 above e^ε c2/n2 + δ
    assert cx.counts[0] / cx.n[0] > math.e * cx.counts[1] / cx.n[1] + 1e-5


def test_white_box_affine_gaussian_probabilities_are_exact():
    # the same mechanism written on the noise API: its output is affine in one Gaussian
    # draw, so the event's probabilities are normal tails, checked here against scipy
    m = lib.get("gaussian.mean_sens")
    r = privet.detect(m, seed=0)
    cx = r.counterexample
    assert r.violation and cx.exact and r.p_value == 0.0 and "exact" in r.verdict
    sd = gauss.MEAN_SIGMA
    tail = norm.sf if cx.event_spec["side"] == ">" else norm.cdf
    t = cx.event_spec["threshold"]
    want = [tail(t, loc=np.mean(d), scale=sd) for d in (cx.d1, cx.d2)]
    assert cx.probabilities == pytest.approx(want, rel=1e-9)
    assert want[0] > math.e * want[1] + 1e-5


def test_white_box_finds_the_classic_sigma_violation_at_its_true_size():
    # σ = sqrt(2 ln(1.25/δ))/ε at ε = 10: true δ(10) = 3.36e-3 (Balle & Wang Thm 8) against
    # 1e-3. The family's thresholds are dense (800), so its best event's δ lies within 1% of
    # the truth and never above it (any event's p1 − e^ε p2 is at most δ(ε)).
    m = lib.get("gaussian.classic_eps10")
    r = privet.detect(m, seed=0)
    excess = r.counterexample.details["excess"] + 1e-3
    assert r.violation and 0.99 * m.true_delta <= excess <= m.true_delta * (1 + 1e-9)


def test_white_box_sees_a_record_count_leaked_through_the_noise_scale():
    # a DP-SGD-like step that divides the noisy clipped sum by the actual record count n:
    # under add/remove n is private and the noise's scale σ/n reveals it, a variance change
    # no shift-only analysis sees (δ(4.38) ≥ 4e-5 on n = 5 vs 6 against a claimed 1e-5)
    @privet.mechanism(epsilon=gauss.DPSGD_EPS, delta=1e-5, neighbors=privet.neighbors.add_remove(),
                      domain=gauss.DPSGD_DATA, output=privet.Output.numeric(length=2))
    def per_count(noise, x):
        g = gauss._logistic_grads(np.asarray(x, dtype=float))
        g = g / np.maximum(1.0, np.linalg.norm(g, axis=1, keepdims=True))
        return gauss.THETA0 - (g.sum(axis=0) + noise.gaussian(1.0, (2,))) / len(x)

    assert privet.detect(per_count, seed=0).violation
    assert not privet.detect(lib.get("gaussian.dpsgd"), seed=0).violation   # divides by L


def test_only_affine_gaussian_outputs_take_the_white_box():
    g = affine_gaussian(lib.get("gaussian.dpsgd"), np.array([1.0, -2.0, 3.0]), {})
    assert g.b.shape == (2, 2) and np.allclose(g.b, -np.eye(2) / gauss.DPSGD_LOT)
    assert affine_gaussian(lib.get("gaussian.noisy_max"), np.array([1, 2, 3, 4]), {}) is None
    assert affine_gaussian(lib.get("statdp.noisy_max_v1a"), np.ones(5), {}) is None


def test_the_sound_analytic_gaussian_passes():
    r = privet.detect(lib.get("gaussian.analytic"), **SMALL)
    assert not r.violation and r.verdict == "no violation found"


def test_a_zcdp_claim_is_tested_along_its_whole_profile():
    assert not privet.detect(lib.get("gaussian.zcdp"), **SMALL).violation

    @privet.mechanism(rho=0.125, domain=privet.Domain(length=1))
    def too_little_noise(noise, x, *, rho):          # σ = 0.5 is ρ = 2 zCDP, not 0.125
        return x[0] + noise.gaussian(0.5)

    r = privet.detect(too_little_noise, **SMALL)
    assert r.violation and "ρ = 0.125" in r.details["null"]


def test_a_test_delta_on_a_pure_claim_and_bad_deltas():
    m = lib.get("gaussian.analytic").replace(delta=0.0)     # now claims pure ε = 1: false
    assert privet.detect(m, epsilon=1.0, delta=0.05, **SMALL).verdict == "no violation found"
    with pytest.raises(ParameterError, match="test delta"):
        privet.detect(m, delta=1.5)
    with pytest.raises(ParameterError, match="test_epsilons"):
        privet.detect(lib.get("gaussian.analytic"), test_epsilons=[1, 2])
