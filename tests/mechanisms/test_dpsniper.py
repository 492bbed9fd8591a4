"""DP-Sniper's evaluation mechanisms (privet.mechanisms.dpsniper)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import privet.mechanisms as lib
from privet.core.mechanism import ABORTED, FALSE
from privet.mechanisms import dpsniper as d

NAMES = [m.name for m in d.MECHANISMS]


def test_registered_by_name_and_paper_but_outside_the_suite_library():
    assert list(lib.by_paper("dpsniper")) == NAMES
    assert lib.get("dpsniper.svt1") is d.svt1
    assert not set(NAMES) & set(lib.all())
    assert set(NAMES) <= set(lib.opt_in())
    assert set(d.DP_SNIPER) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_native_and_black_box_agree_on_shapes_and_flags(name):
    m = d.get_local(name)
    x = lib.example_input(name)
    out = m.sample(x, 500, seed=1)
    box = d.vectorized(name)
    assert box.kind == "vectorized" and box.neighbors == m.neighbors
    got = box.sample(x, 500, seed=1)
    assert got.shape == out.shape
    assert np.all(np.isfinite(got))  # sentinels become DP-Sniper's flags
    if name in d.FLAGS:
        codes = set(np.unique(out[~np.isfinite(out)])) if out.dtype.kind == "f" else set()
        assert codes <= {ABORTED, FALSE}
        assert set(d.FLAGS[name].values()) & set(np.unique(got))


def test_murmur3_matches_published_vectors():
    assert d.murmur3_32(b"") == 0
    assert d.murmur3_32(b"foo") == -156908512
    assert d.murmur3_32(b"hello") == 613153351
    assert d.murmur3_32(b"hello world") == 1586663183


def test_rappor_instance_epsilon_counts_differing_bloom_bits():
    # DP-Sniper's pair (1, 0) differs in 6 bits; the worst neighbors of [-10, 10] in 8
    assert int(np.sum(d.bloom_bits(1) != d.bloom_bits(0))) == 6
    assert d.max_differing_bits() == 8
    assert d.rappor.true_epsilon == pytest.approx(8 * math.log(0.5125 / 0.4875))
    assert d.one_time_rappor.true_epsilon == pytest.approx(8 * math.log(0.525 / 0.475))


def _geo_sample_cdf(c: int, k: int = 3, n: int = 5) -> list[Fraction]:
    """F of Step 2 of GeoSample (Balcer and Vadhan, Alg. 4.8), normalized."""
    dd = (2 ** (k + 1) + 1) * (2**k + 1) ** (n - 1)
    f = [2 ** (k * (c - z)) * (2**k + 1) ** (n - (c - z)) if z < c
         else dd - 2 ** (k * (z - c + 1)) * (2**k + 1) ** (n - 1 - (z - c)) for z in range(n)]
    return [Fraction(v, dd) for v in f + [dd]]


@pytest.mark.parametrize("c", [0, 2, 5])
def test_truncated_geometric_is_geosample_exactly(c):
    dist = d.truncated_geometric.distribution([c], exact=True).as_dict()
    cdf, acc = [], Fraction(0)
    for z in range(6):
        acc += dist.get(z, 0)
        cdf.append(acc)
    assert cdf == _geo_sample_cdf(c)


def test_truncated_geometric_true_epsilon_is_exact():
    import privet

    res = privet.exact(d.truncated_geometric)
    assert float(res.epsilon) == pytest.approx(math.log(1.125))
    assert not res.verified  # 0.1178 > the claimed 0.1


def test_known_epsilon_of_the_instances():
    assert lib.known_epsilon("dpsniper.report_noisy_max3") == pytest.approx(0.25)
    assert lib.known_epsilon("dpsniper.prefix_sum") == pytest.approx(1.0)
    assert lib.known_epsilon("dpsniper.report_noisy_max4") == math.inf
    assert lib.known_epsilon("dpsniper.svt6") is None and d.UPPER_BOUND["dpsniper.svt6"] == 0.5


def test_svt3_true_epsilon_is_attained_far_below_the_threshold():
    """SVT3 (c = 1, 10 queries, eps1 = eps2 = 0.05): the output "9 FALSE, then the value v"
    has density  f(v - q_10) * int f_rho(r) prod_{i<10} F(r + T - q_i) 1[r <= v - T] dr
    (F, f: the Laplace(c/eps2) cdf and density). For v <= -T - 1 every argument lies in the
    Laplace's left tail, where F(x - 1)/F(x) = f(x - 1)/f(x) = exp(-eps2/c) exactly, so the
    log-ratio of q = (0,...,0) to q' = (1,...,1) is 10 eps2/c = 0.5, the library's
    stated true epsilon (and each factor's bound at a fixed r shows nothing exceeds it).
    Computed here by quadrature on a grid (the ratio of two sums with the same weights, so
    the grid's error cancels to rounding)."""
    from scipy import stats

    eps2, T, v = 0.05, 1.0, -40.0
    nu = stats.laplace(scale=1 / eps2)
    r = np.linspace(-800.0, v - T, 400_001)
    f_rho = stats.laplace(scale=1 / 0.05).pdf(r)

    def density(q: float) -> float:
        below = np.exp(9 * nu.logcdf(r + T - q))
        return float(np.sum(f_rho * below)) * nu.pdf(v - q)

    assert math.log(density(0.0) / density(1.0)) == pytest.approx(0.5, abs=1e-9)
    assert lib.known_epsilon("dpsniper.svt3") == pytest.approx(0.5)
    assert d.svt3.true_epsilon == pytest.approx(0.5)
    assert "dpsniper.svt3" not in d.UPPER_BOUND


def test_sparse_vector_answer_probabilities_by_quadrature():
    """The quadrature of SVT with c = 1 (k FALSE answers, then True): over k = 0..10 the
    answers' probabilities sum to 1; on SVT4's witness pair the answer "9 FALSE, then
    True" matches the mechanism's frequency in 400,000 runs within 4 binomial standard
    errors (p = 0.0094: 4 x 0.00015); and the instances' lower bounds lie within their
    upper ones (SVT1, SVT2: 0.1; SVT4: Lyu et al.'s 0.175) and near them."""
    for name in ("dpsniper.svt1", "dpsniper.svt4"):
        x, x2, k = d.SVT_WITNESS[name]
        scales = d.SVT_SCALES[name]
        total = sum(d.svt_answer_probability(x2, j, *scales) for j in range(11))
        assert total == pytest.approx(1.0, abs=1e-9)
    x, _, k = d.SVT_WITNESS["dpsniper.svt4"]
    p = d.svt_answer_probability(x, k, *d.SVT_SCALES["dpsniper.svt4"])
    n = 400_000
    out = d.svt4.sample(list(x), n, seed=5)
    hit = np.all(out[:, :k] == 0, axis=1) & (out[:, k] == 1)
    assert abs(hit.mean() - p) <= 4 * math.sqrt(p * (1 - p) / n)
    for name, top in (("dpsniper.svt1", 0.1), ("dpsniper.svt2", 0.1),
                      ("dpsniper.svt4", d.UPPER_BOUND["dpsniper.svt4"])):
        low = d.svt_instance_lower(name)
        assert 0.99 * top < low <= top
    assert d.svt_instance_lower("dpsniper.laplace") is None
