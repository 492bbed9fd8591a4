"""Symmetry reduction and the fast Algorithm 1 path (noisy max, FAIER Fig. 2)."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from fractions import Fraction
from math import comb

import pytest

from privet.core.results import from_json, to_json
from privet.pufferfish import budget, check, pufferfish, scenario, smt
from privet.pufferfish.hmm import forward_exact, hmm
from privet.pufferfish.symmetry import Automorphism, is_hmm_automorphism, reduce_pairs

PAIR_TYPES = 7  # (a, b) in {0,1,2}^2 with |a - b| <= 1
DIAGONAL_TYPES = 3  # (0,0), (1,1), (2,2)


def expected_orbits(n: int) -> int:
    """Multisets of n coordinate pair types, minus those with x == x' (counted by hand)."""
    return comb(PAIR_TYPES + n - 1, n) - comb(DIAGONAL_TYPES + n - 1, n)


@pytest.mark.parametrize("n", [2, 3])
def test_noisy_max_orbits_match_the_count_of_pair_type_multisets(n):
    sc = scenario.noisy_max_dp(n)
    red = reduce_pairs(sc.hmm, sc.initial, sc.pairs, sc.symmetries)
    assert red.generators == len(sc.symmetries) == (1 if n == 2 else 2) and not red.rejected
    assert red.total == len(sc.pairs) == PAIR_TYPES ** n - DIAGONAL_TYPES ** n
    assert len(red.pairs) == expected_orbits(n)
    # the representatives are pairwise inequivalent: distinct multisets of pair types
    keys = {tuple(sorted(zip(eval(a), eval(b)))) for a, b in red.pairs}
    assert len(keys) == len(red.pairs)


def test_verified_automorphism_preserves_every_sequence_probability():
    sc = scenario.noisy_max_dp(3)
    h = sc.hmm
    obs = range(len(h.observations))
    for g in sc.symmetries:
        assert is_hmm_automorphism(h, g)
        for x in ("v=012", "v=201", "v=110"):
            s = h.state_index(x)
            for w in itertools.product(obs, repeat=2):
                img = tuple(g.observations[o] for o in w)
                assert forward_exact(h, {g.states[s]: 1}, img, encoded=True) == \
                    forward_exact(h, {s: 1}, w, encoded=True)


def test_wrong_declared_symmetries_are_rejected_not_trusted():
    sc = scenario.noisy_max_dp(3)
    h = sc.hmm
    g = sc.symmetries[0]
    # permuting the states but not the observations is not an automorphism
    bad = Automorphism(g.states, tuple(range(len(h.observations))), "states only")
    assert not is_hmm_automorphism(h, bad)
    red = reduce_pairs(h, sc.initial, sc.pairs, [bad])
    assert red.rejected == ["states only"] and len(red.pairs) == len(sc.pairs)
    # an automorphism that does not map the pair set onto itself is rejected too
    one = replace(sc, pairs=(("[0, 1, 2]", "[1, 1, 2]"),))
    red = reduce_pairs(h, one.initial, one.pairs, sc.symmetries)
    assert red.generators == 0 and red.pairs == list(one.pairs)
    # closed under the transposition of queries 1 and 2 (the first generator) only
    two = replace(sc, pairs=(("[0, 1, 2]", "[1, 1, 2]"), ("[1, 0, 2]", "[1, 1, 2]")))
    red = reduce_pairs(h, two.initial, two.pairs, sc.symmetries)
    assert red.generators == 1 and red.pairs == [two.pairs[0]]


def test_tie_breaking_that_favours_the_first_index_breaks_the_symmetry():
    # two queries, answers in {0, 1}, noisy values = answers; ties go to query 1
    states = ["v=00", "v=01", "v=10", "v=11", "end"]
    obs = ["_", "1", "2", "end"]
    win = {"v=00": "1", "v=01": "2", "v=10": "1", "v=11": "1"}
    trans = {s: {"end": 1} for s in states}
    emis = {s: {win[s]: 1} for s in win}
    emis["end"] = {"end": 1}
    h = hmm(states, obs, trans, emis)
    swap = Automorphism(tuple(h.state_index(s) for s in ["v=00", "v=10", "v=01", "v=11",
                                                          "end"]),
                        (0, 2, 1, 3), "swap")
    assert not is_hmm_automorphism(h, swap)
    emis["v=00"] = emis["v=11"] = {"1": Fraction(1, 2), "2": Fraction(1, 2)}
    assert is_hmm_automorphism(hmm(states, obs, trans, emis), swap)


@pytest.mark.parametrize("eps", [1.2, 1.232, "ln(24/7)", 1.233, 1.3])
def test_smt_with_symmetry_agrees_with_the_exact_path_at_three_queries(eps):
    sc = scenario.noisy_max_dp(3)
    b = budget(eps)
    exact = check.check_fixed(sc, b, 2)
    o = smt.algorithm1(sc, b, 2)
    assert o.status == exact.status
    assert o.details["symmetry"]["orbits"] == expected_orbits(3)
    if o.status == "violated":
        p1, p2 = o.probabilities
        assert p1 / p2 > math.exp(b.epsilon) * (1 - 1e-12)
    assert exact.max_ratio == Fraction(24, 7)  # the same witness ratio both ways


@pytest.mark.parametrize("eps", [0.87, 0.88])  # the exact epsilon is ln(12/5) = 0.8755
def test_symmetry_reduction_does_not_change_the_verdict(eps):
    sc = scenario.noisy_max_dp(2)
    full = smt.algorithm1(sc, budget(eps), 2, symmetry="none")
    reduced = smt.algorithm1(sc, budget(eps), 2)
    exact = check.check_fixed(sc, budget(eps), 2)
    assert exact.max_ratio == Fraction(12, 5)
    assert full.status == reduced.status == exact.status
    assert "symmetry" not in full.details
    assert reduced.details["symmetry"]["orbits"] == expected_orbits(2) < len(sc.pairs)
    if exact.status == "verified":
        assert full.details["pairs_checked"] == len(sc.pairs)


def test_pufferfish_verdict_records_the_symmetry():
    v = pufferfish(scenario.noisy_max_dp(3), "ln(24/7)", k_min=2, k_max=2, method="smt")
    assert v.status == "verified"
    assert v.details["symmetry"]["generators"] == 2
    assert v.details["symmetry"]["orbits"] == expected_orbits(3)
    assert from_json(to_json(v)).details["symmetry"] == v.details["symmetry"]
    assert "symmetry" not in pufferfish(scenario.noisy_max_dp(2), 0.88, k_min=2, k_max=2,
                                        method="smt", symmetry="none").details


def test_short_factor_is_refined_when_its_model_fails_the_exact_check():
    # e^(ln 2 + 1e-9) > 2 = the largest ratio, but the 6-digit bound 1.99999 is below 2:
    # the short query is SAT, its model fails the exact re-check, the 40-digit one is UNSAT
    assert smt.factor_ladder(budget(math.log(2) + 1e-9))[0] < 2
    assert pufferfish("ex2", math.log(2) + 1e-9, method="smt").status == "verified"
    v = pufferfish("ex2", math.log(2) - 1e-9, method="smt")  # e^eps just below 2
    assert v.status == "violated" and v.ratio == 2
