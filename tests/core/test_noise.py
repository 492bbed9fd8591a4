"""Noise interpreters: Sampler, Replay, Enumerate."""

from fractions import Fraction

import numpy as np
import pytest

import privet
from privet.core import ops
from privet.core.errors import GridTooLargeError, NoiseError, NotEnumerableError, ReplayError
from privet.core.noise import Replay, Sampler, enumerate_outputs


@privet.mechanism(epsilon=0.5)
def lap_max(noise, q, *, epsilon):
    return ops.argmax(q + noise.laplace(2 / epsilon, q.shape), axis=-1)


@privet.mechanism(epsilon=np.log(2),
                  domain=privet.Domain(length=1, integer=True, low=0, high=2))
def tgeo(noise, x, *, epsilon):
    return np.clip(x[0] + noise.truncated_geometric(Fraction(1, 2), 2), 0, 2)


def test_every_draw_has_a_leading_batch_axis():
    noise = Sampler(0, 7)
    assert noise.laplace(1.0, (3,)).shape == (7, 3)
    assert noise.exponential(1.0).shape == (7,)
    assert noise.gaussian(1.0, (2, 2)).shape == (7, 2, 2)
    assert noise.geometric(0.5, 4).shape == (7, 4)
    assert noise.bernoulli(0.3, 2).shape == (7, 2)
    assert noise.uniform(0, 1, 5).shape == (7, 5)
    assert noise.discrete([1, 2, 3], [0.2, 0.3, 0.5], 2).shape == (7, 2)
    assert noise.permutation(3).shape == (7, 3)


def test_fig1a_truncated_half_geometric_table_as_fractions():
    # FAIER Fig. 1a: rows are f(d) = 0, 1, 2; columns the outputs 0, 1, 2
    table = {
        0: (Fraction(2, 3), Fraction(1, 6), Fraction(1, 6)),
        1: (Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)),
        2: (Fraction(1, 6), Fraction(1, 6), Fraction(2, 3)),
    }
    for x, row in table.items():
        dist = tgeo.distribution([x], exact=True)
        assert dist.total() == 1
        assert tuple(dist.prob(y) for y in range(3)) == row


def test_enumerate_float_agrees_with_fraction():
    exact = tgeo.distribution([1], exact=True).as_dict()
    approx = tgeo.distribution([1]).as_dict()
    for y, p in exact.items():
        assert approx[y] == pytest.approx(float(p), abs=1e-15)


def test_sampler_frequencies_match_enumeration():
    n = 200_000
    out = tgeo.sample([0], n, seed=3)
    dist = tgeo.distribution([0])
    for y, p in dist.as_dict().items():
        freq = np.mean(out == y)
        sd = np.sqrt(p * (1 - p) / n)
        assert abs(freq - p) < 5 * sd  # 5 sigma: a false alarm has probability < 1e-6 per cell


def test_replay_repeats_and_shares_noise():
    rep = Replay(Sampler(11, 5000))
    a = lap_max.run(rep, [1, 1, 1, 1, 1])
    b = lap_max.run(rep.rewind(), [1, 1, 1, 1, 1])
    assert np.array_equal(a, b)
    c = lap_max.run(rep.rewind(), [1, 1, 1, 1, 2])
    indep = lap_max.run(Sampler(12, 5000), [1, 1, 1, 1, 2])
    # shared noise: a neighboring input changes few argmaxes; independent noise changes ~80%
    assert np.mean(a == c) > 0.8 > np.mean(a == indep) + 0.4


def test_replay_rejects_changed_draws():
    @privet.mechanism(epsilon=1.0)
    def shape_depends(noise, x, *, epsilon):
        return noise.laplace(1.0, (len(x),)).sum(axis=1)

    rep = Replay(Sampler(0, 10))
    shape_depends.run(rep, [1, 2])
    with pytest.raises(ReplayError, match="must not depend on the input"):
        shape_depends.run(rep.rewind(), [1, 2, 3])


def test_replay_with_fresh_draws_what_changed_and_shares_the_rest():
    @privet.mechanism(epsilon=1.0)
    def scale_depends(noise, x, *, epsilon):
        shared = noise.laplace(1.0)                  # the same law on every input
        own = noise.laplace(1.0 + float(x[0]))       # its scale changes with the input
        return np.stack([shared, own], axis=1)

    n = 100_000
    rep = Replay(Sampler(0, n), fresh=True)
    a = scale_depends.run(rep, [0.0])
    b = scale_depends.run(rep.rewind(), [1.0])
    assert np.array_equal(a[:, 0], b[:, 0])          # the unchanged draw is replayed
    # the changed one is drawn afresh at its own scale: |Lap(b)| has mean b and standard
    # deviation b, so its sample mean is b within five standard errors b * 5 / sqrt(n)
    assert abs(np.mean(np.abs(b[:, 1])) - 2.0) < 2.0 * 5 / np.sqrt(n)
    assert abs(np.corrcoef(a[:, 1], b[:, 1])[0, 1]) < 5 / np.sqrt(n)  # independent of x's


def test_enumerate_rejects_continuous_noise_naming_the_draw():
    with pytest.raises(NotEnumerableError, match=r"draw #1: noise laplace"):
        lap_max.distribution([1, 2])


def test_enumerate_cap_names_the_grid_size():
    @privet.mechanism(epsilon=1.0)
    def many_bits(noise, x, *, epsilon):
        return noise.bernoulli(0.5, (30,)).sum(axis=1)

    with pytest.raises(GridTooLargeError, match="1,073,741,824"):
        many_bits.distribution([0])


def test_enumerate_handles_vector_valued_and_mixed_draws():
    def run(noise):
        perm = noise.permutation(3)
        bit = noise.bernoulli(Fraction(1, 3))
        return perm[:, 0] + 10 * bit

    dist = enumerate_outputs(run, exact=True)
    assert dist.total() == 1
    assert dist.prob(0) == Fraction(2, 3) * Fraction(1, 3)
    assert dist.prob(12) == Fraction(1, 3) * Fraction(1, 3)


def test_bad_noise_parameters():
    noise = Sampler(0, 3)
    with pytest.raises(NoiseError):
        noise.laplace(-1.0)
    with pytest.raises(NoiseError):
        noise.discrete([1, 2], [0.5, 0.6])
    with pytest.raises(NoiseError):
        noise.geometric(1.5)


def test_permutation_is_uniform_and_enumerable():
    n = 60_000
    perms = Sampler(5, n).permutation(3)
    assert np.all(np.sort(perms, axis=1) == np.arange(3))
    codes = perms @ np.array([9, 3, 1])
    freq = np.unique(codes, return_counts=True)[1] / n
    p = 1 / 6
    assert len(freq) == 6 and np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / n))
    dist = enumerate_outputs(lambda noise: noise.permutation(3)[:, 0], exact=True)
    assert dist.as_dict() == {0: Fraction(1, 3), 1: Fraction(1, 3), 2: Fraction(1, 3)}


def test_censored_geometric_sampler_matches_its_support():
    n = 200_000
    draws = Sampler(8, n).geometric(0.5, low=-2, high=2)
    values, probs = privet.core.Dist("geometric", {"alpha": 0.5, "low": -2, "high": 2}).support()
    for v, p in zip(values, probs):
        assert abs(np.mean(draws == v) - p) < 5 * np.sqrt(p * (1 - p) / n)
    free = Sampler(9, n).geometric(0.5)
    p0 = (1 - 0.5) / (1 + 0.5)
    assert abs(np.mean(free == 0) - p0) < 5 * np.sqrt(p0 * (1 - p0) / n)


def test_replay_tape_cannot_be_corrupted_in_place():
    @privet.mechanism(epsilon=1.0)
    def in_place(noise, x, *, epsilon):
        z = noise.laplace(1.0)
        z += x[0]
        return z

    with pytest.raises(privet.core.MechanismError, match="read-only"):
        in_place.run(Replay(Sampler(0, 4)), [1.0])


# -- declared float samplers (privet.floats inverts them) -------------------------------------

def test_declared_samplers_draw_their_distributions():
    # Kolmogorov-Smirnov at level 1e-6 with a fixed seed: a correct sampler fails with
    # probability 1e-6, and a wrong scale or formula is rejected at n = 20,000
    from scipy import stats

    rng = np.random.default_rng(11)
    for sampler, dist, ref in (("inverse_cdf", "laplace", stats.laplace(scale=2.0)),
                               ("box_muller", "gaussian", stats.norm(scale=2.0)),
                               ("polar", "gaussian", stats.norm(scale=2.0))):
        noise = Sampler(rng, 20_000)
        draw = noise.laplace(2.0, sampler=sampler) if dist == "laplace" else \
            noise.gaussian(2.0, sampler=sampler)
        assert stats.kstest(draw, ref.cdf).pvalue > 1e-6, sampler


def test_an_unknown_sampler_is_one_sentence():
    with pytest.raises(NoiseError, match="unknown laplace sampler"):
        Sampler(np.random.default_rng(0), 3).laplace(1.0, sampler="ziggurat")


def test_declaring_numpys_sampler_changes_nothing():
    a = Sampler(np.random.default_rng(3), 100).laplace(1.5)
    b = Sampler(np.random.default_rng(3), 100).laplace(1.5, sampler="numpy")
    assert np.array_equal(a, b)


def test_exact_enumeration_takes_float_probabilities_that_sum_to_one_up_to_round_off():
    # a softmax's floats sum to 0.9999999999999999: fractions=True refused them
    w = np.exp(np.array([0.0, 0.5, 0.25]))
    probs = (w / w.sum()).tolist()
    dist = enumerate_outputs(lambda noise: noise.discrete([0, 1, 2], probs), exact=True)
    assert dist.exact and sum(dist.probs) == 1
    assert [float(p) for p in dist.probs] == pytest.approx(probs, rel=1e-12)
    with pytest.raises(NoiseError, match="sum to 1"):
        enumerate_outputs(lambda noise: noise.discrete(
            [0, 1], [Fraction(1, 3), Fraction(2, 3) - Fraction(1, 10**12)]), exact=True)


def test_an_infinite_noise_scale_is_named_as_a_number():
    # the message printed the sentinel name: "got ABORTED"
    with pytest.raises(NoiseError, match="must be positive and finite, got ∞"):
        Sampler(0, 4).laplace(float("inf"))


def test_a_wide_censored_geometric_is_drawn_in_closed_form_as_the_listed_one():
    # a geometric on [-10^7, 10^7] listed its twenty million values per draw; the closed
    # form gives the same value for the same uniform (the censored law, one uniform each)
    import math as _math

    from privet.core.noise import Dist

    for a in (0.3, _math.exp(-0.5), 0.9):
        d = Dist("geometric", {"alpha": a, "low": -40, "high": 40})
        listed = d._inverse_cdf(np.random.default_rng(5), (100_000,))
        closed = d._censored_geometric(np.random.default_rng(5), (100_000,))
        assert np.array_equal(listed, closed)
    wide = Dist("geometric", {"alpha": 0.5, "low": -10**7, "high": 10**7})
    assert wide.support_size() == 2 * 10**7 + 1
    assert wide.sample(np.random.default_rng(0), (10,)).dtype == np.int64
