"""The tail-event family: statistics, counts against brute force, sample sizes, pairs."""

import numpy as np

import privet
import privet.mechanisms as lib
from privet.attacks import tails


def test_family_counts_match_brute_force():
    rng = np.random.default_rng(0)
    s1, s2 = rng.normal(1, 1, 5000), rng.normal(0, 1, 5000)
    stat = tails.fit_statistic(s1, s2)
    assert stat.kind == "identity"
    fam = tails.make_family(stat, s1, tails.tail_levels(5000))
    got = fam.counts(s2)
    want = [np.sum(s2 > t) for t in fam.above] + [np.sum(s2 < t) for t in fam.below]
    assert got.tolist() == want and fam.size == len(want)


def test_statistics_for_vectors_and_discrete_outputs():
    rng = np.random.default_rng(1)
    a = rng.normal([1.0, 0.0], 1, (4000, 2))
    b = rng.normal([0.0, 0.0], 1, (4000, 2))
    w = np.asarray(tails.fit_statistic(a, b).weights)
    assert abs(w[0]) > 5 * abs(w[1])          # Fisher's direction: the mean difference
    c = rng.integers(0, 3, 3000)
    d = rng.integers(0, 3, 3000)
    d[d == 2] = 1                             # output 2 only ever comes from the first
    stat = tails.fit_statistic(c, d)
    assert stat.kind == "table"
    s = stat(np.array([0, 1, 2, 7]))
    assert s[2] == s.max() and s[3] == 0.0    # an unseen output scores 0


def test_sample_sizes_follow_the_claim_and_the_cap():
    assert tails.sample_sizes(1.0, 1e-5, 500_000, 10**9) == (5_000_000, 13_591_410)
    assert tails.sample_sizes(10.0, 1e-3, 500_000, 10**8) == (500_000, 10**8)
    assert tails.sample_sizes(1.0, 0.0, 1000, 10**8) == (1000, 1000)


def test_extreme_pairs_are_neighbors_at_the_domain_edges():
    m = lib.get("gaussian.mean_sens")
    pairs = tails.extreme_pairs(m, (5,))
    assert pairs and all(m.neighbors.are_neighbors(a, b) for a, b, _, _ in pairs)
    assert any(a.tolist() == [1, 1, 1, 1, 1] and b.tolist() == [-1, 1, 1, 1, 1]
               for a, b, _, _ in pairs)
    assert tails.extreme_pairs(lib.get("gaussian.analytic"), (1,)) == []   # unbounded
    add = tails.extreme_pairs(lib.get("gaussian.dpsgd"), (5,))
    assert any(len(b) == 6 and b[-1] == 10 for a, b, _, _ in add)
    assert isinstance(privet.mechanisms.get("gaussian.dpsgd").neighbors, type(m.neighbors))


def test_threshold_tails_match_brute_force_with_ties():
    """Both tails' counts (n11, n10, n01) over a grid, from one binary search per sample,
    against direct comparisons -- on integer scores (ties at every grid point) and on a grid
    that misses some scores."""
    from privet.attacks.threshold import tails as both_tails

    rng = np.random.default_rng(4)
    for s1, s2, ts in [
        (rng.integers(-3, 4, 2000).astype(float), rng.integers(-3, 4, 2000).astype(float),
         np.arange(-3.0, 4.0)),
        (rng.normal(size=2000), rng.normal(0.3, 1, 2000), np.array([-1.0, -0.2, 0.0, 2.5])),
    ]:
        got = both_tails(s1, s2, ts)
        for side, (e1, e2) in enumerate([(s1[:, None] >= ts, s2[:, None] >= ts),
                                         (s1[:, None] <= ts, s2[:, None] <= ts)]):
            n11, n10, n01 = (e1 & e2).sum(0), (e1 & ~e2).sum(0), (~e1 & e2).sum(0)
            want = np.array([n11, n10, n01], float)
            assert np.array_equal(got[side], want if side == 0 else want[:, ::-1])
