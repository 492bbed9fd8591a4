"""The evaluation mechanisms of DP-Sniper: Bichsel, Steffen, Bogunovic, Vechev,
*DP-Sniper: Black-Box Discovery of Differential Privacy Violations using Classifiers*
(S&P 2021), Sec. VI, written from the definitions they cite.

Every mechanism targets eps = 0.1 (the claimed epsilon here); inputs, neighbor relations and
input domains are those of DP-Sniper's evaluation: one input of length 1 (Laplace, truncated
geometric, RAPPOR, LaplaceParallel), histograms of length 5 over the integers 0..10 (one
entry changes by at most 1), noisy max over 5 reals in [-10, 10] and the sparse-vector
family, PrefixSum and NumericalSVT over 10 reals in [-10, 10] (every entry changes by at
most 1).

* Laplace: a + Lap(1/eps). Truncated geometric: GeoSample of Balcer and Vadhan (Alg. 4.8 of
  *Differential Privacy on Finite Computers*) on counts 0..5, with k = ceil(ln(2/eps)) as
  DP-Sniper instantiates it; its documented guarantee ln(1 + 2^-k) = 0.1178 exceeds the
  claimed 0.1.
* NoisyHist1/2: Algorithms 9 and 10 of StatDP (Lap(1/eps) and the wrong scale Lap(eps)).
* ReportNoisyMax1-4: Algorithms 5-8 of StatDP (argmax or max, Laplace or exponential noise
  of scale 2/eps).
* SVT1-6: Algorithms 1-6 of Lyu, Su, Li, *Understanding the Sparse Vector Technique* (VLDB
  2017) with c = 1 (SVT1: T = 0.5, the others T = 1): True/False answers (SVT3 releases the
  noisy answer above the threshold), ABORTED after c True answers (SVT1-4); SVT5 adds no
  noise to the queries and SVT6 never aborts.
* NumericalSVT and PrefixSum: Wang, Ding, Wang, Kifer, Zhang, *Proving Differential Privacy
  with Shadow Execution* (PLDI 2019), NumericalSVT with c = 2, T = 1.
* RAPPOR and one-time RAPPOR: Steps 1-3 (resp. 1-2) of Erlingsson, Pihur, Korolova (CCS
  2014): a Bloom filter of 20 bits set by 4 hashes of the value (MurmurHash3, as DP-Sniper
  uses), the permanent randomized response with f (0.75, resp. 0.95) and, for RAPPOR, the
  instantaneous one with p = 0.45, q = 0.55.
* LaplaceParallel: 20 Laplace mechanisms of eps = 0.005 each on the same input;
  SVT34Parallel: SVT3 and SVT4 with c = 2 side by side (20 outputs).

Each is written against privet's noise API (so it runs under Sampler, Replay and, for the
truncated geometric, Enumerate); :func:`vectorized` gives the same mechanism as a DP-Sniper
style black box ``m(a, n_samples)`` whose outputs use DP-Sniper's flags (-1 for an aborted
answer, -1000.0 / -2000.0 for SVT3's FALSE / ABORTED, -1000.0 for NumericalSVT's ABORTED).

``true_epsilon`` is the instance's epsilon over its domain where it is known exactly
(:data:`TRUE_EPSILON_NOTES` says how); :data:`DP_SNIPER` holds DP-Sniper's published eps_lcb
(logistic regression and neural network, eval_sp2021/reference-results of its repository).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import ops
from ..core.mechanism import ABORTED, FALSE, Domain, Mechanism, Output, from_vectorized, mechanism
from ..core.neighbors import all_differ, one_differs
from ..core.noise import Sampler
from ._common import halt_after, lyu_alg3, pad_aborted, positive_int, row

EPSILON = 0.1
PAPER = "DP-Sniper (Bichsel et al., S&P 2021)"

REAL_1 = Domain(length=1, low=-10.0, high=10.0)
COUNT_5 = Domain(length=1, integer=True, low=0, high=5)
HIST_5 = Domain(length=5, integer=True, low=0, high=10)
REAL_5 = Domain(length=5, low=-10.0, high=10.0)
REAL_10 = Domain(length=10, low=-10.0, high=10.0)
VALUE_1 = Domain(length=1, integer=True, low=-10, high=10)

BOOL_PADDED = Output.categorical((0, 1), sentinels=("ABORTED",), variable=True)
BOOLS = Output.categorical((0, 1))


# -- Laplace and truncated geometric ----------------------------------------------------------

@mechanism(name="dpsniper.laplace", epsilon=EPSILON, neighbors=one_differs(1), domain=REAL_1,
           output=Output.numeric(), true_epsilon=EPSILON, source=f"{PAPER}, Sec. VI")
def laplace(noise, a, *, epsilon):
    """Laplace mechanism: a + Lap(1/eps)."""
    return a[0] + noise.laplace(1.0 / epsilon)


GEO_N = 5


def geo_k(eps: float) -> int:
    """k = ceil(ln(2/eps)) as DP-Sniper instantiates GeoSample (natural logarithm)."""
    return math.ceil(math.log(2.0 / eps))


@mechanism(name="dpsniper.truncated_geometric", epsilon=EPSILON, neighbors=one_differs(1),
           domain=COUNT_5, output=Output.categorical(range(GEO_N + 1)),
           true_epsilon=math.log(1 + 2.0 ** -geo_k(EPSILON)),
           source=f"{PAPER}, Sec. VI (Balcer and Vadhan, Alg. 4.8)")
def truncated_geometric(noise, c, *, epsilon):
    """GeoSample of Balcer and Vadhan on counts 0..5: the output z has the cumulative
    distribution F of their Step 2, which is the two-sided geometric with
    alpha = 2^k / (2^k + 1) added to c and censored onto [0, n] (its mass beyond an end sits
    on the end), so it is drawn as clip(c + Z, 0, n). It is ln(1 + 2^-k)-DP (their Thm. 4.7),
    0.1178 for eps = 0.1 and k = ceil(ln(2/eps)) = 3, above the claim; the noise is finite,
    so exact enumeration gives every output's probability."""
    k = geo_k(epsilon)
    z = noise.truncated_geometric(Fraction(2**k, 2**k + 1), GEO_N)
    return np.clip(c[0] + z, 0, GEO_N)


# -- histograms and noisy max (StatDP Algorithms 5-10) ---------------------------------------

@mechanism(name="dpsniper.noisy_hist1", epsilon=EPSILON, neighbors=one_differs(1),
           domain=HIST_5, output=Output.numeric(length=5), true_epsilon=EPSILON,
           source=f"{PAPER}, Sec. VI (StatDP Alg. 9)")
def noisy_hist1(noise, a, *, epsilon):
    """Histogram with Lap(1/eps) on every bin."""
    return a + noise.laplace(1.0 / epsilon, a.shape)


@mechanism(name="dpsniper.noisy_hist2", epsilon=EPSILON, neighbors=one_differs(1),
           domain=HIST_5, output=Output.numeric(length=5), true_epsilon=1.0 / EPSILON,
           source=f"{PAPER}, Sec. VI (StatDP Alg. 10)")
def noisy_hist2(noise, a, *, epsilon):
    """Histogram with the wrong scale Lap(eps): (1/eps)-DP."""
    return a + noise.laplace(epsilon, a.shape)


@mechanism(name="dpsniper.report_noisy_max1", epsilon=EPSILON, neighbors=all_differ(1),
           domain=REAL_5, output=Output.categorical(range(5)), true_epsilon=EPSILON,
           source=f"{PAPER}, Sec. VI (StatDP Alg. 5)")
def report_noisy_max1(noise, a, *, epsilon):
    """Report noisy max with Lap(2/eps), the index."""
    return ops.argmax(a + noise.laplace(2.0 / epsilon, a.shape), axis=-1)


@mechanism(name="dpsniper.report_noisy_max2", epsilon=EPSILON, neighbors=all_differ(1),
           domain=REAL_5, output=Output.categorical(range(5)), true_epsilon=EPSILON,
           source=f"{PAPER}, Sec. VI (StatDP Alg. 6)")
def report_noisy_max2(noise, a, *, epsilon):
    """Report noisy max with exponential noise of scale 2/eps, the index."""
    return ops.argmax(a + noise.exponential(2.0 / epsilon, a.shape), axis=-1)


@mechanism(name="dpsniper.report_noisy_max3", epsilon=EPSILON, neighbors=all_differ(1),
           domain=REAL_5, output=Output.numeric(), true_epsilon=5 * EPSILON / 2,
           source=f"{PAPER}, Sec. VI (StatDP Alg. 7)")
def report_noisy_max3(noise, a, *, epsilon):
    """Noisy max with Lap(2/eps) releasing the value: (n eps / 2)-DP for n queries."""
    return ops.max(a + noise.laplace(2.0 / epsilon, a.shape), axis=-1)


@mechanism(name="dpsniper.report_noisy_max4", epsilon=EPSILON, neighbors=all_differ(1),
           domain=REAL_5, output=Output.numeric(), true_epsilon=math.inf,
           source=f"{PAPER}, Sec. VI (StatDP Alg. 8)")
def report_noisy_max4(noise, a, *, epsilon):
    """Noisy max with exponential noise releasing the value: the value is at least max(a),
    so values below max(a') are impossible under a' (infinite epsilon)."""
    return ops.max(a + noise.exponential(2.0 / epsilon, a.shape), axis=-1)


# -- the sparse vector family (Lyu, Su, Li, Algorithms 1-6) ----------------------------------

SVT_C = 1


def _stop_after(above, values, c: int):
    """Entries while fewer than c earlier answers were True, ABORTED after."""
    return pad_aborted(values, halt_after(above, c))


def _answers(noise, a, T, rho_scale: float, nu_scale: float | None, c: int | None):
    """Lyu et al.'s comparisons a + Lap(nu_scale) >= T + Lap(rho_scale) (no query noise
    when ``nu_scale`` is None), ABORTED after ``c`` Trues (never when ``c`` is None)."""
    rho = noise.laplace(rho_scale)
    noisy = a + noise.laplace(nu_scale, a.shape) if nu_scale is not None else a
    above = ops.ge(noisy, row(T + rho))
    return above if c is None else _stop_after(above, above, c)


@mechanism(name="dpsniper.svt1", epsilon=EPSILON, neighbors=all_differ(1), domain=REAL_10,
           output=BOOL_PADDED, args={"c": SVT_C, "T": 0.5}, true_epsilon=EPSILON,
           source=f"{PAPER}, Sec. VI (Lyu et al., Alg. 1)")
def svt1(noise, a, *, epsilon, c=SVT_C, T=0.5):
    """SVT1: rho ~ Lap(2/eps), nu ~ Lap(4c/eps); True/False, ABORTED after c Trues."""
    c = positive_int("c", c)
    return _answers(noise, a, T, 2.0 / epsilon, 4.0 * c / epsilon, c)


@mechanism(name="dpsniper.svt2", epsilon=EPSILON, neighbors=all_differ(1), domain=REAL_10,
           output=BOOL_PADDED, args={"c": SVT_C, "T": 1.0}, true_epsilon=EPSILON,
           source=f"{PAPER}, Sec. VI (Lyu et al., Alg. 2)")
def svt2(noise, a, *, epsilon, c=SVT_C, T=1.0):
    """SVT2: rho ~ Lap(2c/eps) drawn afresh after every True, nu ~ Lap(4c/eps).

    The fresh threshold noise is drawn up front, one per entry (used only after a True),
    so the draws do not depend on the input, as Replay needs."""
    c = positive_int("c", c)
    eps1 = epsilon / 2
    eps2 = epsilon - eps1
    rho = noise.laplace(c / eps1)
    fresh = noise.laplace(c / eps1, a.shape)
    noisy = a + noise.laplace(2.0 * c / eps2, a.shape)
    threshold, count, out = T + rho, 0, []
    for i in range(a.shape[-1]):
        above = ops.ge(noisy[:, i], threshold)
        live = ops.lt(count, c - 0.5)
        out.append(ops.where(live, above, ABORTED))
        hit = ops.logical_and(live, above)
        count = count + hit
        threshold = ops.where(hit, T + fresh[:, i], threshold)
    return np.stack([np.broadcast_to(v, (noise.size,)) for v in out], axis=-1)


@mechanism(name="dpsniper.svt3", epsilon=EPSILON, neighbors=all_differ(1), domain=REAL_10,
           output=Output.numeric(sentinels=("FALSE", "ABORTED"), variable=True),
           args={"c": SVT_C, "T": 1.0}, true_epsilon=10 * EPSILON / (2 * SVT_C),
           source=f"{PAPER}, Sec. VI (Lyu et al., Alg. 3)")
def svt3(noise, a, *, epsilon, c=SVT_C, T=1.0):
    """SVT3: nu ~ Lap(2c/eps); releases the noisy answer above the threshold, FALSE below,
    ABORTED after c answers above. Its epsilon grows with the number of queries n: n eps/(2c)
    (0.5 for 10 queries, c = 1; see TRUE_EPSILON_NOTES), Lyu et al.'s "not private"."""
    c = positive_int("c", c)
    noisy, above = lyu_alg3(noise, a, epsilon, T, c)
    return _stop_after(above, ops.where(above, noisy, FALSE), c)


@mechanism(name="dpsniper.svt4", epsilon=EPSILON, neighbors=all_differ(1), domain=REAL_10,
           output=BOOL_PADDED, args={"c": SVT_C, "T": 1.0}, true_epsilon=None,
           source=f"{PAPER}, Sec. VI (Lyu et al., Alg. 4)")
def svt4(noise, a, *, epsilon, c=SVT_C, T=1.0):
    """SVT4: eps1 = eps/4, rho ~ Lap(1/eps1), nu ~ Lap(1/eps2): ((1 + 6c)/4) eps-DP."""
    c = positive_int("c", c)
    return _answers(noise, a, T, 4.0 / epsilon, 4.0 / (3.0 * epsilon), c)


@mechanism(name="dpsniper.svt5", epsilon=EPSILON, neighbors=all_differ(1), domain=REAL_10,
           output=BOOLS, args={"T": 1.0}, true_epsilon=math.inf,
           source=f"{PAPER}, Sec. VI (Lyu et al., Alg. 5)")
def svt5(noise, a, *, epsilon, T=1.0):
    """SVT5: no noise on the queries, no abort: answers impossible on one side."""
    return _answers(noise, a, T, 2.0 / epsilon, None, None)


@mechanism(name="dpsniper.svt6", epsilon=EPSILON, neighbors=all_differ(1), domain=REAL_10,
           output=BOOLS, args={"T": 1.0}, true_epsilon=None,
           source=f"{PAPER}, Sec. VI (Lyu et al., Alg. 6)")
def svt6(noise, a, *, epsilon, T=1.0):
    """SVT6: rho ~ Lap(2/eps), nu ~ Lap(2/eps), no abort: each of the n answers costs up to
    eps/2, so its epsilon grows with the number of queries (at most 0.5 for 10)."""
    return _answers(noise, a, T, 2.0 / epsilon, 2.0 / epsilon, None)


@mechanism(name="dpsniper.numerical_svt", epsilon=EPSILON, neighbors=all_differ(1),
           domain=REAL_10, output=Output.numeric(sentinels=("ABORTED",), variable=True),
           args={"c": 2, "T": 1.0}, true_epsilon=None,
           source=f"{PAPER}, Sec. VI (Wang et al., PLDI 2019)")
def numerical_svt(noise, a, *, epsilon, c=2, T=1.0):
    """NumericalSVT: compares a + Lap(6c/eps) with T + Lap(3/eps) and releases a fresh
    a + Lap(3c/eps) above the threshold (0 below), ABORTED after c answers above."""
    c = positive_int("c", c)
    rho1 = noise.laplace(3.0 / epsilon)
    rho2 = noise.laplace(6.0 * c / epsilon, a.shape)
    rho3 = noise.laplace(3.0 * c / epsilon, a.shape)
    above = ops.ge(a + rho2, row(T + rho1))
    return _stop_after(above, ops.where(above, a + rho3, 0.0), c)


@mechanism(name="dpsniper.svt34_parallel", epsilon=EPSILON, neighbors=all_differ(1),
           domain=REAL_10, output=Output.numeric(length=20, sentinels=("FALSE", "ABORTED")),
           args={"c": 2, "T": 1.0}, true_epsilon=None,
           source=f"{PAPER}, Sec. VI (Lyu et al., Alg. 3 and 4 side by side)")
def svt34_parallel(noise, a, *, epsilon, c=2, T=1.0):
    """SVT3 and SVT4 (c = 2) on the same queries with independent noise, outputs joined."""
    left = svt3.fn(noise, a, epsilon=epsilon, c=c, T=T)
    right = svt4.fn(noise, a, epsilon=epsilon, c=c, T=T)
    return np.concatenate([np.asarray(left, dtype=float), np.asarray(right, dtype=float)],
                          axis=-1)


@mechanism(name="dpsniper.prefix_sum", epsilon=EPSILON, neighbors=all_differ(1),
           domain=REAL_10, output=Output.numeric(length=10), true_epsilon=10 * EPSILON,
           source=f"{PAPER}, Sec. VI (Wang et al., PLDI 2019)")
def prefix_sum(noise, a, *, epsilon):
    """Prefix sums of a + Lap(1/eps): the sums are an invertible linear map of the noisy
    answers, so under 'every answer changes by at most 1' it is (n eps)-DP (1.0 for 10)."""
    return ops.cumsum(a + noise.laplace(1.0 / epsilon, a.shape), axis=-1)


@mechanism(name="dpsniper.laplace_parallel", epsilon=EPSILON, neighbors=one_differs(1),
           domain=REAL_1, output=Output.numeric(length=20), args={"copies": 20},
           true_epsilon=EPSILON, source=f"{PAPER}, Sec. VI")
def laplace_parallel(noise, a, *, epsilon, copies=20):
    """``copies`` Laplace mechanisms of eps/copies each on the same input (20 x 0.005)."""
    copies = positive_int("copies", copies)
    return a[0] + noise.laplace(copies / epsilon, (copies,))


# -- RAPPOR (Erlingsson, Pihur, Korolova, CCS 2014) -------------------------------------------

FILTER = 20
HASHES = 4


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 (x86, 32 bit) as a signed int, the hash DP-Sniper's RAPPOR uses."""
    mask = 0xFFFFFFFF
    c1, c2 = 0xCC9E2D51, 0x1B873593

    def rotl(v: int, r: int) -> int:
        return ((v << r) | (v >> (32 - r))) & mask

    def scramble(k: int) -> int:
        return (rotl((k * c1) & mask, 15) * c2) & mask

    h = seed & mask
    blocks = len(data) // 4
    for i in range(blocks):
        h ^= scramble(int.from_bytes(data[4 * i: 4 * i + 4], "little"))
        h = (rotl(h, 13) * 5 + 0xE6546B64) & mask
    tail = data[4 * blocks:]
    if tail:
        h ^= scramble(int.from_bytes(tail, "little"))
    h ^= len(data)
    for shift, mult in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
        h = ((h ^ (h >> shift)) * mult) & mask
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def bloom_bits(value: int, hashes: int = HASHES, size: int = FILTER) -> np.ndarray:
    """The Bloom filter of ``value``: bit murmur3(str(value), seed i) mod size set, i < hashes."""
    bits = np.zeros(size, dtype=np.int64)
    for i in range(hashes):
        bits[murmur3_32(str(int(value)).encode(), i) % size] = 1
    return bits


def _permanent_rr(noise, bits: np.ndarray, f: float):
    """Each bit set to 1 or 0 with probability f/2 each, kept with probability 1 - f (one
    uniform per bit: below f/2 sets it, between f/2 and f clears it)."""
    u = noise.uniform(0.0, 1.0, bits.shape)
    return ops.where(u < f / 2, 1, ops.where(u < f, 0, bits))


def bit_probability(bit: int, f: float, p: float | None = None, q: float | None = None
                    ) -> float:
    """P[reported bit = 1] given the Bloom-filter bit: the permanent randomized response
    keeps it with probability 1 - f (else sets it to 1 or 0 with f/2 each); with p and q,
    the instantaneous one then reports 1 with probability q if set and p if not."""
    keep = 1 - f / 2 if bit else f / 2  # P[permanent bit = 1]
    return keep if p is None or q is None else keep * q + (1 - keep) * p


def bit_epsilon(f: float, p: float | None = None, q: float | None = None) -> float:
    """The privacy cost of one Bloom-filter bit that differs between two values:
    ln(P[report 1 | bit set] / P[report 1 | bit unset]) (:func:`bit_probability`)."""
    return math.log(bit_probability(1, f, p, q) / bit_probability(0, f, p, q))


def max_differing_bits(low: int = -10, high: int = 10) -> int:
    """The most Bloom-filter bits in which neighboring values v, v + 1 of [low, high] differ."""
    return max(int(np.sum(bloom_bits(v) != bloom_bits(v + 1))) for v in range(low, high))


def rappor_epsilon(f: float, p: float | None = None, q: float | None = None) -> float:
    """Exact epsilon of a RAPPOR instance on [-10, 10]: the reported bits are independent
    given the value, so the worst event sets every differing bit to its worse side: the
    bit cost times the most differing bits of neighboring values (8 of 20 here)."""
    return max_differing_bits() * bit_epsilon(f, p, q)


@mechanism(name="dpsniper.rappor", epsilon=EPSILON, neighbors=one_differs(1), domain=VALUE_1,
           output=Output.categorical((0, 1), length=FILTER),
           args={"f": 0.75, "p": 0.45, "q": 0.55}, true_epsilon=rappor_epsilon(0.75, 0.45, 0.55),
           source=f"{PAPER}, Sec. VI (RAPPOR Steps 1-3)")
def rappor(noise, a, *, f=0.75, p=0.45, q=0.55):
    """RAPPOR: Bloom filter, permanent randomized response (f), then each bit reported as 1
    with probability q if set and p if not."""
    prr = _permanent_rr(noise, bloom_bits(int(np.asarray(a).ravel()[0])), f)
    return (noise.uniform(0.0, 1.0, (FILTER,)) < ops.where(prr == 1, q, p)).astype(np.int64)


@mechanism(name="dpsniper.one_time_rappor", epsilon=EPSILON, neighbors=one_differs(1),
           domain=VALUE_1, output=Output.categorical((0, 1), length=FILTER),
           args={"f": 0.95}, true_epsilon=rappor_epsilon(0.95),
           source=f"{PAPER}, Sec. VI (RAPPOR Steps 1-2)")
def one_time_rappor(noise, a, *, f=0.95):
    """One-time RAPPOR: the Bloom filter after the permanent randomized response only."""
    return _permanent_rr(noise, bloom_bits(int(np.asarray(a).ravel()[0])), f).astype(np.int64)


MECHANISMS = (laplace, truncated_geometric, noisy_hist1, noisy_hist2, report_noisy_max1,
              report_noisy_max2, report_noisy_max3, report_noisy_max4, svt1, svt2, svt3, svt4,
              svt5, svt6, rappor, one_time_rappor, laplace_parallel, svt34_parallel,
              prefix_sum, numerical_svt)

PER_QUERY = frozenset({"dpsniper.noisy_hist1", "dpsniper.noisy_hist2", "dpsniper.svt1",
                       "dpsniper.svt2", "dpsniper.svt3", "dpsniper.svt4", "dpsniper.svt5",
                       "dpsniper.svt6", "dpsniper.prefix_sum", "dpsniper.numerical_svt"})

EXAMPLES: dict[str, list[float]] = {m.name: [1.0] * (m.domain.length or 1) for m in MECHANISMS}


# -- true epsilon of each instance --------------------------------------------------------------

TRUE_EPSILON_NOTES = {
    "dpsniper.truncated_geometric": "exact (every output's ratio is 1 + 2^-k)",
    "dpsniper.report_noisy_max3": "n eps / 2 for n = 5 queries (StatDP)",
    "dpsniper.report_noisy_max4": "outputs below max(a') are impossible under a'",
    "dpsniper.svt3": "n eps / (2c) = 0.5 for n = 10, c = 1: each FALSE and the released "
                     "value cost at most eps/(2c) at a fixed threshold, with equality far "
                     "below it (c - 1 values, then n - c FALSE, the last value at query n); "
                     "it grows with n (Lyu et al.: not eps'-DP for any eps')",
    "dpsniper.svt4": "not known exactly; between 0.1748 (svt_instance_lower: the exact ratio "
                     "of one answer on one pair) and Lyu et al.'s bound 7 eps / 4 = 0.175 "
                     "for c = 1",
    "dpsniper.svt5": "answers impossible on one side",
    "dpsniper.svt6": "not known exactly; at most 10 x eps / 2 = 0.5 for 10 queries",
    "dpsniper.rappor": "exact: bit cost x most differing Bloom-filter bits of neighbors",
    "dpsniper.one_time_rappor": "exact: bit cost x most differing Bloom-filter bits of "
                                "neighbors",
    "dpsniper.svt34_parallel": "not known exactly",
    "dpsniper.prefix_sum": "n eps for n = 10 (the sums determine the noisy answers)",
    "dpsniper.numerical_svt": "not known exactly; at most eps (Wang et al.)",
    "dpsniper.laplace_parallel": "20 x 0.005",
}

# Upper bounds from the literature where the exact value is not known (for reports).
UPPER_BOUND = {"dpsniper.svt4": 7 * EPSILON / 4,
               "dpsniper.svt6": 10 * EPSILON / 2, "dpsniper.numerical_svt": EPSILON}


# -- sparse vector with c = 1: output probabilities by quadrature -----------------------------

# (threshold T, threshold noise scale, query noise scale) at eps = 0.1, c = 1
SVT_SCALES = {"dpsniper.svt1": (0.5, 2 / EPSILON, 4 / EPSILON),
              "dpsniper.svt2": (1.0, 2 / EPSILON, 4 / EPSILON),
              "dpsniper.svt4": (1.0, 4 / EPSILON, 4 / (3 * EPSILON))}
# a neighboring pair of the domain and its answer "k FALSE, then True" (ABORTED after): the
# best found among step pairs whose k FALSE entries are at lo (x) and lo + 1 (x') and whose
# True entry is at hi and hi - 1, over lo, hi on a grid of the domain
SVT_WITNESS = {
    "dpsniper.svt1": ((9.0,) * 9 + (-9.0,), (10.0,) * 9 + (-10.0,), 9),
    "dpsniper.svt2": ((9.0,) * 9 + (-9.0,), (10.0,) * 9 + (-10.0,), 9),
    "dpsniper.svt4": ((0.0,) * 9 + (1.0,), (1.0,) * 9 + (0.0,), 9),
}


def svt_answer_probability(a, k: int, T: float, rho_scale: float, nu_scale: float) -> float:
    """P[the first k answers FALSE, answer k True] (k = len(a): every answer FALSE) of the
    sparse vector a_i + Lap(nu_scale) >= T + Lap(rho_scale) with c = 1, by adaptive
    quadrature over the threshold noise (the integrand's kinks, at 0 and a_i - T, are
    breakpoints; beyond 60 scales the mass is below 1e-26)."""
    from scipy import integrate

    a = np.asarray(a, dtype=float)

    def cdf(z):
        return 0.5 * math.exp(z / nu_scale) if z < 0 else 1.0 - 0.5 * math.exp(-z / nu_scale)

    def f(r):
        g = math.exp(-abs(r) / rho_scale) / (2 * rho_scale)
        for v in a[:k]:
            g *= cdf(T + r - v)
        if k < len(a):
            g *= 1.0 - cdf(T + r - a[k])
        return g

    span = 60 * max(rho_scale, nu_scale)
    kinks = sorted({0.0, *(float(v) - T for v in a[: k + 1])})
    edges = [-span, *kinks, span]
    return float(sum(integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-11, limit=200)[0]
                     for lo, hi in zip(edges[:-1], edges[1:])))


def svt_instance_lower(name: str) -> float | None:
    """A lower bound on the instance's epsilon over its domain: the exact log-ratio (by
    :func:`svt_answer_probability`) of :data:`SVT_WITNESS`'s answer on its pair; None for
    mechanisms without one. SVT1 and SVT2: 0.0996 of their 0.1; SVT4: 0.1748 of Lyu et
    al.'s bound 0.175."""
    if name not in SVT_WITNESS:
        return None
    x, x2, k = SVT_WITNESS[name]
    scales = SVT_SCALES[name]
    return math.log(svt_answer_probability(x, k, *scales)
                    / svt_answer_probability(x2, k, *scales))


KNOWN: dict[str, Callable[[float, int | None, Mapping[str, Any]], float | None]] = {
    "dpsniper.laplace": lambda e, n, a: e,
    "dpsniper.truncated_geometric": lambda e, n, a: math.log(1 + 2.0 ** -geo_k(e)),
    "dpsniper.noisy_hist1": lambda e, n, a: e,
    "dpsniper.noisy_hist2": lambda e, n, a: 1.0 / e,
    "dpsniper.report_noisy_max1": lambda e, n, a: e,
    "dpsniper.report_noisy_max2": lambda e, n, a: e,
    "dpsniper.report_noisy_max3": lambda e, n, a: e * (5 if n is None else n) / 2,
    "dpsniper.report_noisy_max4": lambda e, n, a: math.inf,
    "dpsniper.svt1": lambda e, n, a: e if int(a.get("c", 1)) == 1 else None,
    "dpsniper.svt2": lambda e, n, a: e if int(a.get("c", 1)) == 1 else None,
    "dpsniper.svt3": lambda e, n, a: (10 if n is None else n) * e / (2 * int(a.get("c", 1))),
    "dpsniper.svt4": lambda e, n, a: None,
    "dpsniper.svt5": lambda e, n, a: math.inf,
    "dpsniper.svt6": lambda e, n, a: None,
    "dpsniper.rappor": lambda e, n, a: rappor_epsilon(a["f"], a["p"], a["q"]),
    "dpsniper.one_time_rappor": lambda e, n, a: rappor_epsilon(a["f"]),
    "dpsniper.laplace_parallel": lambda e, n, a: e,
    "dpsniper.svt34_parallel": lambda e, n, a: None,
    "dpsniper.prefix_sum": lambda e, n, a: e * (10 if n is None else n),
    "dpsniper.numerical_svt": lambda e, n, a: None,
}

# DP-Sniper's published eps_lcb (confidence 0.9): (logistic regression, neural network), from
# eval_sp2021/reference-results/dd_search_{reg,mlp}_data.log of eth-sri/dp-sniper.
DP_SNIPER: dict[str, tuple[float, float]] = {
    "dpsniper.laplace": (0.0968, 0.0976),
    "dpsniper.truncated_geometric": (0.1156, 0.1155),
    "dpsniper.noisy_hist1": (0.0978, 0.0977),
    "dpsniper.noisy_hist2": (4.6020, 4.6015),
    "dpsniper.report_noisy_max1": (0.0923, 0.0925),
    "dpsniper.report_noisy_max2": (0.0975, 0.0979),
    "dpsniper.report_noisy_max3": (0.2478, 0.2488),
    "dpsniper.report_noisy_max4": (0.3463, 0.3534),
    "dpsniper.svt1": (0.0858, 0.0858),
    "dpsniper.svt2": (0.0859, 0.0852),
    "dpsniper.svt3": (0.1716, 0.1822),
    "dpsniper.svt4": (0.1687, 0.1696),
    "dpsniper.svt5": (1.7612, 1.7610),
    "dpsniper.svt6": (0.2720, 0.2698),
    "dpsniper.rappor": (0.2930, 0.3008),
    "dpsniper.one_time_rappor": (0.5978, 0.5999),
    "dpsniper.laplace_parallel": (0.0350, 0.0299),
    "dpsniper.svt34_parallel": (0.2610, 0.2616),
    "dpsniper.prefix_sum": (0.5040, 0.5774),
    "dpsniper.numerical_svt": (0.0343, 0.0345),
}

# DP-Sniper's encoding of privet's sentinels in each black box's outputs.
FLAGS: dict[str, dict[float, float]] = {
    "dpsniper.svt1": {ABORTED: -1.0}, "dpsniper.svt2": {ABORTED: -1.0},
    "dpsniper.svt4": {ABORTED: -1.0},
    "dpsniper.svt3": {FALSE: -1000.0, ABORTED: -2000.0},
    "dpsniper.svt34_parallel": {FALSE: -1000.0, ABORTED: -2000.0},
    "dpsniper.numerical_svt": {ABORTED: -1000.0},
}


def get_local(name: str) -> Mechanism:
    for m in MECHANISMS:
        if m.name == name:
            return m
    raise KeyError(name)


class _BlackBox:
    """``m(a, n_samples)`` in DP-Sniper's style (NumPy's global generator, flags for the
    sentinels), running the noise-API mechanism with a generator seeded from it."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, a, n_samples: int = 1) -> np.ndarray:
        mech = get_local(self.name)
        rng = np.random.default_rng(np.random.randint(0, 2**31 - 1, size=4))
        out = np.asarray(mech.run(Sampler(rng, int(n_samples)), np.asarray(a)), dtype=float)
        for code, flag in FLAGS.get(self.name, {}).items():
            out[out == code] = flag
        return out


def vectorized(name: str) -> Mechanism:
    """The mechanism ``name`` as a DP-Sniper style vectorized black box (``m(a, n)``) with
    the same spec (claimed epsilon, neighbors, domain); it can only be sampled."""
    m = get_local(name)
    return from_vectorized(_BlackBox(name), epsilon=m.epsilon, name=name, neighbors=m.neighbors,
                           domain=m.domain, true_epsilon=m.true_epsilon, source=m.source)


__all__ = ["DP_SNIPER", "KNOWN", "MECHANISMS", "SVT_WITNESS", "TRUE_EPSILON_NOTES", "UPPER_BOUND",
           "bloom_bits", "murmur3_32", "rappor_epsilon", "svt_answer_probability",
           "svt_instance_lower", "vectorized"]
