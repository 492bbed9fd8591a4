"""detect on (ε, δ) and zCDP claims: the valid approximate-DP test over tail events."""

import math

import pytest

import privet
import privet.mechanisms as lib
from privet.core.errors import ParameterError

SMALL = dict(n_select=20_000, n_final=100_000, n_max=2_000_000, seed=0)


def test_a_broken_gaussian_is_caught_with_its_counts():
    # mean of [-1, 1] values with sensitivity 1/n: true δ(1) = 0.0104 against a claimed 1e-5
    r = privet.detect(lib.get("gaussian.mean_sens"), **SMALL)
    assert r.violation and r.p_value < 1e-10
    cx = r.counterexample
    assert cx.counts[0] > cx.counts[1] and cx.n[1] >= cx.n[0] >= 100_000
    assert r.test_delta == pytest.approx(1e-5) and r.test_epsilon == 1.0
    assert r.claim == "(ε, δ) = (1, 1e-05)" and "δ" not in r.verdict
    # the witness really shows c1/n1 above e^ε c2/n2 + δ
    assert cx.counts[0] / cx.n[0] > math.e * cx.counts[1] / cx.n[1] + 1e-5


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
