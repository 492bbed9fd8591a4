"""The StatDP benchmarks: Algorithms 5-15 of Ding et al., *Detecting Violations of
Differential Privacy* (CCS 2018).

Every mechanism takes a list of query answers (sensitivity Delta = 1), the claimed epsilon
(default 0.7; the paper tests 0.2, 0.7 and 1.5, use ``mech.replace(epsilon=...)``) and, for
the sparse vector family, the threshold ``T`` and the bound ``N`` on True answers. Defaults
follow the StatDP artifact (SVT: T = 0.5, N = 1; iSVT: T = 1, N = 1).

Output encodings: indices are 0-based; True/False answers are 1/0, and variable-length
outputs are padded with ``privet.ABORTED`` after the mechanism stops; iSVT4 answers FALSE
(``privet.FALSE``) below the threshold and the noisy value above it.

``true_epsilon`` is the supremum over the declared domain at the default epsilon and
arguments; :func:`known_epsilon` gives it for another epsilon, input length or arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..core import ops
from ..core.mechanism import FALSE, Output, mechanism
from ..core.neighbors import all_differ, one_differs
from ._common import INDEXED, QUERIES, halt_after, index_categories, pad_aborted, positive_int, row

EPSILON = 0.7
PAPER = "StatDP (Ding et al., CCS 2018)"
T_RANGE = (-1.0, 3.0)
N_RANGE = [1, 2, 3, 4, 5]

BOOL_PADDED = Output.categorical((0, 1), sentinels=("ABORTED",), variable=True)
BOOLS = Output.categorical((0, 1))


# -- Noisy Max (Sec. 5.1) ------------------------------------------------------------------

@mechanism(name="statdp.noisy_max_v1a", epsilon=EPSILON, neighbors=all_differ(1),
           domain=INDEXED, output=Output.categorical(index_categories()),
           true_epsilon=EPSILON, source=f"{PAPER}, Algorithm 5")
def noisy_max_v1a(noise, q, *, epsilon):
    """Report Noisy Max with Lap(2/eps) noise, returning the index (correct)."""
    noisy = q + noise.laplace(2.0 / epsilon, q.shape)
    return ops.argmax(noisy, axis=-1)


@mechanism(name="statdp.noisy_max_v2a", epsilon=EPSILON, neighbors=all_differ(1),
           domain=INDEXED, output=Output.categorical(index_categories()),
           true_epsilon=EPSILON, source=f"{PAPER}, Algorithm 6")
def noisy_max_v2a(noise, q, *, epsilon):
    """Report Noisy Max with Exponential(2/eps) noise, returning the index (correct)."""
    noisy = q + noise.exponential(2.0 / epsilon, q.shape)
    return ops.argmax(noisy, axis=-1)


@mechanism(name="statdp.noisy_max_v1b", epsilon=EPSILON, neighbors=all_differ(1),
           domain=QUERIES, output=Output.numeric(), true_epsilon=math.inf,
           source=f"{PAPER}, Algorithm 7")
def noisy_max_v1b(noise, q, *, epsilon):
    """Noisy Max with Lap(2/eps) noise returning the maximum value (incorrect: eps*|Q|/2)."""
    noisy = q + noise.laplace(2.0 / epsilon, q.shape)
    return ops.max(noisy, axis=-1)


@mechanism(name="statdp.noisy_max_v2b", epsilon=EPSILON, neighbors=all_differ(1),
           domain=QUERIES, output=Output.numeric(), true_epsilon=math.inf,
           source=f"{PAPER}, Algorithm 8")
def noisy_max_v2b(noise, q, *, epsilon):
    """Noisy Max with Exponential(2/eps) noise returning the maximum value (not private)."""
    noisy = q + noise.exponential(2.0 / epsilon, q.shape)
    return ops.max(noisy, axis=-1)


# -- Histogram (Sec. 5.2) ------------------------------------------------------------------

@mechanism(name="statdp.histogram", epsilon=EPSILON, neighbors=one_differs(1),
           domain=QUERIES, output=Output.numeric(), true_epsilon=EPSILON,
           source=f"{PAPER}, Algorithm 9")
def histogram(noise, q, *, epsilon):
    """Histogram with Lap(1/eps) noise on every bin (correct)."""
    return q + noise.laplace(1.0 / epsilon, q.shape)


@mechanism(name="statdp.histogram_eps", epsilon=EPSILON, neighbors=one_differs(1),
           domain=QUERIES, output=Output.numeric(), true_epsilon=1.0 / EPSILON,
           source=f"{PAPER}, Algorithm 10")
def histogram_eps(noise, q, *, epsilon):
    """Histogram with the wrong scale Lap(eps): it is (1/eps)-DP, not eps-DP."""
    return q + noise.laplace(epsilon, q.shape)


# -- Sparse Vector (Sec. 5.3) --------------------------------------------------------------

@mechanism(name="statdp.svt", epsilon=EPSILON, neighbors=all_differ(1), domain=QUERIES,
           output=BOOL_PADDED, arg_ranges={"T": T_RANGE, "N": N_RANGE}, noise_args=("N",),
           true_epsilon=EPSILON, source=f"{PAPER}, Algorithm 11 (Lyu et al., Alg. 1)")
def svt(noise, q, *, epsilon, T=0.5, N=1):
    """Sparse Vector Technique of Lyu et al.: True/False per query, halts after N Trues.

    Threshold noise Lap(2/eps); query noise Lap(4N/eps). The text copy of Algorithm 11
    prints Lap(2*N*Delta/eps) for the queries, which would cost 1.5*eps for N = 1 under
    ALL_DIFFER; Lyu et al.'s Algorithm 1 (the cited source, eps2 = eps/2, scale
    2*N*Delta/eps2) and the StatDP artifact use 4*N*Delta/eps, as we do.
    """
    N = positive_int("N", N)
    rho = noise.laplace(2.0 / epsilon)
    nu = noise.laplace(4.0 * N / epsilon, q.shape)
    above = ops.ge(q + nu, row(T + rho))
    return pad_aborted(above, halt_after(above, N))


@mechanism(name="statdp.isvt1", epsilon=EPSILON, neighbors=all_differ(1), domain=QUERIES,
           output=BOOLS, arg_ranges={"T": T_RANGE}, true_epsilon=math.inf,
           source=f"{PAPER}, Algorithm 12")
def isvt1(noise, q, *, epsilon, T=1.0):
    """iSVT1: no noise on the queries and no bound on True answers (not private)."""
    rho = noise.laplace(1.0 / epsilon)
    return ops.ge(q, row(T + rho))


@mechanism(name="statdp.isvt2", epsilon=EPSILON, neighbors=all_differ(1), domain=QUERIES,
           output=BOOLS, arg_ranges={"T": T_RANGE}, true_epsilon=math.inf,
           source=f"{PAPER}, Algorithm 14")
def isvt2(noise, q, *, epsilon, T=1.0):
    """iSVT2: Lap(2/eps) on threshold and queries, no bound on True answers (not private)."""
    rho = noise.laplace(2.0 / epsilon)
    nu = noise.laplace(2.0 / epsilon, q.shape)
    return ops.ge(q + nu, row(T + rho))


@mechanism(name="statdp.isvt3", epsilon=EPSILON, neighbors=all_differ(1), domain=QUERIES,
           output=BOOL_PADDED, arg_ranges={"T": T_RANGE, "N": N_RANGE},
           true_epsilon=(1 + 6 * 1) / 4 * EPSILON, source=f"{PAPER}, Algorithm 13")
def isvt3(noise, q, *, epsilon, T=1.0, N=1):
    """iSVT3: query noise Lap(4/(3 eps)) does not scale with N; it is ((1+6N)/4)*eps-DP."""
    N = positive_int("N", N)
    rho = noise.laplace(4.0 / epsilon)
    nu = noise.laplace(4.0 / (3.0 * epsilon), q.shape)
    above = ops.ge(q + nu, row(T + rho))
    return pad_aborted(above, halt_after(above, N))


@mechanism(name="statdp.isvt4", epsilon=EPSILON, neighbors=all_differ(1), domain=QUERIES,
           output=Output.numeric(sentinels=("FALSE", "ABORTED"), variable=True),
           arg_ranges={"T": T_RANGE, "N": N_RANGE}, noise_args=("N",), true_epsilon=math.inf,
           source=f"{PAPER}, Algorithm 15")
def isvt4(noise, q, *, epsilon, T=1.0, N=1):
    """iSVT4: releases the noisy answer q + nu when it is above the threshold (not private;
    Lyu et al. Alg. 3 is infinity-DP over unboundedly many queries)."""
    N = positive_int("N", N)
    rho = noise.laplace(2.0 / epsilon)
    nu = noise.laplace(2.0 * N / epsilon, q.shape)
    noisy = q + nu
    above = ops.ge(noisy, row(T + rho))
    return pad_aborted(ops.where(above, noisy, FALSE), halt_after(above, N))


MECHANISMS = (noisy_max_v1a, noisy_max_v1b, noisy_max_v2a, noisy_max_v2b, histogram,
              histogram_eps, svt, isvt1, isvt2, isvt3, isvt4)

# Outputs with one entry per query (the others return one scalar per sample).
PER_QUERY = frozenset({"statdp.histogram", "statdp.histogram_eps", "statdp.svt",
                       "statdp.isvt1", "statdp.isvt2", "statdp.isvt3", "statdp.isvt4"})

EXAMPLES: dict[str, list[float]] = {m.name: [1.0, 1.0, 1.0, 1.0, 1.0] for m in MECHANISMS}
EXAMPLES["statdp.isvt1"] = [1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def _n(length: int | None) -> float:
    return math.inf if length is None else float(length)


# Known epsilon as a function of (epsilon, input length or None for the whole domain, args);
# None where the literature gives no value.
KNOWN: dict[str, Callable[[float, int | None, Mapping[str, Any]], float | None]] = {
    "statdp.noisy_max_v1a": lambda e, n, a: e,
    "statdp.noisy_max_v2a": lambda e, n, a: e,
    # the max of n values each shifted by 1: density ratio e^(n*eps/2) in the left tail
    "statdp.noisy_max_v1b": lambda e, n, a: e * _n(n) / 2,
    # max(q + Exp) >= min(q): the event "below min(q)" has probability 0 on one side
    "statdp.noisy_max_v2b": lambda e, n, a: math.inf,
    "statdp.histogram": lambda e, n, a: e,
    "statdp.histogram_eps": lambda e, n, a: 1.0 / e,
    "statdp.svt": lambda e, n, a: e,
    # with two or more queries the noiseless answers give outputs impossible on one side
    "statdp.isvt1": lambda e, n, a: math.inf if n is None or n >= 2 else e,
    "statdp.isvt2": lambda e, n, a: math.inf if n is None else None,
    "statdp.isvt3": lambda e, n, a: (1 + 6 * int(a.get("N", 1))) / 4 * e,
    "statdp.isvt4": lambda e, n, a: math.inf if n is None else None,
}
