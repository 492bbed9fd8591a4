"""Common random numbers for black boxes: runs of two inputs that share their seeds.

A black box whose outputs follow the generator privet gives it (a DP-Sniper style
``m(a, n)`` on NumPy's global generator, a StatDP-style ``f(prng, ...)``, a function taking
``rng=``) can run x and x' with the same seeds; its witness search then trains and selects
on coupled pairs. A vectorized box is certified on independent runs, a per-sample box (each
call a stream of its own) on its coupled pairs with the paired certificate."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

import privet
from privet.attacks.events import Threshold
from privet.attacks.sampling import COUPLED, certify, draw_pair, per_call, seeded
from privet.attacks.scores import Stat
from privet.attacks.witness import spread
from privet.core.mechanism import Domain
from privet.core.noise import Sampler
from privet.stats.bounds import decoupled, projected


def vec_laplace(a, n_samples):
    return a[0] + np.random.laplace(scale=1.0, size=n_samples)


OWN = np.random.default_rng(7)  # a generator of the box's own, which privet cannot seed


def own_generator(a, n_samples):
    return a[0] + OWN.laplace(scale=1.0, size=n_samples)


def test_a_black_box_following_privets_seed_is_seeded_and_one_with_its_own_generator_is_not():
    x = np.zeros(1)
    assert seeded(privet.from_vectorized(vec_laplace, epsilon=1.0), x)
    assert seeded(privet.from_statdp(lambda prng, q, eps: q[0] + prng.laplace(), 1.0), x)
    assert seeded(privet.from_blackbox(lambda a: a[0] + np.random.laplace(), epsilon=1.0), x)
    import random

    assert seeded(privet.from_blackbox(lambda a: a[0] + random.gauss(0, 1), epsilon=1.0), x)
    assert not seeded(privet.from_vectorized(own_generator, epsilon=1.0), x)
    # a white box shares its noise by Replay, not by seeds
    from privet.mechanisms import dpsniper

    assert not seeded(dpsniper.laplace, x)


def test_coupled_runs_share_their_seeds_so_a_shift_of_the_input_moves_every_output_alike():
    mech = privet.from_vectorized(vec_laplace, epsilon=1.0)
    o1, o2 = draw_pair(mech, np.zeros(1), np.ones(1), 3000, None, 5, paired=COUPLED)
    assert np.allclose(o2 - o1, 1.0)
    i1, i2 = draw_pair(mech, np.zeros(1), np.ones(1), 3000, None, 5, paired=False)
    assert not np.allclose(i2 - i1, 1.0)  # independent runs: no such relation


def test_a_per_sample_black_box_stays_aligned_when_its_draws_depend_on_the_input():
    def extra_draws(prng, q, eps):
        out = prng.laplace()
        for _ in range(int(q[0])):  # the input decides how many more numbers it draws
            prng.random()
        return out

    mech = privet.from_statdp(extra_draws, 1.0, domain=Domain(length=1, low=0, high=5))
    a = mech.run(Sampler(np.random.default_rng(3), 500), np.zeros(1))
    b = mech.run(Sampler(np.random.default_rng(3), 500), np.full(1, 4.0))
    assert np.array_equal(a, b)  # each call has its own stream: the i-th calls agree
    # and the first k calls of a run are those of a run of k
    assert np.array_equal(mech.run(Sampler(np.random.default_rng(3), 20), np.zeros(1)), a[:20])


def test_only_runners_that_give_every_call_its_own_stream_count_as_per_call():
    assert per_call(privet.from_statdp(lambda prng, q, eps: q[0] + prng.laplace(), 1.0))
    assert per_call(privet.from_blackbox(lambda a: a[0] + np.random.laplace(), epsilon=1.0))
    assert not per_call(privet.from_vectorized(vec_laplace, epsilon=1.0))
    # a library adapter of kind "blackbox" whose chunk draws from one generator: its
    # coupled pairs may depend on each other, so no paired certificate for it
    from privet.mechanisms import libs

    dpl = libs.diffprivlib_laplace(epsilon=1.0)
    assert dpl.kind == "blackbox" and not per_call(dpl)
    c = certify(dpl, [0.0], [1.0], Threshold(Stat("entry"), 0.5, 0.0, 0), 2000,
                method="paired", seed=0, executor="inprocess", coupled=True)
    assert c.method == "union" and not c.coupled


def test_decoupled_counts_project_the_independent_certificate_of_their_marginals():
    n, k1, k2 = 100_000, 1200.0, 1000.0
    coupled = (950.0, k1 - 950.0, k2 - 950.0)  # most pairs agree
    i11, i10, i01 = decoupled(*coupled, n, shrink=0.0)
    assert math.isclose(i11 + i10, k1) and math.isclose(i11 + i01, k2)
    assert math.isclose(i11, k1 * k2 / n)
    for method in ("union", "conditional"):
        want = projected(k1 * k2 / n, k1 - k1 * k2 / n, k2 - k1 * k2 / n, n, 4 * n,
                         method=method, shrink=0.0)
        got = projected(i11, i10, i01, n, 4 * n, method=method, shrink=0.0)
        assert math.isclose(float(got), float(want))
    # the shrink moves the discordant counts (250 and 50), not the marginals' own noise
    s11, s10, s01 = decoupled(*coupled, n, shrink=2.0)
    assert math.isclose(s11 + s10, 950 + 250 - 2 * math.sqrt(250))
    assert math.isclose(s11 + s01, 950 + 50 + 2 * math.sqrt(51))


def test_the_spread_of_coupled_pairs_rests_on_their_discordant_pairs():
    n, k1, k2 = 1_000_000, 5000.0, 4000.0
    n11 = k1 * k2 / n  # independent pairs on average: the binomial spread
    binomial = math.sqrt((1 - k1 / n) / k1 + (1 - k2 / n) / k2)
    assert math.isclose(spread((n11, k1 - n11, k2 - n11), n), binomial)
    assert math.isclose(spread((n11, k1 - n11, k2 - n11), n, coupled=True), binomial,
                        rel_tol=1e-9)
    tight = spread((3900.0, 1100.0, 100.0), n, coupled=True)
    assert math.isclose(tight, math.sqrt(1200 / (k1 * k2)))
    assert tight < binomial / 2


def test_coupled_per_sample_pairs_keep_the_paired_certificates_confidence():
    """Randomized response at eps = ln 3: the event {1} has ratio exactly 3 between the
    inputs 1 and 0. Each seed's certificate on 2,000 coupled pairs exceeds ln 3 with
    probability at most 0.1; over 60 seeds the count stays within Binomial(60, 0.1)'s 99%
    quantile."""
    eps = math.log(3.0)

    def rr(prng, q, e):
        truth = prng.random() < math.exp(e) / (1 + math.exp(e))
        return float(q[0]) if truth else 1.0 - float(q[0])

    mech = privet.from_statdp(rr, eps, domain=Domain(length=1, integer=True, low=0, high=1))
    event = Threshold(Stat("entry"), 0.5, 0.0, 0)  # {ω > 0.5} = {1}
    seeds = 60
    over, values = 0, []
    for s in range(seeds):
        c = certify(mech, [1.0], [0.0], event, 2000, method="paired", seed=s,
                    executor="inprocess", coupled=True)
        assert c.coupled and c.method == "paired"
        values.append(c.value)
        over += c.value > eps
    assert over <= stats.binom.ppf(0.99, seeds, 0.1)
    assert np.median(values) > 0.5 * eps  # and it certifies something


def test_a_vectorized_box_is_selected_coupled_and_certified_on_independent_runs():
    box = privet.from_vectorized(vec_laplace, epsilon=0.5, domain=Domain(length=1, low=-5,
                                                                          high=5))
    b = privet.search(box, seed=1, n_confirm=1 << 16, n_cap=1 << 12, n_select=1 << 14,
                      seconds=None, float_features="off")
    assert b.details["coupled"] and "common random numbers" in b.details["optimizer"]
    assert "independent samples" in b.witness.details["method"]  # its pairs may depend
    assert 0.5 < b.value <= 1.0 + 0.1  # true eps 1 (neighbors differ by 1, scale 1)
    off = privet.search(box, seed=1, n_confirm=1 << 16, n_cap=1 << 12, n_select=1 << 14,
                        seconds=None, float_features="off", couple=False)
    assert not off.details["coupled"]
    assert "independent samples" in off.details["optimizer"]
