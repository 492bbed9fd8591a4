"""Claims: the three kinds, their profiles and conversions, and the one-sentence errors."""

import math

import numpy as np
import pytest

import privet
from privet.core.claims import Claim
from privet.core.errors import ParameterError, PrivetError
from privet.stats.profiles import gaussian_delta, gaussian_epsilon


def test_kinds_and_words():
    assert Claim.make(0.5).describe() == "ε = 0.5"
    assert Claim.make(1, 1e-5).describe() == "(ε, δ) = (1, 1e-05)"
    assert Claim.make(rho=0.125).describe() == "ρ = 0.125 (zCDP)"
    assert Claim.make() is None


@pytest.mark.parametrize("kw, words", [
    (dict(epsilon=1, delta=1.0), "delta must lie in [0, 1)"),
    (dict(epsilon=1, delta=-1e-3), "delta must lie in [0, 1)"),
    (dict(epsilon=1, rho=0.1), "not both"),
    (dict(delta=1e-5), "needs an epsilon"),
    (dict(rho=-1), "rho"),
])
def test_bad_claims_one_sentence(kw, words):
    with pytest.raises(ParameterError, match=words.replace("[", r"\[").replace(")", r"\)")):
        Claim.make(**kw)
    with pytest.raises(PrivetError):   # the decorator says the same sentence
        privet.mechanism(**kw)(lambda noise, x: x)


def test_zcdp_claim_on_code_that_needs_epsilon():
    with pytest.raises(PrivetError, match="calibrate it from rho"):
        privet.mechanism(rho=0.1)(lambda noise, x, *, epsilon: x)


def test_approx_profile_is_the_dominating_randomized_response():
    # the (ε0, δ0) randomized response: P = (δ0, (1-δ0) e/(1+e), (1-δ0)/(1+e), 0), Q mirrored;
    # its hockey-stick divergence at e^ε, computed directly, is the claim's δ(ε)
    e0, d0 = 0.7, 1e-3
    c = Claim.make(e0, d0)
    E = math.exp(e0)
    P = np.array([d0, (1 - d0) * E / (1 + E), (1 - d0) / (1 + E), 0.0])
    Q = P[::-1]
    for eps in (0.0, 0.2, 0.5, 0.7, 1.5):
        assert c.delta_at(eps) == pytest.approx(np.maximum(P - math.exp(eps) * Q, 0).sum(),
                                                rel=1e-12)
    assert c.epsilon_at(d0) == pytest.approx(e0)
    assert c.epsilon_at(d0 / 2) == math.inf
    assert Claim.make(e0).delta_at(e0) == 0.0


def test_zcdp_conversion_sits_between_the_gaussian_and_the_simple_bound():
    # N(0, 1/(2ρ)) on sensitivity 1 is ρ-zCDP, so its exact ε(δ) is at most the conversion's,
    # which is at most Bun-Steinke's ρ + 2 sqrt(ρ ln 1/δ)
    rho = 0.125
    c = Claim.make(rho=rho)
    mu = math.sqrt(2 * rho)
    for d in (1e-3, 1e-5, 1e-8):
        exact = gaussian_epsilon(d, mu)
        assert exact <= c.epsilon_at(d) <= c.simple_epsilon_at(d)
        assert c.delta_at(c.epsilon_at(d)) == pytest.approx(d, rel=1e-4)
    # OpenDP 0.16 prints 2.1657155451754857 for make_zCDP_to_approxDP at rho = 0.125, 1e-5
    assert c.epsilon_at(1e-5) == pytest.approx(2.1657155451754857, rel=1e-7)
    assert gaussian_delta(2.0, mu) <= c.delta_at(2.0)


def test_envelope_is_the_infimum_of_the_profile_lines():
    for c in (Claim.make(0.5, 1e-3), Claim.make(rho=0.2)):
        q = np.array([0.0, 1e-4, 0.01, 0.3, 0.9])
        eps = np.linspace(0, 8, 4001)
        brute = (np.exp(eps)[None, :] * q[:, None] + c.delta_at(eps)[None, :]).min(axis=1)
        f = c.envelope(q)
        # closed form for (ε, δ); an ε grid for zCDP (both within 0.2% of the brute force)
        assert np.all(np.abs(f - np.minimum(brute, 1)) <= 2e-3 * np.maximum(brute, 1e-6))


def test_mechanism_passes_the_claim_to_its_code():
    @privet.mechanism(epsilon=1, delta=1e-5)
    def g(noise, x, *, epsilon, delta):
        return x[0] + noise.gaussian(1.0)

    assert g.resolve_args() == {"epsilon": 1.0, "delta": 1e-5}
    assert g.claim == Claim.make(1, 1e-5)
    assert g.to_dict()["claim"] == "(ε, δ) = (1, 1e-05)"
