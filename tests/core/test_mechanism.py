"""Mechanism spec, validation of outputs and inputs, adapters."""

import numpy as np
import pytest

import privet
from privet.core import ops
from privet.core.errors import (
    InputError,
    MechanismError,
    NeighborError,
    ParameterError,
    UnsupportedError,
)
from privet.core.noise import Replay, Sampler


def test_decorator_collects_the_spec():
    @privet.mechanism(epsilon=0.7, delta=1e-6, neighbors=privet.neighbors.one_differs(2),
                      domain=privet.Domain(length=5, low=0, high=10),
                      output=privet.Output.categorical(range(5)))
    def m(noise, x, *, epsilon, T=1.0, N=2):
        return ops.argmax(x + noise.laplace(1 / epsilon, x.shape), axis=-1)

    assert m.epsilon == 0.7 and m.delta == 1e-6
    assert dict(m.args) == {"T": 1.0, "N": 2}
    assert m.neighbors.kind == "one_differs" and m.neighbors.delta == 2
    assert m.resolve_args({"T": 3.0})["T"] == 3.0
    assert m.resolve_args()["epsilon"] == 0.7
    with pytest.raises(InputError, match="no argument"):
        m.resolve_args({"nope": 1})


def test_nonpositive_epsilon_is_rejected():
    with pytest.raises(ParameterError, match="positive"):
        privet.mechanism(epsilon=0)(lambda noise, x: x)
    with pytest.raises(ParameterError):
        privet.mechanism(epsilon=-1.0)(lambda noise, x: x)


def test_mechanism_that_raises_gets_one_sentence():
    @privet.mechanism(epsilon=1.0)
    def broken(noise, x, *, epsilon):
        raise ValueError("boom")

    with pytest.raises(MechanismError, match="raised ValueError: boom"):
        broken.sample([1.0], 10)


def test_nan_and_wrong_batch_size_are_caught():
    @privet.mechanism(epsilon=1.0)
    def nan(noise, x, *, epsilon):
        return noise.laplace(1.0) * np.nan

    @privet.mechanism(epsilon=1.0)
    def short(noise, x, *, epsilon):
        return noise.laplace(1.0)[:-1]

    with pytest.raises(MechanismError, match="NaN"):
        nan.sample([1.0], 10)
    with pytest.raises(MechanismError, match="batch of"):
        short.sample([1.0], 10)


def test_input_outside_domain():
    @privet.mechanism(epsilon=1.0, domain=privet.Domain(length=3, integer=True, low=0, high=2))
    def m(noise, x, *, epsilon):
        return x.sum() + noise.laplace(1.0)

    with pytest.raises(InputError, match="outside the domain"):
        m.sample([0, 1, 5], 3)
    with pytest.raises(InputError, match="length"):
        m.sample([0, 1], 3)
    with pytest.raises(InputError, match="integers"):
        m.sample([0, 1, 0.5], 3)


def test_sampling_is_reproducible_and_chunk_independent():
    @privet.mechanism(epsilon=1.0)
    def m(noise, x, *, epsilon):
        return x.sum() + noise.laplace(1.0)

    a = m.sample([1.0], 1000, seed=5, chunk=100)
    b = m.sample([1.0], 1000, seed=5, chunk=100)
    assert np.array_equal(a, b) and a.shape == (1000,)


def statdp_noisy_max(prng, queries, epsilon):
    noisy = np.asarray(queries) + prng.laplace(scale=2 / epsilon, size=len(queries))
    return int(np.argmax(noisy))


def test_statdp_adapter_matches_native_distribution():
    from scipy.stats import chi2_contingency

    @privet.mechanism(epsilon=0.5)
    def native(noise, q, *, epsilon):
        return ops.argmax(q + noise.laplace(2 / epsilon, q.shape), axis=-1)

    wrapped = privet.from_statdp(statdp_noisy_max, epsilon=0.5)
    x = [1.0, 2.0, 0.0, 1.0, 3.0]
    n = 4000
    a = np.bincount(native.sample(x, n, seed=1), minlength=5)
    b = np.bincount(wrapped.sample(x, n, seed=2, ).astype(int), minlength=5)
    _, p, _, _ = chi2_contingency(np.vstack([a, b]))
    assert p > 1e-3  # same distribution: the test rejects with probability 1e-3 only
    with pytest.raises(UnsupportedError, match="cannot give"):
        wrapped.run(Replay(Sampler(0, 3)), x)


def test_vectorized_and_blackbox_adapters_run():
    def sniper(a, n_samples):
        return np.asarray(a)[0] + np.random.laplace(size=n_samples)

    def box(x, rng):
        return float(np.sum(x) + rng.laplace())

    v = privet.from_vectorized(sniper, epsilon=1.0)
    b = privet.from_blackbox(box, epsilon=1.0)
    out_v = v.sample([3.0], 5000, seed=1)
    out_b = b.sample([1.0, 2.0], 2000, seed=1, )
    assert out_v.shape == (5000,) and abs(np.median(out_v) - 3.0) < 0.15
    assert out_b.shape == (2000,) and abs(np.median(out_b) - 3.0) < 0.2
    assert np.array_equal(v.sample([3.0], 100, seed=4), v.sample([3.0], 100, seed=4))
    with pytest.raises(UnsupportedError):
        v.require("replay", "privet.search")


def test_neighbor_checks():
    nb = privet.neighbors
    assert nb.all_differ(1).are_neighbors([1, 1, 1], [2, 0, 1])
    assert not nb.all_differ(1).are_neighbors([1, 1], [2.5, 1])
    assert nb.one_differs(1).are_neighbors([1, 1, 1], [2, 1, 1])
    assert not nb.one_differs(1).are_neighbors([1, 1, 1], [2, 0, 1])
    assert nb.add_remove().are_neighbors([1, 2, 3], [1, 3])
    assert not nb.add_remove().are_neighbors([1, 2, 3], [1, 4])
    assert nb.replace_one().are_neighbors([1, 2, 3], [1, 9, 3])
    with pytest.raises(NeighborError, match="not neighbors"):
        nb.all_differ(1).check([0, 0], [0, 3])
    with pytest.raises(NeighborError):
        nb.Neighbors("all_differ", -1)
    with pytest.raises(NeighborError):
        nb.Neighbors("sideways")


def test_table1_pairs_are_neighbors_in_both_orders():
    rel = privet.neighbors.all_differ(2)
    pairs = list(rel.pairs())
    # 8 patterns and 6 mirrored ones at n = 5; at n = 10 the mirrored x shape is the swapped one
    assert len(pairs) == 2 * (14 + 13)
    for p in pairs:
        assert rel.are_neighbors(p.d1, p.d2)
    first = pairs[0]
    assert first.d1.tolist() == [1, 1, 1, 1, 1] and first.d2.tolist() == [3, 1, 1, 1, 1]
    hist = list(privet.neighbors.one_differs(1).pairs(lengths=(5,)))
    assert {p.pattern for p in hist} >= {"one above (n=5)", "one below (n=5)"}
    assert all(privet.neighbors.one_differs(1).are_neighbors(p.d1, p.d2) for p in hist)


def test_every_pattern_comes_in_both_statdp_orientations_plus_all_below():
    """StatDP's generator has half half = [2..2, 0..0] and all below = [0]*n; its Table 1 has
    half half = [0..0, 2..2]. Both orientations of every pattern are generated."""
    pairs = {(tuple(p.d1), tuple(p.d2)): p.pattern
             for p in privet.neighbors.all_differ(1).pairs(lengths=(5,), both_orders=False)}
    ones = (1.0,) * 5
    assert pairs[(ones, (2.0, 2.0, 0.0, 0.0, 0.0))] == "half half (n=5)"
    assert pairs[(ones, (0.0, 0.0, 0.0, 2.0, 2.0))] == "half half, mirrored (n=5)"
    assert pairs[(ones, (0.0,) * 5)] == "all below (n=5)"
    assert (ones, (1.0, 1.0, 1.0, 1.0, 2.0)) in pairs
    assert ((0.0, 0.0, 0.0, 1.0, 1.0), (1.0, 1.0, 1.0, 0.0, 0.0)) in pairs  # x shape mirrored
    # length 1: the patterns collapse to two pairs up to order (x shape is one below swapped)
    short = list(privet.neighbors.all_differ(1).pairs(lengths=(1,), both_orders=False))
    assert len({(tuple(p.d1), tuple(p.d2)) for p in short}) == len(short) == 2


def test_pairs_respect_the_domain():
    bits = privet.Domain(length=4, integer=True, low=0, high=1)
    pairs = list(privet.neighbors.one_differs(1).pairs(domain=bits))
    assert pairs and all(len(p.d1) == 4 for p in pairs)
    assert all(p.d1.min() >= 0 and p.d2.max() <= 1 for p in pairs)
