"""The exact privacy profile: the discrete Gaussian against an independent mpmath sum,
Rényi/zCDP values, and exact checks of (ε, δ) and zCDP claims."""

import math

import numpy as np
import pytest

import privet
import privet.mechanisms as lib

mpmath = pytest.importorskip("mpmath")


def test_discrete_gaussian_profile_matches_mpmath_to_12_digits():
    # independent: N_Z(0, 14) normalized over |k| <= 400 in 50-digit arithmetic, the
    # hockey-stick divergence of a shift by 1 summed term by term
    mpmath.mp.dps = 50
    eps = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]
    r = privet.exact.profile(lib.get("gaussian.discrete"), epsilons=eps)
    s2 = mpmath.mpf(14)
    z = mpmath.fsum(mpmath.exp(-mpmath.mpf(k) ** 2 / (2 * s2)) for k in range(-400, 401))

    def p(k):
        return mpmath.exp(-mpmath.mpf(k) ** 2 / (2 * s2)) / z

    for e, d in zip(r.epsilons, r.deltas):
        ref = mpmath.fsum(max(mpmath.mpf(0), p(k) - mpmath.exp(e) * p(k - 1))
                          for k in range(-400, 402))
        assert abs(d - float(ref)) <= 1e-12 * float(ref)
    # the claim (1, 1e-5) is checked exactly: CKS20 Thm 7 gives δ(1) = 9.956e-6
    assert r.verified is True and r.check.startswith("verified")
    # Rényi divergence of N_Z shifted by 1 is α/(2σ²) (CKS20 Prop. 5): ρ = 1/28
    assert r.rho == pytest.approx(1 / 28, rel=1e-9)
    assert r.renyi["2"] == pytest.approx(2 / 28, rel=1e-9)


def test_an_approx_claim_that_fails_exactly():
    # randomized response with e^ε = 4 claimed as (1, 0.05)-DP: δ(1) of one flipped bit is
    # 0.8 - e·0.2 = 0.2563 > 0.05 (decided with exact rationals)
    rr = lib.get("wmc.randomized_response").replace(epsilon=1.0, delta=0.05)
    r = privet.exact.profile(rr, length=1, fractions=True)
    assert r.verified is False and "violation (exact)" in r.check
    i = r.epsilons.index(1.0)
    assert r.deltas[i] == pytest.approx(0.8 - math.e * 0.2, rel=1e-12)


def test_zcdp_claim_checked_exactly():
    rr = lib.get("wmc.randomized_response").replace(epsilon=None, rho=0.5)
    r = privet.exact.profile(rr, length=1)
    # one bit flipped w.p. 1/5: at α → 1, D_α/α is the KL divergence of (0.8, 0.2) from
    # (0.2, 0.8), 0.6 ln 4 = 0.83 > 0.5, so the claim fails
    assert r.rho > 0.8 and r.verified is False


def test_round_off_above_a_tight_pure_claim_is_not_a_violation():
    # randomized response on bits, tight at ln 2: the float profile read δ(ln 2) = 1.1e-16
    # as "violation (exact)"; it is inconclusive in floats, verified with Fractions
    from fractions import Fraction

    @privet.mechanism(epsilon=math.log(2), neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=2, integer=True, low=0, high=1))
    def rr_bits(noise, x):
        return (x + noise.bernoulli(Fraction(1, 3), shape=x.shape)) % 2

    floats = privet.exact.profile(rr_bits)
    assert floats.verified is not False
    if floats.verified is None:
        assert floats.check.startswith("inconclusive in floating point")
    assert privet.exact.profile(rr_bits, fractions=True).verified is True


def test_the_bdd_backend_checks_the_claim_and_keeps_truncated_tails_comparable():
    # on --backend bdd the profile read the claim off the compiled program (none): a broken
    # zCDP claim passed unchecked, and the discrete Gaussian's ρ came out ∞
    @privet.mechanism(rho=0.2, neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=1, integer=True, low=0, high=2))
    def rr_count(noise, x):
        return np.clip(x[0] + noise.geometric(0.5, low=-2, high=2), 0, 2)

    for backend in ("enumerate", "bdd"):
        r = privet.exact.profile(rr_count, backend=backend)
        assert r.verified is False and "tight ρ" in r.check, backend

    @privet.mechanism(rho=1 / 28, neighbors=privet.neighbors.all_differ(1),
                      domain=privet.Domain(length=1, integer=True, low=0, high=1))
    def dgauss(noise, x):
        return x[0] + noise.discrete_gaussian(14)

    for backend in ("enumerate", "bdd"):
        r = privet.exact.profile(dgauss, backend=backend)
        assert r.rho == pytest.approx(1 / 28, rel=1e-6), backend   # N_Z(0, σ²): 1 / (2σ²)
        assert max(float(a) for a in r.renyi) <= 20 and "orders above 20" in \
            r.details["tail_note"]
