"""The "auto" backend's trial compile has a time limit: a mechanism beyond both backends is
refused in one sentence instead of compiling for many minutes."""

import numpy as np
import pytest

import privet
from privet.core.errors import GridTooLargeError
from privet.exact import backend


@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1),
                  domain=privet.Domain(length=6, integer=True, low=0, high=3))
def disc6(noise, x):
    d = noise.discrete(list(range(100)), shape=x.shape)  # 100^6 joint outcomes
    return privet.ops.argmax(x * 50 + d, axis=-1)


def test_beyond_both_backends_is_refused_once_the_trial_compile_runs_out(monkeypatch):
    monkeypatch.setattr(backend, "TRIAL_SECONDS", 0.5)
    with pytest.raises(GridTooLargeError, match="beyond both backends: enumeration needs "
                       "1,000,000,000,000 joint noise outcomes .* did not finish in 0.5 s"):
        privet.exact(disc6)


def test_a_compile_out_of_time_falls_back_to_enumeration_when_that_fits(monkeypatch):
    @privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1),
                      domain=privet.Domain(length=2, integer=True, low=0, high=3))
    def disc2(noise, x):
        d = noise.discrete(list(range(100)), shape=x.shape)  # 10^4 outcomes: enumerable
        return privet.ops.argmax(x * 50 + d, axis=-1)

    def slow(*a, **k):
        raise backend.TrialTimeout
    monkeypatch.setattr(backend, "_choose", slow)
    b = privet.exact(disc2)
    assert b.backend == "enumerate" and "did not finish" in b.details["backend_choice"]
    assert b.epsilon == np.inf  # x = 0 vs 2 moves an entry by 100: some argmax impossible


@privet.mechanism(epsilon=0.5, neighbors=privet.neighbors.add_remove(),
                  domain=privet.Domain(length=(0, 6), integer=True, low=0, high=2))
def _clipped_count(noise, x):
    """A count of nonzero entries plus two-sided geometric noise (alpha 1/2: ln 2 per unit),
    clamped to [0, 3]: ln(2)-DP when a record is added or removed."""
    s = np.sum(np.minimum(x, 1), axis=-1)
    return np.clip(s + noise.geometric(0.5, low=-6, high=6), 0, 3)


def _brute_add_remove(mech, length):
    """max P[M(x) = y] / P[M(x') = y] over x of length L + 1, x' = x with one entry removed
    (both orders), every output: by hand, from the mechanism's own exact distributions."""
    from fractions import Fraction
    from itertools import product

    best = Fraction(0)
    for x in product(range(3), repeat=length + 1):
        for k in range(length + 1):
            d1 = mech.distribution(np.asarray(x), exact=True).as_dict()
            d2 = mech.distribution(np.asarray(x[:k] + x[k + 1:]), exact=True).as_dict()
            for a, b in ((d1, d2), (d2, d1)):
                for y, p in a.items():
                    best = max(best, p / b[y]) if b.get(y, 0) else np.inf
    return best


def test_add_remove_neighbors_are_checked_exactly_at_lengths_l_and_l_plus_1():
    """privet exact refused add/remove neighbors ("compares inputs of one length only"). It
    now enumerates the inputs of lengths L and L + 1 and compares each longer input with
    every removal of one of its entries, both ways: the same e^ε as a hand enumeration."""
    from fractions import Fraction

    for length in (1, 2, 3):
        b = privet.exact(_clipped_count, length=length, fractions=True)
        assert b.e_epsilon == _brute_add_remove(_clipped_count, length) == 2
        x, x2, _ = b.witness
        assert {len(x), len(x2)} == {length, length + 1}
        assert b.backend == "enumerate" and f"lengths {length} and {length + 1}" in b.domain
        assert b.details["inputs"] == 3 ** length + 3 ** (length + 1)
    # the δ of the worst pair at ε = 1/2: [1, 1, 1] against [1, 1], output 3 (the clamp):
    # P = 2/3 against 1/3, so δ = 2/3 - e^(1/2) / 3
    d = privet.exact.delta_for(_clipped_count, 0.5, length=2)
    assert abs(d.delta - (2 - np.exp(0.5)) / 3) < 1e-12
    # given inputs of two lengths, and a length-L accuracy (per input: one length)
    g = privet.exact(_clipped_count, inputs=[[1, 1], [1, 1, 1], [1, 1, 0]], fractions=True)
    assert g.e_epsilon == Fraction(2)
    assert privet.exact.accuracy(_clipped_count, 1, length=2).details["inputs"] == 9


def test_add_remove_refusals_name_what_to_change():
    from privet.core.errors import InputError

    with pytest.raises(InputError, match="give the length to check"):
        privet.exact(_clipped_count)
    with pytest.raises(InputError, match="compare length L with L \\+ 1: length 7 is outside"):
        privet.exact(_clipped_count, length=6)
    with pytest.raises(InputError, match="BDD backends compile '_clipped_count' for one input "
                                         "length"):
        privet.exact(_clipped_count, length=2, backend="bdd")
