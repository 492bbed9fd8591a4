"""The DP-Finder benchmarks: Bichsel et al., *DP-Finder: Finding Differential Privacy
Violations by Sampling and Optimization* (CCS 2018), Section 6.2.

AboveThreshold (Fig. 2) and its variants AT1-AT5 (Algorithms 1-5 of Lyu et al., *Understanding
the Sparse Vector Technique*, as instantiated by DP-Finder: threshold T = 0, c = 1), noisyMax
(Fig. 10b), expMech, and sum. The target bound is eps = 0.1, so the Laplace scale 2/eps is
20 (Sec. 2); arrays have 4 entries and neighbors differ entry-wise by at most 1
(Neigh<=1), except sum, whose neighbors add one entry.

AT1-AT4 report only the first ``c`` entries above the threshold; as in DP-Finder, later
entries read 0 (so every output lies in {0, 1}^4; AT3 reads -10 below the threshold).
Every comparison and selection goes through :mod:`privet.ops`, so the ``Relaxed``
interpreter of :mod:`privet.search` yields the smooth surrogate of Fig. 8 unchanged.

``true_epsilon`` holds the known upper bounds DP-Finder lists (Sec. 6.2): AT 0.45, AT1 and
AT2 0.1, AT3 0.2, AT4 0.175, AT5 infinity, noisyMax and expMech 0.1; sum 0.1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..core import ops
from ..core.mechanism import Domain, Output, mechanism
from ..core.neighbors import add_remove, all_differ
from ._common import halt_after, lyu_alg3, positive_int, row

EPSILON = 0.1
SIZE = 4
PAPER = "DP-Finder (Bichsel et al., CCS 2018)"
ARRAY = Domain(length=SIZE)
T_RANGE = (-20.0, 20.0)
C_RANGE = [1, 2, 3, 4]
BITS = Output.categorical((0, 1), length=SIZE)
BOTTOM = -10.0  # AT3's output below the threshold (Fig. 10a)


def _above_first_c(noise, x, rho_scale: float, nu_scale: float | None, T: float, c: int):
    """Shared body of AT1/AT4: 1 for the first ``c`` entries with x[i] + nu[i] >= T + rho."""
    rho = noise.laplace(rho_scale)
    noisy = x + noise.laplace(nu_scale, x.shape) if nu_scale is not None else x
    above = ops.ge(noisy, row(T + rho))
    return ops.where(halt_after(above, c), above, 0)


@mechanism(name="dpfinder.above_threshold", epsilon=EPSILON, neighbors=all_differ(1),
           domain=ARRAY, output=BITS, arg_ranges={"T": T_RANGE}, true_epsilon=0.45,
           source=f"{PAPER}, Fig. 2")
def above_threshold(noise, x, *, epsilon, T=0.0):
    """AboveThreshold (AT): y[i] = [x[i] + Lap(2/eps) >= T + Lap(2/eps)] for every entry."""
    rho = noise.laplace(2.0 / epsilon)
    nu = noise.laplace(2.0 / epsilon, x.shape)
    return ops.ge(x + nu, row(T + rho))


@mechanism(name="dpfinder.at1", epsilon=EPSILON, neighbors=all_differ(1), domain=ARRAY,
           output=BITS, arg_ranges={"T": T_RANGE, "c": C_RANGE}, noise_args=("c",),
           true_epsilon=0.1, source=f"{PAPER}, Sec. 6.2 (Lyu et al., Alg. 1)")
def at1(noise, x, *, epsilon, T=0.0, c=1):
    """AT1: eps1 = eps/2, rho ~ Lap(1/eps1), nu ~ Lap(2c/eps2); the first c entries above."""
    c = positive_int("c", c)
    eps1 = epsilon / 2
    eps2 = epsilon - eps1
    return _above_first_c(noise, x, 1.0 / eps1, 2.0 * c / eps2, T, c)


@mechanism(name="dpfinder.at2", epsilon=EPSILON, neighbors=all_differ(1), domain=ARRAY,
           output=BITS, arg_ranges={"T": T_RANGE, "c": C_RANGE}, noise_args=("c",),
           true_epsilon=0.1, source=f"{PAPER}, Sec. 6.2 (Lyu et al., Alg. 2)")
def at2(noise, x, *, epsilon, T=0.0, c=1):
    """AT2: like AT1 with rho ~ Lap(c/eps1), and rho drawn afresh after every entry above.

    The fresh threshold noise after a True at entry i is drawn up front for every entry
    (one Lap(c/eps1) per entry, used only where a True occurs): the same distribution,
    with draws that do not depend on the input, as Replay and Enumerate need.
    """
    c = positive_int("c", c)
    eps1 = epsilon / 2
    eps2 = epsilon - eps1
    rho = noise.laplace(c / eps1)
    fresh = noise.laplace(c / eps1, x.shape)
    nu = noise.laplace(2.0 * c / eps2, x.shape)
    threshold = T + rho
    count = 0
    out = []
    for i in range(x.shape[-1]):
        above = ops.ge(x[i] + nu[:, i], threshold)
        live = ops.lt(count, c - 0.5)  # integer count; see _common.halt_after
        out.append(ops.where(live, above, 0))
        hit = ops.logical_and(live, above)
        count = count + hit
        threshold = ops.where(hit, T + fresh[:, i], threshold)
    return _stack(out, noise.size)


@mechanism(name="dpfinder.at3", epsilon=EPSILON, neighbors=all_differ(1), domain=ARRAY,
           output=Output.numeric(length=SIZE), arg_ranges={"T": T_RANGE, "c": C_RANGE},
           noise_args=("c",), true_epsilon=0.2,
           source=f"{PAPER}, Fig. 10a (Lyu et al., Alg. 3)")
def at3(noise, x, *, epsilon, T=0.0, c=1):
    """AT3: releases the noisy entry x[i] + nu[i] when above (nu ~ Lap(c/eps2)), else -10."""
    c = positive_int("c", c)
    noisy, above = lyu_alg3(noise, x, epsilon, T, c)
    return ops.where(ops.logical_and(halt_after(above, c), above), noisy, BOTTOM)


@mechanism(name="dpfinder.at4", epsilon=EPSILON, neighbors=all_differ(1), domain=ARRAY,
           output=BITS, arg_ranges={"T": T_RANGE, "c": C_RANGE}, true_epsilon=0.175,
           source=f"{PAPER}, Sec. 6.2 (Lyu et al., Alg. 4)")
def at4(noise, x, *, epsilon, T=0.0, c=1):
    """AT4: eps1 = eps/4, rho ~ Lap(1/eps1), nu ~ Lap(1/eps2); ((1+6c)/4)*eps-DP."""
    c = positive_int("c", c)
    eps1 = epsilon / 4
    eps2 = epsilon - eps1
    return _above_first_c(noise, x, 1.0 / eps1, 1.0 / eps2, T, c)


@mechanism(name="dpfinder.at5", epsilon=EPSILON, neighbors=all_differ(1), domain=ARRAY,
           output=BITS, arg_ranges={"T": T_RANGE}, true_epsilon=math.inf,
           source=f"{PAPER}, Sec. 6.2 (Lyu et al., Alg. 5)")
def at5(noise, x, *, epsilon, T=0.0):
    """AT5: no noise on the entries, every entry reported (not private for any eps)."""
    eps1 = epsilon / 2
    rho = noise.laplace(1.0 / eps1)
    return ops.ge(x, row(T + rho))


@mechanism(name="dpfinder.noisy_max", epsilon=EPSILON, neighbors=all_differ(1), domain=ARRAY,
           output=Output.categorical(range(SIZE)), true_epsilon=0.1,
           source=f"{PAPER}, Fig. 10b")
def noisy_max(noise, x, *, epsilon):
    """noisyMax: index of the largest x[i] + Lap(2/eps) (the first one on ties)."""
    return ops.argmax(x + noise.laplace(2.0 / epsilon, x.shape), axis=-1)


@mechanism(name="dpfinder.exp_mech", epsilon=EPSILON, neighbors=all_differ(1), domain=ARRAY,
           output=Output.categorical(range(SIZE)), true_epsilon=0.1,
           source=f"{PAPER}, Sec. 6.2 (expMech)")
def exp_mech(noise, x, *, epsilon):
    """expMech: noisyMax with Exponential noise of mean 2/eps (rate eps/2)."""
    return ops.argmax(x + noise.exponential(2.0 / epsilon, x.shape), axis=-1)


@mechanism(name="dpfinder.sum", epsilon=EPSILON, neighbors=add_remove(),
           domain=Domain(low=-1.0, high=1.0), output=Output.numeric(), true_epsilon=0.1,
           source=f"{PAPER}, Sec. 6.2 (sum)")
def sum_(noise, x, *, epsilon):
    """sum: the sum of entries in [-1, 1] plus Lap(1/eps); neighbors add one entry."""
    return x.sum() + noise.laplace(1.0 / epsilon)


def _stack(columns: list, size: int):
    if not columns:
        return np.zeros((size, 0))
    return np.stack([np.broadcast_to(c, (size,)) for c in columns], axis=-1)


MECHANISMS = (above_threshold, at1, at2, at3, at4, at5, noisy_max, exp_mech, sum_)

PER_QUERY = frozenset({"dpfinder.above_threshold", "dpfinder.at1", "dpfinder.at2",
                       "dpfinder.at3", "dpfinder.at4", "dpfinder.at5"})

EXAMPLES: dict[str, list[float]] = {m.name: [0.0, 0.0, 0.0, 0.0] for m in MECHANISMS}
EXAMPLES["dpfinder.sum"] = [0.5, -0.5, 1.0, 0.0]

KNOWN: dict[str, Callable[[float, int | None, Mapping[str, Any]], float | None]] = {
    # AT: eps1 + (2/scale) per entry: eps/2 + 2 * k * eps/2 for k = 4 entries
    "dpfinder.above_threshold": lambda e, n, a: e / 2 + e * (SIZE if n is None else n),
    "dpfinder.at1": lambda e, n, a: e,
    "dpfinder.at2": lambda e, n, a: e,
    "dpfinder.at3": lambda e, n, a: 2 * e if int(a.get("c", 1)) == 1 else None,
    "dpfinder.at4": lambda e, n, a: (1 + 6 * int(a.get("c", 1))) / 4 * e,
    "dpfinder.at5": lambda e, n, a: math.inf,
    "dpfinder.noisy_max": lambda e, n, a: e,
    "dpfinder.exp_mech": lambda e, n, a: e,
    "dpfinder.sum": lambda e, n, a: e,
}
